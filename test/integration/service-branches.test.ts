// The service's flows (docs/flows.md: availability, create, sync, pause/continue/edit, settle,
// cancel/delete/History) against the REAL reference gateway on loopback (faults from the fault-proxy fixture). Each test asserts the resulting task rows,
// the ledger entries and the requests the gateway actually received.
import assert from 'node:assert/strict';
import { ServiceError } from '../../src/service';
import { USER, World, taskInput, startRunning, API_KEY } from './service-harness';
import { editDbFile } from '../fixtures/edit-db-file';

async function rejects(p: Promise<unknown>, code: string): Promise<ServiceError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ServiceError, `expected ServiceError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    return e;
  }
  assert.fail(`expected ${code}`);
}

describe('service: the flows against the real gateway', function () {
  this.timeout(60_000);
  let world: World;
  afterEach(async () => {
    await world?.close();
  });

  describe('availability: gray release, plan and limits (docs/flows.md#availability)', () => {
    it('availability false disables create until next_take_at, then re-checks at that moment', async () => {
      world = await World.start({ gateway: { takesPerWindow: 2, quotaWindowMs: 60 * 60_000 } });
      const { service } = await world.openWindow();
      await service.create(taskInput());
      await service.create(taskInput());
      world.proxy.resetLog();
      // the snapshot is stale after a minute; the check finds the quota used up
      await world.advance(61_000);
      const err = await rejects(service.create(taskInput()), 'limit_reached');
      assert.equal(err.details.nextTakeAt, service.availability.state.status === 'disabled' ? service.availability.state.nextTakeAt : -1);
      assert.equal(world.takeRequests(), 0, 'no take was sent while availability says no');
      assert.equal(world.proxy.forwarded({ pathIncludes: '/availability' }).length, 1);
      assert.equal(service.listTasks().length, 2, 'no row inserted');
      assert.equal(world.store0().read((tx) => tx.tickets.list()).length, 2, 'no ledger row either');
      // disabled until next_take_at, with no request in between; re-checked exactly then
      const nextTakeAt = err.details.nextTakeAt!;
      await world.advance(nextTakeAt - world.clock.now() - 1);
      assert.equal(world.proxy.forwarded({ pathIncludes: '/availability' }).length, 1);
      await world.advance(1);
      assert.equal(world.proxy.forwarded({ pathIncludes: '/availability' }).length, 2);
      assert.equal(service.availability.state.status, 'enabled');
      await service.create(taskInput());
      assert.equal(service.listTasks().length, 3);
    });

    it('a 3103 race on take shows the error, refreshes the snapshot and inserts nothing', async () => {
      world = await World.start({ gateway: { takesPerWindow: 1, quotaWindowMs: 60 * 60_000 } });
      const { service } = await world.openWindow();
      await service.availability.refresh();
      assert.equal(service.availability.state.status, 'enabled');
      await world.direct.take('someone-else-took-the-last-one'); // the race: quota used after our check
      const err = await rejects(service.create(taskInput()), 'limit_reached');
      assert.ok(err.details.nextTakeAt && err.details.nextTakeAt > world.clock.now());
      assert.equal(service.availability.state.status, 'disabled', 'no permanent flag: disabled until next_take_at');
      assert.equal(service.listTasks().length, 0);
      assert.equal(world.store0().read((tx) => tx.tickets.list()).length, 0, 'no ledger row for a refused take');
      assert.equal(world.takeRequests(), 1);
    });

    it('a plan without off-peak (3101) locks create; an availability error disables until a refresh succeeds', async () => {
      world = await World.start({ gateway: { users: [{ id: 'u1', apiKey: API_KEY, plan: 'free' }] } });
      const { service } = await world.openWindow();
      await rejects(service.create(taskInput()), 'not_eligible');
      assert.equal(world.takeRequests(), 0);
      assert.deepEqual(
        world.proxy.forwarded().map((r) => r.path),
        ['/api/v1/off-peak/ticket/availability'],
      );
      assert.equal(service.listTasks().length, 0);
      assert.equal(world.store0().read((tx) => tx.tickets.list()).length, 0);

      await world.close();
      world = await World.start({});
      const w = await world.openWindow();
      world.proxy.enqueue({ kind: 'drop' }, { match: (_m, p) => p.includes('/availability') });
      await rejects(w.service.create(taskInput()), 'gateway_unavailable');
      assert.equal(w.service.availability.state.status, 'error');
      assert.equal(w.service.listTasks().length, 0);
      // re-checked with backoff; once it succeeds, create works again
      await world.advance(10_000);
      assert.equal(w.service.availability.state.status, 'enabled');
      await w.service.create(taskInput());
      assert.equal(w.service.listTasks().length, 1);
    });
  });

  describe('create and first take (docs/flows.md#create)', () => {
    it('take first, then the ledger row, then INSERT queued with the position', async () => {
      world = await World.start({});
      const { service, store } = await world.openWindow();
      const a = await service.create(taskInput());
      const b = await service.create(taskInput());
      assert.equal(a.status, 'queued');
      assert.ok(a.serverTicketId);
      assert.equal(a.queuePosition, 1);
      assert.equal(b.queuePosition, 2);
      assert.equal(a.schedulable, false);
      assert.equal(a.sessionId, null, 'no session pre-created');
      const ledger = store.read((tx) => tx.tickets.forTask(a.id));
      assert.deepEqual(
        ledger.map((t) => [t.ticketId, t.ordinal, t.origin, t.serverState, t.settleState]),
        [[a.serverTicketId, 1, 'take', 'queued', 'none']],
      );
      const takes = world.proxy.forwarded().filter((r) => r.path === '/api/v1/off-peak/ticket');
      assert.deepEqual(
        takes.map((r) => r.body),
        [{ task_id: a.id }, { task_id: b.id }],
      );
      assert.equal((await world.gatewayStates([a.serverTicketId!])).get(a.serverTicketId!), 'queued');
    });

    it('a ready answer marks the task schedulable and wakes the scheduler', async () => {
      world = await World.start({});
      // the gateway already holds a ready ticket for this task id (e.g. a take retried after a crash)
      const fixedId = 'task-ready-at-take';
      const first = await world.direct.take(fixedId);
      await world.promote();
      const { service } = await world.openWindow('w1', { newTaskId: () => fixedId });
      const woke: string[] = [];
      service.onDidWake((id) => woke.push(id));
      const t = await service.create(taskInput());
      assert.equal(t.id, fixedId);
      assert.equal(t.serverTicketId, first.ticketId, 'retry-safe take returned the same ticket');
      assert.equal(t.schedulable, true);
      assert.deepEqual(woke, [fixedId]);
      const ledger = world.store0().read((tx) => tx.tickets.forTask(fixedId));
      assert.deepEqual(
        ledger.map((l) => [l.ticketId, l.serverState, l.settleState]),
        [[first.ticketId, 'ready', 'none']],
      );
      const takes = world.proxy.forwarded().filter((r) => r.path === '/api/v1/off-peak/ticket');
      assert.equal(takes.length, 1);
      assert.equal((takes[0].gatewayBody as { state: string; reused: boolean }).state, 'ready');
    });

    it('no key, 3101, 3103 and network failure insert nothing', async () => {
      world = await World.start({ gateway: { takesPerWindow: 0 } });
      const w = await world.openWindow();
      world.apiKey = undefined;
      await rejects(w.service.create(taskInput()), 'no_api_key');
      assert.equal(world.proxy.seen.length, 0, 'no key: nothing sent at all');
      world.apiKey = API_KEY;
      // 3103 straight from take (the availability snapshot is bypassed by a fresh enabled state)
      world.proxy.enqueue(
        {
          kind: 'respond',
          response: {
            status: 200,
            body: JSON.stringify({ server_time: world.clock.now(), can_take: true, can_take_number: 1, next_take_at: null, reason: null }),
          },
        },
        { match: (_m, p) => p.includes('/availability') },
      );
      await rejects(w.service.create(taskInput()), 'limit_reached');
      assert.equal(world.takeRequests(), 1);
      assert.equal(w.service.listTasks().length, 0);

      await world.close();
      world = await World.start({});
      const w2 = await world.openWindow();
      await w2.service.availability.refresh();
      await world.proxy.goDown();
      await rejects(w2.service.create(taskInput()), 'gateway_unavailable');
      await world.proxy.comeUp();
      assert.equal(w2.service.listTasks().length, 0);
      assert.equal(w2.store.read((tx) => tx.tickets.list()).length, 0);
      assert.equal(world.takeRequests(), 0, 'the gateway saw no take');
      // 3101 on the take itself
      world.proxy.enqueue(
        {
          kind: 'respond',
          response: {
            status: 403,
            body: JSON.stringify({ type: 'error', error: { type: 'permission_error', code: '3101', message: 'plan' } }),
          },
        },
        { match: (m, p) => m === 'POST' && p === '/api/v1/off-peak/ticket' },
      );
      await rejects(w2.service.create(taskInput()), 'not_eligible');
      assert.equal(w2.service.listTasks().length, 0);
    });

    it('a lost take answer is retried with the same task id and gets the same ticket', async () => {
      world = await World.start({});
      const { service } = await world.openWindow();
      await service.availability.refresh();
      world.proxy.enqueue({ kind: 'drop-after-forward' }, { match: (m, p) => m === 'POST' && p === '/api/v1/off-peak/ticket' });
      const t = await service.create(taskInput());
      const takes = world.proxy.forwarded().filter((r) => r.path === '/api/v1/off-peak/ticket');
      assert.equal(takes.length, 2);
      assert.deepEqual(takes[0].body, takes[1].body);
      assert.equal((takes[1].gatewayBody as { reused: boolean }).reused, true);
      assert.equal(t.serverTicketId, (takes[0].gatewayBody as { ticket_id: string }).ticket_id);
      assert.equal(world.issuedTickets().size, 1, 'one ticket, not two');
    });

    for (const abnormal of ['expired', 'settled', 'not_found'] as const) {
      it(`an abnormal take answer (${abnormal}) is repaired by a retake, never left stalled`, async () => {
        world = await World.start({});
        const { service, store } = await world.openWindow();
        await service.availability.refresh();
        world.proxy.enqueue(
          {
            kind: 'respond-with',
            respond: ({ body }) => ({
              status: 200,
              body: JSON.stringify({
                server_time: world.clock.now(),
                ticket_id: 'ghost-ticket',
                task_id: (body as { task_id: string }).task_id,
                state: abnormal,
                position: null,
                ready_deadline: null,
                active_until: null,
                next_poll_after_ms: 1000,
                reused: false,
              }),
            }),
          },
          { match: (m, p) => m === 'POST' && p === '/api/v1/off-peak/ticket' },
        );
        const t = await service.create(taskInput());
        assert.equal(t.status, 'queued');
        assert.equal(t.serverTicketId, null, 'the dead ticket is not attached');
        await world.settle();
        const after = service.getTask(t.id)!;
        assert.ok(after.serverTicketId && after.serverTicketId !== 'ghost-ticket', 'retaken at once');
        const ledger = store.read((tx) => tx.tickets.forTask(t.id));
        assert.deepEqual(
          ledger.map((x) => [x.ticketId, x.serverState]),
          [
            ['ghost-ticket', abnormal],
            [after.serverTicketId, 'queued'],
          ],
        );
        assert.notEqual(ledger[0].settleState, 'none', 'the dead ticket is retired in the ledger');
        const takes = world.proxy.seen.filter((r) => r.path === '/api/v1/off-peak/ticket');
        assert.equal(takes.length, 2);
        assert.equal((await world.gatewayStates([after.serverTicketId!])).get(after.serverTicketId!), 'queued');
      });
    }

    it('an abnormal take answer (active) is used at once: schedulable and woken', async () => {
      world = await World.start({});
      const { service } = await world.openWindow();
      await service.availability.refresh();
      world.proxy.enqueue(
        {
          kind: 'respond-with',
          respond: ({ body }) => ({
            status: 200,
            body: JSON.stringify({
              server_time: world.clock.now(),
              ticket_id: 'active-ticket',
              task_id: (body as { task_id: string }).task_id,
              state: 'active',
              position: null,
              ready_deadline: null,
              active_until: world.clock.now() + 3_600_000,
              next_poll_after_ms: 1000,
              reused: true,
            }),
          }),
        },
        { match: (m, p) => m === 'POST' && p === '/api/v1/off-peak/ticket' },
      );
      const woke: string[] = [];
      service.onDidWake((id) => woke.push(id));
      const t = await service.create(taskInput());
      assert.equal(t.schedulable, true);
      assert.equal(t.serverTicketId, 'active-ticket');
      assert.deepEqual(woke, [t.id]);
      assert.deepEqual(
        world
          .store0()
          .read((tx) => tx.tickets.forTask(t.id))
          .map((l) => [l.ticketId, l.serverState, l.settleState]),
        [['active-ticket', 'active', 'none']],
      );
      assert.equal(world.proxy.seen.filter((r) => r.path === '/api/v1/off-peak/ticket').length, 1, 'one take, answered active');
    });

    it('an INSERT failure after a successful take settles the orphan ticket, whose ledger row then goes', async () => {
      world = await World.start({});
      const { service, store } = await world.openWindow();
      // the disk "fills up" for task rows only: the INSERT fails, the ledger write does not
      await editDbFile(store.filePath, (db) =>
        db.exec(
          "CREATE TRIGGER simulate_full BEFORE INSERT ON off_peak_tasks BEGIN SELECT RAISE(ABORT, 'database or disk is full (simulated)'); END;",
        ),
      );
      const err = await rejects(service.create(taskInput()), 'store_failed');
      assert.match(err.message, /disk is full/);
      await world.settle();
      assert.equal(service.listTasks().length, 0);
      const settles = world.settleRequests();
      assert.equal(settles.length, 1);
      assert.deepEqual(settles[0].body, { reason: 'orphan' });
      const ticketId = settles[0].path.split('/')[5];
      assert.equal((await world.gatewayStates([ticketId])).get(ticketId), 'settled');
      assert.deepEqual(
        store.read((tx) => tx.tickets.list()),
        [],
        'settled, the ticket of no task goes',
      );
    });
  });

  describe('status sync and the server states (docs/flows.md#sync)', () => {
    it('ready wakes, queued updates the position, active clears it; running untouched', async () => {
      world = await World.start({ gateway: { segmentCapacity: 2 } });
      const { service, store } = await world.openWindow();
      const woke: string[] = [];
      service.onDidWake((id) => woke.push(id));
      const a = await service.create(taskInput());
      const b = await service.create(taskInput());
      const c = await service.create(taskInput());
      await world.promote(); // a and b ready, c stays queued at position 1
      world.proxy.resetLog();
      await world.advance(15_000); // the gateway's queued poll hint
      assert.equal(world.statusRequests(), 1, 'one batch for three tickets');
      assert.deepEqual(
        (world.proxy.forwarded({ pathIncludes: '/status' })[0].body as { ticket_ids: string[] }).ticket_ids.sort(),
        [a.serverTicketId, b.serverTicketId, c.serverTicketId].sort(),
      );
      assert.deepEqual(woke.sort(), [a.id, b.id].sort());
      assert.equal(service.getTask(a.id)!.schedulable, true);
      assert.equal(service.getTask(c.id)!.schedulable, false);
      assert.equal(service.getTask(c.id)!.queuePosition, 1);
      assert.equal(store.read((tx) => tx.tickets.get(a.serverTicketId!))!.serverState, 'ready');
      assert.ok(store.read((tx) => tx.tickets.get(a.serverTicketId!))!.readyAt);

      // a runs; its first model request is admitted: active
      await startRunning(world.windows[0], a.id);
      await (await world.gateway.authority.admit(USER, a.serverTicketId!)).release();
      await world.advance(5 * 60_000); // a ready ticket's next poll is the gateway's hint (<= 5 min)
      const ra = service.getTask(a.id)!;
      assert.equal(ra.status, 'running', 'sync never changes a running task');
      assert.equal(ra.queuePosition, null);
      const la = store.read((tx) => tx.tickets.get(a.serverTicketId!))!;
      assert.equal(la.serverState, 'active');
      assert.ok(la.activeAt && la.expiresAt && la.expiresAt > la.activeAt);
    });

    it('expired on a queued task retakes with the same task id; on a paused task it waits; on a running task nothing changes', async () => {
      world = await World.start({ gateway: { readyTtlMs: 60_000 } });
      const { service, store } = await world.openWindow();
      const q = await service.create(taskInput());
      const p = await service.create(taskInput());
      const r = await service.create(taskInput());
      await world.promote();
      await world.advance(15_000);
      await startRunning(world.windows[0], r.id);
      await service.pause(p.id);
      world.proxy.resetLog();
      await world.advance(61_000); // ready TTL passes unused: all three expire on the gateway
      await world.settle();
      const q2 = service.getTask(q.id)!;
      assert.ok(q2.serverTicketId && q2.serverTicketId !== q.serverTicketId, 'queued: new ticket');
      assert.equal(q2.status, 'queued');
      const takes = world.proxy.forwarded().filter((x) => x.path === '/api/v1/off-peak/ticket');
      assert.deepEqual(
        takes.map((x) => x.body),
        [{ task_id: q.id }],
        'only the queued task was retaken, with its own task id',
      );
      const ql = store.read((tx) => tx.tickets.forTask(q.id));
      assert.deepEqual(
        ql.map((t) => [t.ordinal, t.serverState, t.settleState, t.endReason]),
        [
          [1, 'settled', 'settled', 'expired'],
          [2, 'queued', 'none', null],
        ],
      );
      const p2 = service.getTask(p.id)!;
      assert.equal(p2.status, 'paused');
      assert.equal(p2.serverTicketId, p.serverTicketId, 'paused: waits in place for Continue');
      assert.equal(p2.schedulable, false);
      const r2 = service.getTask(r.id)!;
      assert.equal(r2.status, 'running');
      assert.equal(r2.serverTicketId, r.serverTicketId);
      // and nobody polls dead tickets again
      const before = world.statusRequests();
      await world.advance(10 * 60_000);
      const polledAfter = world.proxy
        .forwarded({ pathIncludes: '/status' })
        .slice(before)
        .flatMap((x) => (x.body as { ticket_ids: string[] }).ticket_ids);
      assert.ok(!polledAfter.includes(p.serverTicketId!) && !polledAfter.includes(r.serverTicketId!));
    });

    it('settled or not_found on a live queued task is repaired by a retake', async () => {
      world = await World.start({});
      const { service, store } = await world.openWindow();
      const s = await service.create(taskInput());
      const n = await service.create(taskInput());
      await world.direct.settle(s.serverTicketId!, 'abandoned'); // settled behind our back
      await store.mutate((tx) => {
        tx.tickets.insert({ ticketId: 'unknown-to-gateway', taskId: n.id, serverState: 'queued' });
        tx.tasks.setTicket(n.id, 'unknown-to-gateway', { nextPollAt: tx.now });
      });
      world.proxy.resetLog();
      await world.advance(15_000);
      const s2 = service.getTask(s.id)!;
      const n2 = service.getTask(n.id)!;
      assert.ok(s2.serverTicketId && s2.serverTicketId !== s.serverTicketId);
      assert.ok(n2.serverTicketId && n2.serverTicketId !== 'unknown-to-gateway');
      assert.deepEqual(
        world.proxy
          .forwarded()
          .filter((x) => x.path === '/api/v1/off-peak/ticket')
          .map((x) => (x.body as { task_id: string }).task_id)
          .sort(),
        [s.id, n.id].sort(),
      );
      assert.equal(store.read((tx) => tx.tickets.get(s.serverTicketId!))!.settleState, 'settled');
      assert.equal(store.read((tx) => tx.tickets.get('unknown-to-gateway'))!.settleState, 'abandoned');
      const states = await world.gatewayStates([s2.serverTicketId!, n2.serverTicketId!]);
      assert.deepEqual([...states.values()], ['queued', 'queued']);
    });

    it('a task whose old tickets the gateway purged, taken again while the rollout is off (3101), stops retrying: paused, saying why', async () => {
      world = await World.start({ gateway: { exposure: false } });
      const { service, store } = await world.openWindow();
      await store.mutate((tx) => {
        tx.tasks.insert({ ...taskInput(), id: 'purged-task' });
        tx.tasks.pause('purged-task');
      });
      world.proxy.resetLog();
      const continued = await service.continue('purged-task');
      await world.advance(15_000);
      assert.equal(world.takeRequests(), 1, `one take, refused with 3101 (${JSON.stringify(continued)})`);
      const task = service.getTask('purged-task')!;
      assert.equal(task.status, 'paused', 'it stops retrying');
      assert.match(task.lastError ?? '', /not taken again until you Continue it/);
      await world.advance(10 * 60_000);
      assert.equal(world.takeRequests(), 1, 'no retake after that');
    });

    it('per-ticket next poll time is honoured, and a failing cycle backs off 10 s -> 5 min', async () => {
      world = await World.start({ gateway: { queuedPollMs: 20_000 } });
      const { service } = await world.openWindow();
      const cycles: number[] = [];
      service.onDidSync((r) => {
        if (r.statusRequests > 0) cycles.push(world.clock.now());
      });
      const t0 = world.clock.now();
      await service.create(taskInput());
      await world.advance(60_000);
      assert.deepEqual(
        cycles.map((c) => c - t0),
        [20_000, 40_000, 60_000],
        'polled exactly when the gateway said',
      );
      assert.equal(world.statusRequests(), 3, 'the gateway saw exactly those three status requests');
      assert.equal(world.store0().read((tx) => tx.tickets.list())[0].serverState, 'queued');
      // the gateway goes down: backoff 10, 20, 40, 80, 160, 300, 300 s
      cycles.length = 0;
      await world.proxy.goDown();
      const down = world.clock.now();
      await world.advance(20_000 + 10_000 + 20_000 + 40_000 + 80_000 + 160_000 + 300_000 + 300_000);
      const gaps = cycles.map((c, i) => c - (i === 0 ? down : cycles[i - 1]));
      assert.deepEqual(gaps, [20_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
      await world.proxy.comeUp();
    });

    it('long-poll (wait_ms) answers as soon as the gateway promotes', async () => {
      world = await World.start({ sync: { longPollMs: 20_000 }, timeoutMs: 2_000, gateway: { statusMaxWaitMs: 20_000 } });
      const { service } = await world.openWindow();
      const t = await service.create(taskInput());
      world.clock.advance(15_000); // the first poll is due (timers not fired: we start the cycle ourselves)
      const cycle = service.syncNow();
      await new Promise((r) => setTimeout(r, 200));
      await world.promote();
      const report = await cycle;
      assert.deepEqual(report.woke, [t.id]);
      const req = world.proxy.forwarded({ pathIncludes: '/status' }).at(-1)!;
      assert.equal((req.body as { wait_ms: number }).wait_ms, 20_000);
      assert.equal(service.getTask(t.id)!.schedulable, true);
      assert.equal(world.store0().read((tx) => tx.tickets.get(t.serverTicketId!))!.serverState, 'ready');
    });
    it('a promotion that happened before the long-poll is answered at once, not after wait_ms', async function () {
      this.timeout(15_000); // wait_ms is 60 s: only the known_states shortcut beats this timeout
      world = await World.start({ sync: { longPollMs: 60_000 }, timeoutMs: 2_000, gateway: { statusMaxWaitMs: 60_000 } });
      const { service } = await world.openWindow();
      const t = await service.create(taskInput());
      await world.promote(); // ready on the gateway while the ledger still says queued
      world.clock.advance(15_000);
      const report = await service.syncNow();
      assert.deepEqual(report.woke, [t.id]);
      const req = world.proxy.forwarded({ pathIncludes: '/status' }).at(-1)!;
      assert.deepEqual((req.body as { known_states: Record<string, string> }).known_states, { [t.serverTicketId!]: 'queued' });
      assert.equal(service.getTask(t.id)!.schedulable, true);
    });

    it('a task created during a long-poll restarts it instead of waiting for its timeout', async function () {
      this.timeout(15_000); // wait_ms is 60 s: only the restart beats this timeout
      world = await World.start({ sync: { longPollMs: 60_000 }, timeoutMs: 2_000, gateway: { statusMaxWaitMs: 60_000 } });
      const { service } = await world.openWindow();
      const a = await service.create(taskInput());
      world.clock.advance(2_000);
      const cycle = service.syncNow();
      await new Promise((r) => setTimeout(r, 200)); // the long-poll for A is held by the gateway
      const b = await service.create(taskInput());
      const first = await cycle;
      assert.equal(first.error, undefined, 'a restart is not a failed cycle');
      await world.promote();
      const second = await service.syncNow();
      assert.deepEqual([...second.woke].sort(), [a.id, b.id].sort(), 'both tickets are in the next long-poll');
      const last = world.proxy.forwarded({ pathIncludes: '/status' }).at(-1)!;
      assert.deepEqual(
        Object.keys((last.body as { known_states: Record<string, string> }).known_states).sort(),
        [a.serverTicketId!, b.serverTicketId!].sort(),
      );
    });

    it('a gateway that refuses wait_ms gets plain polls from then on', async () => {
      world = await World.start({ sync: { longPollMs: 20_000 } });
      const { service } = await world.openWindow();
      const t = await service.create(taskInput());
      // an older gateway: a status carrying wait_ms is a 400 invalid_request
      let refused = 0;
      world.proxy.enqueue(
        {
          kind: 'respond-with',
          respond: ({ body }) => {
            if (!('wait_ms' in (body as object))) throw new Error('expected wait_ms');
            refused += 1;
            return {
              status: 400,
              body: JSON.stringify({
                type: 'error',
                error: { type: 'invalid_request_error', code: 'invalid_request', message: 'unknown field wait_ms' },
              }),
            };
          },
        },
        { match: (_m, p) => p.includes('/status') },
      );
      await world.advance(15_000);
      const statuses = world.proxy.seen.filter((r) => r.path.includes('/status'));
      assert.equal(refused, 1);
      assert.deepEqual(
        statuses.map((r) => 'wait_ms' in (r.body as object)),
        [true, false],
        'refused once with wait_ms, then asked again without',
      );
      assert.equal(service.getTask(t.id)!.queuePosition, 1, 'the plain answer was applied');
      await world.advance(15_000);
      assert.equal(world.proxy.seen.filter((r) => r.path.includes('/status')).length, 3);
      assert.equal('wait_ms' in (world.proxy.seen.filter((r) => r.path.includes('/status')).at(-1)!.body as object), false);
      assert.equal(world.store0().read((tx) => tx.tickets.forTask(t.id))[0].serverState, 'queued');
    });
  });

  describe('pause, continue, edit (docs/flows.md#pause-continue-edit)', () => {
    it('pause keeps the ticket in place; continue reuses an alive ticket at no cost', async () => {
      world = await World.start({});
      const { service } = await world.openWindow();
      const a = await service.create(taskInput());
      const b = await service.create(taskInput());
      const paused = await service.pause(a.id);
      assert.equal(paused.status, 'paused');
      assert.equal(paused.serverTicketId, a.serverTicketId);
      assert.equal((await world.gatewayStates([a.serverTicketId!])).get(a.serverTicketId!), 'queued', 'still in the FIFO');
      world.proxy.resetLog();
      const c = await service.continue(a.id);
      assert.equal(c.ticket, 'reused');
      assert.equal(c.task.status, 'queued');
      assert.equal(c.task.serverTicketId, a.serverTicketId);
      assert.equal(c.task.queuePosition, 1, 'its place in the queue was kept');
      assert.equal(world.takeRequests(), 0);
      assert.equal(world.statusRequests(), 1);
      assert.deepEqual(
        world
          .store0()
          .read((tx) => tx.tickets.forTask(a.id))
          .map((l) => [l.ticketId, l.serverState, l.settleState]),
        [[a.serverTicketId, 'queued', 'none']],
        'no new ticket, nothing settled',
      );
      // a claimed (being dispatched) or running task cannot be paused
      await world.promote();
      await world.advance(15_000);
      assert.equal(await world.store0().mutate((tx) => tx.tasks.claim(b.id)), true);
      await rejects(service.pause(b.id), 'not_allowed');
      await world.store0().mutate((tx) => tx.tasks.markRunning(b.id));
      await rejects(service.pause(b.id), 'not_allowed');
      assert.equal(service.getTask(b.id)!.status, 'running');
    });

    it('continue with an expired, settled or missing ticket retakes with the same task id', async () => {
      world = await World.start({ gateway: { readyTtlMs: 60_000 } });
      const { service, store } = await world.openWindow();
      const e = await service.create(taskInput());
      const s = await service.create(taskInput());
      await world.promote();
      await service.pause(e.id);
      await service.pause(s.id);
      await world.direct.settle(s.serverTicketId!, 'abandoned');
      await world.advance(61_000); // e's ready ticket expires
      world.proxy.resetLog();
      const ce = await service.continue(e.id);
      const cs = await service.continue(s.id);
      assert.equal(ce.ticket, 'retaken');
      assert.equal(cs.ticket, 'retaken', 'settled counts as dead (else the task would stall here)');
      assert.notEqual(ce.task.serverTicketId, e.serverTicketId);
      assert.notEqual(cs.task.serverTicketId, s.serverTicketId);
      assert.deepEqual(
        world.proxy
          .forwarded()
          .filter((x) => x.path === '/api/v1/off-peak/ticket')
          .map((x) => (x.body as { task_id: string }).task_id),
        [e.id, s.id],
      );
      assert.deepEqual(
        store.read((tx) => tx.tickets.forTask(s.id)).map((t) => [t.ordinal, t.settleState]),
        [
          [1, 'settled'],
          [2, 'none'],
        ],
      );
    });

    it('a failed status check on continue counts as alive (no quota spent)', async () => {
      world = await World.start({});
      const { service } = await world.openWindow();
      const a = await service.create(taskInput());
      await service.pause(a.id);
      world.proxy.resetLog();
      world.proxy.enqueue({ kind: 'respond', response: { status: 503, body: 'overloaded' } }, { match: (_m, p) => p.includes('/status') });
      const c = await service.continue(a.id);
      assert.equal(c.ticket, 'reused');
      assert.equal(c.task.serverTicketId, a.serverTicketId);
      assert.equal(world.takeRequests(), 0);
      assert.equal(world.proxy.seen.filter((r) => r.path.includes('/status')).length, 1, 'one status check, answered 503');
      assert.equal(world.store0().read((tx) => tx.tickets.forTask(a.id)).length, 1);
    });

    it('edit only while queued or paused; the workspace is immutable', async () => {
      world = await World.start({});
      const { service } = await world.openWindow();
      const a = await service.create(taskInput());
      const e1 = await service.edit(a.id, { prompt: 'new prompt', title: 'new title' });
      assert.equal(e1.prompt, 'new prompt');
      await service.pause(a.id);
      assert.equal((await service.edit(a.id, { model: 'claude-haiku-4-5' })).model, 'claude-haiku-4-5');
      await rejects(service.edit(a.id, { workspacePath: '/elsewhere' } as never), 'invalid_input');
      await service.continue(a.id);
      await world.promote();
      await world.advance(15_000);
      await startRunning(world.windows[0], a.id);
      await rejects(service.edit(a.id, { prompt: 'too late' }), 'not_allowed');
      assert.equal(service.getTask(a.id)!.workspacePath, '/tmp/ws-a');
      assert.equal(world.store0().read((tx) => tx.tickets.forTask(a.id)).length, 1, 'edits never touch the ticket');
    });
  });

  describe('terminal states and the settle outbox (docs/flows.md#settle)', () => {
    it('completed -> segment ended, settled on the gateway, task settled_at set', async () => {
      world = await World.start({});
      const { service, store } = await world.openWindow();
      const a = await service.create(taskInput());
      await world.promote();
      await world.advance(15_000);
      await startRunning(world.windows[0], a.id);
      assert.equal(await service.lifecycle.complete(a.id, { filesChanged: 3 }), true);
      await world.settle();
      const t = service.getTask(a.id)!;
      assert.equal(t.status, 'completed');
      assert.ok(t.settledAt);
      const l = store.read((tx) => tx.tickets.get(a.serverTicketId!))!;
      assert.deepEqual([l.endReason, l.settleState, l.settleReason, l.settleAttempts], ['completed', 'settled', 'completed', 1]);
      assert.ok(l.segmentStartedAt && l.segmentEndedAt);
      assert.deepEqual(
        world.settleRequests().map((r) => r.body),
        [{ reason: 'completed' }],
      );
      assert.equal((await world.gatewayStates([a.serverTicketId!])).get(a.serverTicketId!), 'settled');
      // a late result cannot overwrite the terminal state
      assert.equal(await service.lifecycle.fail(a.id, { failureReason: 'late' }), false);
      assert.equal(service.getTask(a.id)!.status, 'completed');
    });

    it('5xx/network keep the settle pending with backoff across a restart; 4xx acknowledges', async () => {
      world = await World.start({});
      const w = await world.openWindow();
      const a = await w.service.create(taskInput());
      const b = await w.service.create(taskInput());
      world.proxy.setFault({ kind: 'respond', response: { status: 502, body: '<html>bad gateway</html>' } });
      await w.service.cancel(a.id);
      await world.settle();
      let l = w.store.read((tx) => tx.tickets.get(a.serverTicketId!))!;
      assert.equal(l.settleState, 'pending');
      assert.equal(l.settleAttempts, 1);
      assert.match(l.lastError ?? '', /502/);
      assert.ok(l.nextSettleAt && l.nextSettleAt > world.clock.now(), 'retry later, with backoff');
      // the window closes (restart) while the gateway still fails; a new window takes over
      await w.service.stop();
      await w.store.close();
      world.windows.length = 0;
      world.proxy.clearFaults();
      const w2 = await world.openWindow('after-restart');
      await world.advance(60_000);
      l = w2.store.read((tx) => tx.tickets.get(a.serverTicketId!))!;
      assert.equal(l.settleState, 'settled');
      assert.equal((await world.gatewayStates([a.serverTicketId!])).get(a.serverTicketId!), 'settled');
      // a settle the gateway answers 4xx for (it does not know the ticket) is acknowledged
      await w2.store.mutate((tx) => {
        tx.tickets.insert({ ticketId: 'gateway-never-heard-of-it', taskId: b.id, serverState: 'queued' });
        tx.tickets.requestSettle('gateway-never-heard-of-it', 'abandoned');
      });
      await w2.service.syncNow();
      const g = w2.store.read((tx) => tx.tickets.get('gateway-never-heard-of-it'))!;
      assert.equal(g.settleState, 'settled');
      const req = world.proxy.forwarded({ pathIncludes: 'gateway-never-heard-of-it' });
      assert.equal(req.length, 1);
      assert.equal(req[0].gatewayStatus, 404);
    });
  });

  describe('cancel, delete, delete from History (docs/flows.md#cancel-delete-history)', () => {
    it('cancel writes the terminal state first, then stops the agent, then settles', async () => {
      world = await World.start({});
      let statusWhenStopped: string | undefined;
      const w = await world.openWindow('w1', {
        stopAgent: (taskId) => {
          statusWhenStopped = w.service.getTask(taskId)?.status;
        },
      });
      const a = await w.service.create(taskInput());
      await world.promote();
      await world.advance(15_000);
      await startRunning(w, a.id);
      const c = await w.service.cancel(a.id);
      assert.equal(c.status, 'cancelled');
      assert.equal(statusWhenStopped, 'cancelled', 'terminal before the agent is stopped');
      await world.settle();
      assert.deepEqual(
        world.settleRequests().map((r) => r.body),
        [{ reason: 'cancelled' }],
      );
      const l = w.store.read((tx) => tx.tickets.get(a.serverTicketId!))!;
      assert.deepEqual([l.endReason, l.settleState], ['cancelled', 'settled']);
      // cancel again: idempotent, nothing more sent
      await w.service.cancel(a.id);
      await world.settle();
      assert.equal(world.settleRequests().length, 1);
    });

    it('delete of a live task cancels first; the row goes, its unsettled ticket stays until acknowledged, then goes too', async () => {
      world = await World.start({});
      const w = await world.openWindow();
      const a = await w.service.create(taskInput());
      const done = await w.service.create(taskInput());
      await world.proxy.goDown();
      assert.equal(await w.service.delete(a.id), true);
      await world.settle();
      assert.equal(w.service.getTask(a.id), undefined, 'row deleted');
      assert.deepEqual(w.stopped, [a.id], 'cancelled (agent stop attempted) before delete');
      const l = w.store.read((tx) => tx.tickets.get(a.serverTicketId!))!;
      assert.equal(l.settleState, 'pending', 'the ledger keeps the unsettled ticket');
      assert.equal(l.settleReason, 'cancelled');
      await world.proxy.comeUp();
      await world.advance(60_000);
      assert.equal(
        w.store.read((tx) => tx.tickets.get(a.serverTicketId!)),
        undefined,
        'acknowledged, the ledger row of the deleted task goes',
      );
      assert.equal((await world.gatewayStates([a.serverTicketId!])).get(a.serverTicketId!), 'settled');
      assert.deepEqual(
        world.settleRequests().map((r) => [r.path.split('/')[5], r.body]),
        [[a.serverTicketId, { reason: 'cancelled' }]],
      );
      // delete of a terminal task: straight delete
      await w.service.cancel(done.id);
      assert.equal(await w.service.delete(done.id), true);
      assert.equal(w.service.getTask(done.id), undefined);
      assert.equal(await w.service.delete(done.id), false, 'deleting again is a no-op');
    });

    it('delete from History is a tombstone only, idempotent, keeps the first time, and is not written for a never-started task', async () => {
      world = await World.start({});
      const w = await world.openWindow();
      const never = await w.service.create(taskInput());
      const ran = await w.service.create(taskInput());
      await world.promote();
      await world.advance(15_000);
      await startRunning(w, ran.id);
      await w.service.lifecycle.complete(ran.id);
      await world.settle();
      assert.deepEqual(
        w.service.history().map((h) => [h.taskId, h.status]),
        [[ran.id, 'succeeded']],
      );

      const seenBefore = world.proxy.seen.length;
      const ledgerBefore = JSON.stringify(w.store.read((tx) => tx.tickets.list()));
      const n = await w.service.deleteFromHistory(never.id);
      assert.deepEqual(n, { hidden: false, historyDeletedAt: null, reason: 'never_started' });
      assert.equal(w.service.getTask(never.id)!.historyDeletedAt, null);

      const first = await w.service.deleteFromHistory(ran.id);
      assert.equal(first.hidden, true);
      const at = first.historyDeletedAt;
      assert.equal(world.proxy.seen.length, seenBefore, 'History is local: no gateway request');
      await world.advance(5_000);
      const seenBeforeAgain = world.proxy.seen.length;
      const again = await w.service.deleteFromHistory(ran.id);
      assert.equal(world.proxy.seen.length, seenBeforeAgain);
      assert.deepEqual(again, { hidden: true, historyDeletedAt: at, reason: 'already_hidden' });
      assert.deepEqual(w.service.history(), []);
      const row = w.service.getTask(ran.id)!;
      assert.equal(row.status, 'completed', 'the task itself is untouched');
      assert.equal(row.sessionId, `session-${ran.id}`);
      assert.equal(
        JSON.stringify(w.store.read((tx) => tx.tickets.list()).filter((l) => l.taskId === ran.id)),
        JSON.stringify(JSON.parse(ledgerBefore).filter((l: { taskId: string }) => l.taskId === ran.id)),
        'the ledger is untouched',
      );
    });
  });
});
