// The reference gateway's ticket lifecycle, business codes and limits, against the real server on
// loopback with each store (SQLite file, memory, MariaDB) and an injected ManualClock (promote ticks
// run on demand).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  AvailabilityResponseSchema,
  ClientConfigsResponseSchema,
  GatewayErrorSchema,
  GatewayPaths,
  SettleResponseSchema,
  StatusResponseSchema,
  TakeResponseSchema,
} from '../../src/protocol/gateway';
import { ManualClock } from '../../src/core/clock';
import {
  errorOf,
  GATEWAY_TEST_STORES,
  gatewaySuite,
  longPollsWaiting,
  PEAK_SHANGHAI,
  startTestGateway,
  storeLabel,
  ticketIdOf,
  useGatewayStore,
} from './gateway-helpers';

const HOUR = 3_600_000;

for (const kind of GATEWAY_TEST_STORES)
  describe(`reference gateway: tickets, codes and limits (real server, ${storeLabel(kind)})`, () => {
    useGatewayStore(kind);
    const suite = gatewaySuite();
    const start = (overrides = {}, startAt?: number) =>
      suite.start(overrides, startAt === undefined ? undefined : new ManualClock(startAt));

    describe('client configs and availability', () => {
      it('configs: exposure, allowed models, and plan eligibility with an upgrade hint', async () => {
        const g = await start({ upgradeUrl: 'https://example.test/upgrade' });
        const alice = ClientConfigsResponseSchema.parse((await g.alice.configs()).body);
        assert.equal(alice.exposure.enabled, true);
        assert.equal(alice.plan.eligible, true);
        assert.equal(alice.plan.upgrade_hint, null);
        assert.ok(alice.allowed_models.length > 0);
        assert.equal(alice.server_time, g.clock.now());
        const frank = ClientConfigsResponseSchema.parse((await g.frank.configs()).body);
        assert.equal(frank.plan.eligible, false);
        assert.match(frank.plan.upgrade_hint ?? '', /upgrade/i);
        assert.equal(frank.plan.upgrade_url, 'https://example.test/upgrade');
      });

      it('exposure off: configs say so and take is refused with 3101', async () => {
        const g = await start({ exposure: false });
        assert.equal(ClientConfigsResponseSchema.parse((await g.alice.configs()).body).exposure.enabled, false);
        const take = await g.alice.take('task-1');
        assert.equal(take.status, 403);
        assert.equal(errorOf(take).code, '3101');
        const availability = AvailabilityResponseSchema.parse((await g.alice.availability()).body);
        assert.deepEqual([availability.can_take, availability.reason], [false, 'disabled']);
      });

      it('a plan that is not eligible gets 3101 on take and can_take=false', async () => {
        const g = await start();
        const take = await g.frank.take('task-1');
        assert.equal(take.status, 403);
        const error = GatewayErrorSchema.parse(take.body);
        assert.equal(error.error.code, '3101');
        assert.equal(error.error.type, 'permission_error');
        assert.equal(error.server_time, g.clock.now());
        const availability = AvailabilityResponseSchema.parse((await g.frank.availability()).body);
        assert.deepEqual([availability.can_take, availability.can_take_number, availability.reason], [false, 0, 'not_eligible']);
      });

      it('availability counts down with takes: can_take_number is min(quota left, live room)', async () => {
        const g = await start({ takesPerWindow: 5, maxLiveTicketsPerUser: 3 });
        assert.equal(AvailabilityResponseSchema.parse((await g.alice.availability()).body).can_take_number, 3);
        ticketIdOf(await g.alice.take('a'));
        ticketIdOf(await g.alice.take('b'));
        const after = AvailabilityResponseSchema.parse((await g.alice.availability()).body);
        assert.deepEqual([after.can_take, after.can_take_number, after.next_take_at], [true, 1, null]);
      });
    });

    describe('take', () => {
      it('answers queued with a FIFO position, and is retry-safe for a task_id with a live ticket', async () => {
        const g = await start();
        const first = TakeResponseSchema.parse((await g.alice.take('task-A')).body);
        const second = TakeResponseSchema.parse((await g.bob.take('task-B')).body);
        assert.deepEqual([first.state, first.position, first.reused], ['queued', 1, false]);
        assert.equal(second.position, 2);
        assert.ok(first.next_poll_after_ms > 0);
        const again = TakeResponseSchema.parse((await g.alice.take('task-A')).body);
        assert.equal(again.ticket_id, first.ticket_id);
        assert.equal(again.reused, true);
        // The same task id of ANOTHER user is another task.
        const bobsA = TakeResponseSchema.parse((await g.bob.take('task-A')).body);
        assert.notEqual(bobsA.ticket_id, first.ticket_id);
        // Still live after promotion: the same ticket comes back, now ready.
        await g.gateway.tick();
        const readyAgain = TakeResponseSchema.parse((await g.alice.take('task-A')).body);
        assert.deepEqual([readyAgain.ticket_id, readyAgain.state, readyAgain.position], [first.ticket_id, 'ready', null]);
        assert.ok(readyAgain.ready_deadline !== null && readyAgain.ready_deadline > g.clock.now());
      });

      it('a task whose ticket expired or was settled gets a NEW ticket on take', async () => {
        const g = await start({ readyTtlMs: 1000 });
        const first = ticketIdOf(await g.alice.take('task-A'));
        await g.gateway.tick();
        g.clock.advance(1000);
        await g.gateway.tick();
        assert.equal((await g.alice.stateOf(first)).state, 'expired');
        const second = TakeResponseSchema.parse((await g.alice.take('task-A')).body);
        assert.notEqual(second.ticket_id, first);
        assert.equal(second.reused, false);
        await g.alice.settle(second.ticket_id, 'segment_end');
        const third = ticketIdOf(await g.alice.take('task-A'));
        assert.ok(third !== first && third !== second.ticket_id);
      });

      it('rejects a malformed body with 400 invalid_request in the one error shape', async () => {
        const g = await start();
        for (const body of ['{}', '{"task_id":""}', 'not json', '']) {
          const answer = await g.alice.request('POST', GatewayPaths.take, body);
          assert.equal(answer.status, 400, `body ${body}`);
          const parsed = GatewayErrorSchema.parse(answer.body);
          assert.equal(parsed.error.code, 'invalid_request');
          assert.equal(typeof parsed.server_time, 'number');
        }
      });
    });

    describe('promote timer: queued -> ready', () => {
      it('FIFO order under 50 concurrent takes', async () => {
        const g = await start({ segmentCapacity: 7, maxLiveTicketsPerUser: 50, takesPerWindow: 100 });
        const users = [g.alice, g.bob];
        const takes = await Promise.all(Array.from({ length: 50 }, (_, i) => users[i % 2].take(`task-${i}`)));
        const tickets = takes.map((answer, i) => ({ ...TakeResponseSchema.parse(answer.body), client: users[i % 2] }));
        const positions = tickets.map((x) => x.position).sort((a, b) => (a ?? 0) - (b ?? 0));
        assert.deepEqual(
          positions,
          Array.from({ length: 50 }, (_, i) => i + 1),
          'positions are exactly 1..50',
        );
        const byPosition = [...tickets].sort((a, b) => (a.position ?? 0) - (b.position ?? 0)).map((x) => x.ticket_id);

        const promotedOrder: string[] = [];
        while (promotedOrder.length < 50) {
          const { promoted } = await g.gateway.tick();
          assert.ok(promoted.length > 0, 'a tick with room and a queue promotes');
          promotedOrder.push(...promoted);
          for (const id of promoted) {
            const owner = tickets.find((x) => x.ticket_id === id)?.client;
            assert.equal((await owner?.settle(id))?.status, 200);
          }
        }
        assert.deepEqual(promotedOrder, byPosition, 'promoted strictly in take order');
      });

      it('capacity never exceeded: ready + active stays within the segment capacity', async () => {
        const g = await start({ segmentCapacity: 3, maxLiveTicketsPerUser: 20, readyTtlMs: 5000, activeWindowMs: 20_000 });
        const ids: string[] = [];
        for (let i = 0; i < 14; i++) ids.push(ticketIdOf(await g.alice.take(`task-${i}`)));
        // A deterministic mix of admissions, settles, expiries and ticks.
        let seed = 7;
        const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
        for (let round = 0; round < 40; round++) {
          await g.gateway.tick();
          const states = (await g.alice.status(ids)).body.tickets;
          const holding = states.filter((s) => s.state === 'ready' || s.state === 'active');
          const queued = states.filter((s) => s.state === 'queued');
          assert.ok(holding.length <= 3, `round ${round}: ${holding.length} ready/active > capacity 3`);
          if (queued.length > 0) assert.equal(holding.length, 3, `round ${round}: capacity unused while tickets wait`);
          for (const s of holding) {
            const roll = random();
            if (roll < 0.3) await g.alice.message(s.ticket_id as string);
            else if (roll < 0.45) await g.alice.settle(s.ticket_id as string);
          }
          g.clock.advance(Math.floor(random() * 4000));
        }
        const promoted = g.gateway.metrics.count.promotions.get();
        assert.ok(promoted >= 10, `the mix exercised promotion (${promoted})`);
      });

      it('status calls never promote; only the tick does', async () => {
        const g = await start();
        const id = ticketIdOf(await g.alice.take('task-A'));
        for (let i = 0; i < 3; i++) assert.equal((await g.alice.stateOf(id)).state, 'queued');
        await g.gateway.tick();
        assert.equal((await g.alice.stateOf(id)).state, 'ready');
      });

      it('windows closed -> nothing promoted; promotion resumes when the window opens', async () => {
        const g = await start({}, PEAK_SHANGHAI); // 15:00 in Asia/Shanghai: inside the 14:00–18:00 peak
        const id = ticketIdOf(await g.alice.take('task-A'));
        assert.deepEqual((await g.gateway.tick()).promoted, []);
        const queued = (await g.alice.status([id])).body;
        assert.equal(queued.tickets[0].state, 'queued');
        // The poll hint points at the window opening (18:00 = 3 h away, capped at maxPollMs 5 min).
        assert.equal(queued.tickets[0].next_poll_after_ms, 300_000);
        // A model request with a queued ticket is not admitted: 3105 with Retry-After.
        const early = await g.alice.message(id);
        assert.equal(early.status, 429);
        assert.equal(errorOf(early).code, '3105');
        assert.equal(early.headers.get('retry-after'), '300');
        g.clock.advance(3 * HOUR - 60_000); // 17:59
        assert.deepEqual((await g.gateway.tick()).promoted, []);
        g.clock.advance(60_000); // 18:00
        assert.deepEqual((await g.gateway.tick()).promoted, [id]);
      });

      it('says when the window opens: window_opens_at in availability and queued status while closed, gone once open', async () => {
        const g = await start({}, PEAK_SHANGHAI); // 15:00 in Asia/Shanghai: inside the 14:00–18:00 peak
        const opensAt = PEAK_SHANGHAI + 3 * HOUR; // 18:00 Shanghai
        const closed = AvailabilityResponseSchema.parse((await g.alice.availability()).body);
        assert.equal(closed.window_opens_at, opensAt);
        assert.equal(closed.can_take, true, 'a closed window does not stop a take: the ticket queues');
        const id = ticketIdOf(await g.alice.take('task-A'));
        const entry = StatusResponseSchema.parse((await g.alice.status([id])).body).tickets[0];
        assert.equal(entry.state, 'queued');
        assert.equal(entry.state === 'queued' ? entry.window_opens_at : 'not queued', opensAt);
        g.clock.advance(3 * HOUR - 60_000); // 17:59: the same opening
        assert.equal((await g.alice.stateOf(id)).window_opens_at, opensAt);
        g.clock.advance(60_000); // 18:00: open
        const open = (await g.alice.availability()).body;
        assert.equal('window_opens_at' in open, false, 'not sent while open');
        assert.equal('window_opens_at' in (await g.alice.stateOf(id)), false, 'queued, but the window is open');
        assert.deepEqual((await g.gateway.tick()).promoted, [id]);
      });

      it('windowsClosed: window_opens_at is null (no opening scheduled)', async () => {
        const g = await start({ windowsClosed: true });
        assert.equal((await g.alice.availability()).body.window_opens_at, null);
        const id = ticketIdOf(await g.alice.take('task-A'));
        assert.equal((await g.alice.stateOf(id)).window_opens_at, null);
      });

      it('windowsClosed (never open) promotes nothing at any hour', async () => {
        const g = await start({ windowsClosed: true });
        const id = ticketIdOf(await g.alice.take('task-A'));
        for (let h = 0; h < 24; h++) {
          assert.deepEqual((await g.gateway.tick()).promoted, []);
          g.clock.advance(HOUR);
        }
        assert.equal((await g.alice.stateOf(id)).state, 'queued');
      });
    });

    describe('ready and active lifecycle', () => {
      it('demo pacing: a ticket stays queued for queueHoldMs, and its model requests get 3105 for admissionHoldMs from its first one', async () => {
        const g = await start({ queueHoldMs: 15_000, admissionHoldMs: 10_000 });
        const id = ticketIdOf(await g.alice.take('task-A'));
        g.clock.advance(14_999);
        assert.deepEqual((await g.gateway.tick()).promoted, []);
        g.clock.advance(1);
        assert.deepEqual((await g.gateway.tick()).promoted, [id]);
        g.clock.advance(60_000); // the agent took a minute to start: the hold still applies, from its first request
        const held = await g.alice.message(id);
        assert.equal(held.status, 429);
        assert.equal(errorOf(held).code, '3105');
        assert.equal(held.headers.get('retry-after'), '10');
        assert.equal((await g.alice.stateOf(id)).state, 'ready', 'a held request does not start the active window');
        g.clock.advance(9_000);
        assert.equal((await g.alice.message(id)).headers.get('retry-after'), '1', 'counted from the first request, not the latest');
        g.clock.advance(1_000);
        assert.equal((await g.alice.message(id)).status, 200);
        assert.equal((await g.alice.stateOf(id)).state, 'active');
      });

      it('ready -> expired after its TTL unused, and the freed capacity goes to the next in line', async () => {
        const g = await start({ segmentCapacity: 1, readyTtlMs: 60_000 });
        const first = ticketIdOf(await g.alice.take('task-A'));
        const second = ticketIdOf(await g.bob.take('task-B'));
        await g.gateway.tick();
        const ready = await g.alice.stateOf(first);
        assert.equal(ready.state, 'ready');
        assert.equal(ready.ready_deadline, g.clock.now() + 60_000);
        g.clock.advance(59_999);
        await g.gateway.tick();
        assert.equal((await g.alice.stateOf(first)).state, 'ready');
        assert.equal((await g.bob.stateOf(second)).state, 'queued');
        g.clock.advance(1);
        // Reads reflect the deadline at once, before the timer persists it.
        const expired = await g.alice.stateOf(first);
        assert.deepEqual([expired.state, expired.expired_from, expired.expired_at], ['expired', 'ready', g.clock.now()]);
        await g.gateway.tick();
        assert.equal((await g.bob.stateOf(second)).state, 'ready');
        const late = await g.alice.message(first);
        assert.equal(late.status, 400);
        assert.equal(errorOf(late).code, '3102');
      });

      it('ready -> active on the first admitted model request; active -> expired at the end of the 3 h window', async () => {
        const g = await start(); // default activeWindowMs = 3 h
        const id = ticketIdOf(await g.alice.take('task-A'));
        await g.gateway.tick();
        const activatedAt = g.clock.now() + 5000;
        g.clock.set(activatedAt);
        const first = await g.alice.message(id);
        assert.equal(first.status, 200);
        assert.ok(first.headers.get('x-off-peak-server-time'));
        const active = await g.alice.stateOf(id);
        assert.deepEqual([active.state, active.active_at, active.active_until], ['active', activatedAt, activatedAt + 3 * HOUR]);
        // The active window is not extended by later requests, and the ready TTL no longer applies.
        g.clock.advance(3 * HOUR - 1);
        assert.equal((await g.alice.message(id)).status, 200);
        assert.equal((await g.alice.stateOf(id)).active_until, activatedAt + 3 * HOUR);
        g.clock.advance(1);
        const over = await g.alice.message(id);
        assert.equal(over.status, 400);
        assert.equal(errorOf(over).code, '3102');
        const expired = await g.alice.stateOf(id);
        assert.deepEqual([expired.state, expired.expired_from, expired.expired_at], ['expired', 'active', activatedAt + 3 * HOUR]);
        assert.equal(suite.upstream.messageRequests().length, 2, 'the refused request never reached upstream');
      });

      it('settle: queued, ready, active and expired tickets all settle; settling twice answers the same', async () => {
        const g = await start({ segmentCapacity: 2, readyTtlMs: 1000 });
        const active = ticketIdOf(await g.alice.take('q'));
        const ready = ticketIdOf(await g.alice.take('r'));
        // Capacity 2: the first two become ready; one turns active; later takes stay queued.
        await g.gateway.tick();
        assert.equal((await g.alice.message(active)).status, 200);
        const queued = ticketIdOf(await g.alice.take('q2'));
        const expiring = ticketIdOf(await g.bob.take('e'));
        assert.equal((await g.alice.stateOf(queued)).state, 'queued');
        const expectations: [string, string, 'alice' | 'bob'][] = [
          [queued, 'queued', 'alice'],
          [ready, 'ready', 'alice'],
          [active, 'active', 'alice'],
        ];
        for (const [id, from, who] of expectations) {
          const first = SettleResponseSchema.parse((await g[who].settle(id, 'completed')).body);
          assert.deepEqual([first.state, first.settled_from, first.reason], ['settled', from, 'completed']);
          g.clock.advance(10);
          const second = SettleResponseSchema.parse((await g[who].settle(id, 'failed')).body);
          assert.deepEqual({ ...second, server_time: 0 }, { ...first, server_time: 0 }, 'twice = same answer');
          const status = await g[who].stateOf(id);
          assert.deepEqual([status.state, status.reason, status.settled_at], ['settled', 'completed', first.settled_at]);
        }
        await g.gateway.tick();
        g.clock.advance(1000);
        await g.gateway.tick();
        assert.equal((await g.bob.stateOf(expiring)).state, 'expired');
        const settledExpired = SettleResponseSchema.parse((await g.bob.settle(expiring, 'segment_end')).body);
        assert.equal(settledExpired.settled_from, 'expired');
        // A settled ticket admits nothing.
        const after = await g.alice.message(active);
        assert.equal(after.status, 400);
        assert.equal(errorOf(after).code, '3102');
      });

      it("settle of an unknown or another user's ticket is 404 not_found", async () => {
        const g = await start();
        const id = ticketIdOf(await g.alice.take('task-A'));
        const foreign = await g.bob.settle(id);
        assert.equal(foreign.status, 404);
        assert.equal(errorOf(foreign).code, 'not_found');
        assert.equal((await g.bob.settle('tkt_nope')).status, 404);
        assert.equal((await g.alice.stateOf(id)).state, 'queued', "bob's attempt changed nothing");
        const bad = await g.alice.request('POST', GatewayPaths.settle(id), { reason: 'because' });
        assert.equal(bad.status, 400);
      });
    });

    describe('status', () => {
      it('101 ids are rejected (and zero); 100 are answered in request order', async () => {
        const g = await start();
        const id = ticketIdOf(await g.alice.take('task-A'));
        const hundred = Array.from({ length: 100 }, (_, i) => (i === 57 ? id : `tkt_unknown_${i}`));
        const ok = await g.alice.status(hundred);
        assert.equal(ok.status, 200);
        const parsed = StatusResponseSchema.parse(ok.body);
        assert.equal(parsed.tickets.length, 100);
        assert.equal(parsed.tickets[57].state, 'queued');
        assert.equal(parsed.tickets[3].state, 'not_found');
        const tooMany = await g.alice.status([...hundred, 'one-more']);
        assert.equal(tooMany.status, 400);
        assert.equal(errorOf(tooMany).code, 'invalid_request');
        assert.equal((await g.alice.status([])).status, 400);
      });

      it("unknown and another user's tickets are not_found", async () => {
        const g = await start();
        const alices = ticketIdOf(await g.alice.take('task-A'));
        const answer = StatusResponseSchema.parse((await g.bob.status([alices, 'tkt_does_not_exist'])).body);
        assert.deepEqual(
          answer.tickets.map((x) => x.state),
          ['not_found', 'not_found'],
        );
        assert.equal(answer.next_poll_after_ms, null, 'nothing to poll for');
        // And a model request with a foreign ticket is 3102, not admitted.
        await g.gateway.tick();
        const foreign = await g.bob.message(alices);
        assert.equal(foreign.status, 400);
        assert.equal(errorOf(foreign).code, '3102');
        assert.equal((await g.alice.stateOf(alices)).state, 'ready', 'not activated by a foreign request');
      });

      it('long-poll answers as soon as one of the tickets changes', async function () {
        this.timeout(20_000); // wait_ms is 60 s: only an answer on change can beat this timeout
        const g = await start({ statusMaxWaitMs: 60_000 });
        const a = ticketIdOf(await g.alice.take('task-A'));
        const b = ticketIdOf(await g.alice.take('task-B'));
        const polling = g.alice.status([a, b], 60_000);
        await longPollsWaiting(g.gateway);
        await g.gateway.tick();
        const answer = StatusResponseSchema.parse((await polling).body);
        assert.deepEqual(
          answer.tickets.map((x) => x.state),
          ['ready', 'ready'],
        );
      });

      it('long-poll answers at once when a ticket already left the state the client knows (known_states)', async function () {
        this.timeout(20_000); // wait_ms is 60 s: only an immediate answer beats this timeout
        const g = await start({ statusMaxWaitMs: 60_000 });
        const a = ticketIdOf(await g.alice.take('task-A'));
        await g.gateway.tick(); // promoted BEFORE the poll: the client still believes "queued"
        const answer = await g.alice.status([a], 60_000, { [a]: 'queued' });
        assert.equal(answer.status, 200);
        assert.equal(answer.body.tickets[0].state, 'ready');
        // Knowing the current state, the poll waits again (answers at its timeout).
        const waited = await g.alice.status([a], 300, { [a]: 'ready' });
        assert.equal(waited.body.tickets[0].state, 'ready');
      });

      it('long-poll answers at the timeout when nothing changes', async () => {
        const g = await start();
        const a = ticketIdOf(await g.alice.take('task-A'));
        const answer = await g.alice.status([a], 300);
        assert.equal(answer.status, 200);
        assert.equal(answer.body.tickets[0].state, 'queued');
        assert.equal(answer.body.tickets[0].position, 1);
      });

      it('shutdown answers pending long-polls at once, then stops listening', async function () {
        this.timeout(20_000);
        const g = await start({ statusMaxWaitMs: 60_000 });
        const a = ticketIdOf(await g.alice.take('task-A'));
        const url = g.gateway.url;
        const polling = g.alice.status([a], 60_000);
        await longPollsWaiting(g.gateway);
        const closing = g.gateway.close(5000);
        const answer = await polling;
        assert.equal(answer.status, 200);
        assert.equal(answer.body.tickets[0].state, 'queued');
        await closing;
        suite.current = undefined;
        await assert.rejects(fetch(url + GatewayPaths.healthz), 'no longer listening');
      });

      it('a long-poll ignores changes to tickets it does not watch and answers on the first change to its own', async function () {
        this.timeout(20_000);
        const g = await start({ segmentCapacity: 1, statusMaxWaitMs: 60_000 });
        const mine = ticketIdOf(await g.alice.take('task-A'));
        const other = ticketIdOf(await g.bob.take('task-B'));
        await g.gateway.tick(); // alice's ticket is ready and holds the only slot
        const polling = g.bob.status([other], 60_000);
        await longPollsWaiting(g.gateway);
        assert.equal((await g.alice.message(mine)).status, 200); // alice's ticket: ready -> active (not bob's)
        assert.equal(g.gateway.pendingLongPolls, 1, "bob's poll is still waiting");
        await g.alice.settle(mine); // frees the slot ...
        await g.gateway.tick(); // ... and bob's ticket is promoted: the first change to what bob watches
        const answer = await polling;
        // Had the poll answered on alice's changes, bob's ticket would still read queued.
        assert.equal(answer.body.tickets[0].state, 'ready');
      });
    });

    describe('limits', () => {
      it('per-user quota over a rolling window: 3103 with next_take_at, then takes again when it rolls', async () => {
        const g = await start({ takesPerWindow: 3, quotaWindowMs: 10 * 60_000 });
        const t0 = g.clock.now();
        for (let i = 0; i < 3; i++) {
          ticketIdOf(await g.alice.take(`task-${i}`));
          await g.alice.settle(ticketIdOf(await g.alice.take(`task-${i}`)), 'completed');
          g.clock.advance(60_000);
        }
        const refused = await g.alice.take('task-3');
        assert.equal(refused.status, 429);
        const error = errorOf(refused);
        assert.equal(error.code, '3103');
        assert.equal(error.next_take_at, t0 + 10 * 60_000);
        assert.ok(refused.headers.get('retry-after'));
        const availability = AvailabilityResponseSchema.parse((await g.alice.availability()).body);
        assert.deepEqual([availability.can_take, availability.next_take_at, availability.reason], [false, t0 + 10 * 60_000, 'quota']);
        // Bob's quota is his own.
        assert.equal((await g.bob.take('task-x')).status, 200);
        g.clock.set(t0 + 10 * 60_000);
        assert.equal((await g.alice.take('task-3')).status, 200);
      });

      it('per-user live-ticket limit: 3103 until one of the live tickets ends', async () => {
        const g = await start({ maxLiveTicketsPerUser: 2 });
        const a = ticketIdOf(await g.alice.take('a'));
        ticketIdOf(await g.alice.take('b'));
        const refused = await g.alice.take('c');
        assert.equal(refused.status, 429);
        assert.equal(errorOf(refused).code, '3103');
        assert.equal(errorOf(refused).next_take_at, null, 'queued tickets have no known end');
        // A retried take of a task that HAS a live ticket is not a new take: still answered.
        assert.equal((await g.alice.take('a')).status, 200);
        await g.alice.settle(a);
        assert.equal((await g.alice.take('c')).status, 200);
      });

      it('model-request concurrency: no capacity now -> 429 3105 with Retry-After; admitted again when it frees', async () => {
        const g = await start({ maxConcurrentModelRequests: 1, busyRetryAfterMs: 2000 });
        const id = ticketIdOf(await g.alice.take('task-A'));
        await g.gateway.tick();
        suite.upstream.enqueue({ kind: 'hang' }); // holds the only model slot until we hang up
        const controller = new AbortController();
        const holding = await fetch(`${g.gateway.url}${GatewayPaths.anthropicMessages}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${g.alice.key}`, 'x-off-peak-ticket-id': id },
          body: JSON.stringify({ model: 'm', stream: true, messages: [] }),
          signal: controller.signal,
        });
        assert.equal(holding.status, 200);
        const busy = await g.alice.message(id);
        assert.equal(busy.status, 429);
        assert.equal(errorOf(busy).code, '3105');
        assert.equal(busy.headers.get('retry-after'), '2');
        controller.abort();
        for (let i = 0; i < 500 && g.gateway.authority.modelRequestsInFlight > 0; i++) await new Promise((r) => setTimeout(r, 10));
        assert.equal((await g.alice.message(id)).status, 200);
      });

      it('request body size limit: 413 request_too_large', async () => {
        const g = await start({ maxJsonBodyBytes: 1024 });
        const answer = await g.alice.request('POST', GatewayPaths.take, { task_id: 'x'.repeat(150), pad: 'y'.repeat(2000) });
        assert.equal(answer.status, 413);
        assert.equal(errorOf(answer).code, 'request_too_large');
      });
    });

    describe('the rest of the surface', () => {
      it('missing or unknown API key: 401 in the one error shape', async () => {
        const g = await start();
        const none = await fetch(g.gateway.url + GatewayPaths.availability);
        assert.equal(none.status, 401);
        assert.equal(GatewayErrorSchema.parse(await none.json()).error.type, 'authentication_error');
        const wrong = await fetch(g.gateway.url + GatewayPaths.availability, { headers: { authorization: 'Bearer nope-nope-nope' } });
        assert.equal(wrong.status, 401);
        const model = await fetch(g.gateway.url + GatewayPaths.anthropicMessages, { method: 'POST', body: '{}' });
        assert.equal(model.status, 401);
      });

      it('keys may be configured as SHA-256 hashes, and x-api-key works like Bearer', async () => {
        const hash = createHash('sha256').update('dana-secret-key-42').digest('hex');
        const g = await start({ users: [{ id: 'dana', apiKeySha256: hash, plan: 'coding' }] });
        const bearer = await fetch(g.gateway.url + GatewayPaths.availability, { headers: { authorization: 'Bearer dana-secret-key-42' } });
        assert.equal(bearer.status, 200);
        const apiKey = await fetch(g.gateway.url + GatewayPaths.availability, { headers: { 'x-api-key': 'dana-secret-key-42' } });
        assert.equal(apiKey.status, 200);
        const wrong = await fetch(g.gateway.url + GatewayPaths.availability, { headers: { authorization: `Bearer ${hash}` } });
        assert.equal(wrong.status, 401, 'the hash itself is not a key');
      });

      it('unknown route is 404 and a wrong method 405, both in the one error shape', async () => {
        const g = await start();
        const missing = await g.alice.request('GET', '/api/v1/nothing');
        assert.equal(missing.status, 404);
        assert.equal(GatewayErrorSchema.parse(missing.body).error.code, 'not_found');
        const wrongMethod = await g.alice.request('GET', GatewayPaths.take);
        assert.equal(wrongMethod.status, 405);
        assert.equal(GatewayErrorSchema.parse(wrongMethod.body).error.code, 'method_not_allowed');
      });

      it('healthz answers ok; metrics count tickets by state, queue length, admissions, 3105s, 3102s and upstream latency', async () => {
        const g = await start({ segmentCapacity: 1, opsToken: 'ops-token-0123456789' });
        const ops = { headers: { authorization: 'Bearer ops-token-0123456789' } };
        const health = await fetch(g.gateway.url + GatewayPaths.healthz, ops);
        assert.deepEqual([health.status, ((await health.json()) as { status: string }).status], [200, 'ok']);
        const a = ticketIdOf(await g.alice.take('a'));
        const b = ticketIdOf(await g.alice.take('b'));
        await g.gateway.tick();
        assert.equal((await g.alice.message(a)).status, 200);
        assert.equal((await g.alice.message(b)).status, 429);
        assert.equal((await g.alice.message('tkt_nope')).status, 400);
        const text = await (await fetch(g.gateway.url + GatewayPaths.metrics, ops)).text();
        assert.match(text, /^offpeak_tickets\{state="active"\} 1$/m);
        assert.match(text, /^offpeak_tickets\{state="queued"\} 1$/m);
        assert.match(text, /^offpeak_queue_length 1$/m);
        assert.match(text, /^offpeak_model_admissions_total 1$/m);
        assert.match(text, /^offpeak_errors_total\{code="3105"\} 1$/m);
        assert.match(text, /^offpeak_errors_total\{code="3102"\} 1$/m);
        assert.match(text, /^offpeak_upstream_response_seconds_count 1$/m);
        assert.match(text, /^offpeak_upstream_duration_seconds_count 1$/m);
      });

      if (kind === 'sqlite')
        it('a second gateway on the same SQLite file is refused with a clear error (the first owns it)', async () => {
          const g = await start();
          ticketIdOf(await g.alice.take('task-A'));
          await assert.rejects(startTestGateway(suite.dir.file('tickets.sqlite'), {}), /in use by another gateway process/);
          assert.equal((await g.alice.take('task-B')).status, 200, 'the first one keeps working');
        });

      if (kind !== 'memory')
        it('restart keeps every ticket: states, deadlines, positions and FIFO order', async () => {
          const g = await start({ segmentCapacity: 2, readyTtlMs: 60_000 });
          const active = ticketIdOf(await g.alice.take('active'));
          const ready = ticketIdOf(await g.alice.take('ready'));
          const queued1 = ticketIdOf(await g.bob.take('queued-1'));
          const queued2 = ticketIdOf(await g.alice.take('queued-2'));
          await g.gateway.tick();
          assert.equal((await g.alice.message(active)).status, 200);
          const settled = ticketIdOf(await g.bob.take('settled'));
          await g.bob.settle(settled, 'cancelled');
          const aliceIds = [active, ready, queued2];
          const bobIds = [queued1, settled];
          const before = { alice: (await g.alice.status(aliceIds)).body.tickets, bob: (await g.bob.status(bobIds)).body.tickets };
          const clock = g.clock;
          await g.close();
          suite.current = undefined;

          const again = await startTestGateway(
            suite.dir.file('tickets.sqlite'),
            { upstreamUrl: suite.upstream.url, segmentCapacity: 2, readyTtlMs: 60_000 },
            clock,
          );
          suite.current = again;
          const after = { alice: (await again.alice.status(aliceIds)).body.tickets, bob: (await again.bob.status(bobIds)).body.tickets };
          assert.deepEqual(after, before);
          assert.deepEqual(
            before.alice.map((x) => x.state),
            ['active', 'ready', 'queued'],
          );
          // The restarted queue continues in FIFO order, and take is still retry-safe.
          assert.equal(TakeResponseSchema.parse((await again.alice.take('queued-2')).body).ticket_id, queued2);
          await again.alice.settle(ready);
          assert.deepEqual((await again.gateway.tick()).promoted, [queued1]);
          await again.alice.settle(active);
          assert.deepEqual((await again.gateway.tick()).promoted, [queued2]);
        });
    });
  });
