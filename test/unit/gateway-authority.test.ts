import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ManualClock } from '../../src/core/clock';
import type { GatewayUser } from '../../src/gateway/http/auth';
import { TicketAuthority } from '../../src/gateway/authority/authority';
import type { AuthorityPolicy } from '../../src/gateway/authority/authority-policy';
import { GatewayHttpError } from '../../src/gateway/http/errors';
import { MemoryTicketStore } from '../../src/gateway/stores/store';
import { OffPeakWindows } from '../../src/gateway/authority/windows';
import { TicketStatusEntrySchema } from '../../src/protocol/gateway';

const policy: AuthorityPolicy = {
  segmentCapacity: 3,
  maxConcurrentModelRequests: 2,
  maxModelRequestsPerUser: 2,
  takesPerWindow: 1000,
  quotaWindowMs: 86_400_000,
  maxLiveTicketsPerUser: 1000,
  readyTtlMs: 5000,
  activeWindowMs: 20_000,
  queuedPollMs: 15_000,
  maxPollMs: 300_000,
  busyRetryAfterMs: 2000,
  retentionMs: 0,
  eligiblePlans: ['coding'],
  exposureEnabled: true,
  upgradeHint: null,
  upgradeUrl: null,
  models: [],
  defaultModel: null,
};
const alice: GatewayUser = { id: 'alice', plan: 'coding', exposure: true };

function authority(overrides: Partial<AuthorityPolicy> = {}) {
  const clock = new ManualClock(1_000_000);
  let n = 0;
  const a = new TicketAuthority(
    new MemoryTicketStore(),
    clock,
    new OffPeakWindows('UTC', { kind: 'always' }),
    { ...policy, ...overrides },
    undefined,
    () => `tkt_${++n}`,
  );
  return { a, clock };
}

/** Four of alice's tickets, in take order: active, ready (its TTL 1 s), settled while queued, and queued. */
async function ticketsInFourStates() {
  const { a, clock } = authority({ segmentCapacity: 2, readyTtlMs: 1000 });
  const ids: string[] = [];
  for (const task of ['t1', 't2', 't3', 't4']) ids.push((await a.take(alice, task)).ticket_id);
  await a.tick();
  await (await a.admit(alice, ids[0])).release();
  await a.settle(alice, ids[2], 'cancelled');
  return { a, clock, ids };
}

describe('gateway ticket authority (memory store)', () => {
  it('statusJson is byte-identical to JSON.stringify(status) in every state, before and after changes', async () => {
    const { a, clock, ids } = await ticketsInFourStates();
    const all = [...ids, 'tkt_unknown'];
    const same = async () => assert.equal(await a.statusJson(alice, all), JSON.stringify(await a.status(alice, all)));
    await same();
    await same(); // served from the fragment cache
    clock.advance(1000); // the ready one expires by time alone
    await same();
    await a.tick();
    await same();
    assert.deepEqual(
      JSON.parse(await a.statusJson(alice, all)).tickets.map((t: { state: string }) => t.state),
      ['active', 'expired', 'settled', 'ready', 'not_found'],
    );
  });

  it("each state's entry carries its fields in the protocol's order, polled at the deadline or never once finished", async () => {
    const { a, clock, ids } = await ticketsInFourStates();
    const read = async () =>
      (await a.status(alice, ids)).tickets.map((t) => {
        assert.ok(TicketStatusEntrySchema.safeParse(t).success, JSON.stringify(t));
        return [t.state, Object.keys(t).join(','), t.next_poll_after_ms];
      });
    const head = 'ticket_id,task_id,taken_at,state';
    assert.deepEqual(await read(), [
      ['active', `${head},ready_at,active_at,active_until,next_poll_after_ms`, 20_000],
      ['ready', `${head},ready_at,ready_deadline,next_poll_after_ms`, 1000],
      ['settled', `${head},settled_at,reason,next_poll_after_ms`, null],
      ['queued', `${head},position,next_poll_after_ms`, 15_000],
    ]);
    clock.advance(1000); // the ready one expires by time alone
    assert.deepEqual((await read())[1], ['expired', `${head},expired_at,expired_from,next_poll_after_ms`, null]);
    const expired = (await a.status(alice, [ids[1]])).tickets[0];
    assert.deepEqual(
      [expired.state === 'expired' && expired.expired_from, expired.state === 'expired' && expired.expired_at],
      ['ready', 1_001_000],
    );
  });

  it('property: under any sequence of operations, ready + active never exceeds capacity and promotion is FIFO', async () => {
    type Op =
      | { kind: 'take' }
      | { kind: 'tick' }
      | { kind: 'admit'; pick: number }
      | { kind: 'settle'; pick: number }
      | { kind: 'advance'; ms: number };
    const op = fc.oneof(
      fc.constant<Op>({ kind: 'take' }),
      fc.constant<Op>({ kind: 'tick' }),
      fc.nat(50).map<Op>((pick) => ({ kind: 'admit', pick })),
      fc.nat(50).map<Op>((pick) => ({ kind: 'settle', pick })),
      fc.integer({ min: 0, max: 8000 }).map<Op>((ms) => ({ kind: 'advance', ms })),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 120 }), async (ops) => {
        const { a, clock } = authority();
        const taken: string[] = [];
        const promoted: string[] = [];
        for (const o of ops) {
          if (o.kind === 'take') taken.push((await a.take(alice, `task-${taken.length}`)).ticket_id);
          else if (o.kind === 'tick') promoted.push(...(await a.tick()).promoted);
          else if (o.kind === 'advance') clock.advance(o.ms);
          else if (taken.length > 0) {
            const id = taken[o.pick % taken.length];
            try {
              if (o.kind === 'admit') await (await a.admit(alice, id)).release();
              else await a.settle(alice, id, 'completed');
            } catch (error) {
              assert.ok(error instanceof GatewayHttpError && ['3102', '3105'].includes(error.code), String(error));
            }
          }
          const states = (await a.status(alice, taken.length > 0 ? taken : ['none'])).tickets;
          const holding = states.filter((s) => s.state === 'ready' || s.state === 'active').length;
          assert.ok(holding <= policy.segmentCapacity, `${holding} > capacity`);
        }
        // FIFO: tickets were promoted in the order they were taken (settled-while-queued ones skipped).
        const order = promoted.map((id) => taken.indexOf(id));
        assert.deepEqual(
          order,
          [...order].sort((x, y) => x - y),
        );
      }),
      { numRuns: 150 },
    );
  });

  it('the take quota refusal (3103) says its window in words that fit it: "1 ticket per 20 s", "2 tickets per 60 min"', async () => {
    for (const [takesPerWindow, quotaWindowMs, words] of [
      [1, 20_000, 'at most 1 ticket per 20 s'],
      [2, 3_600_000, 'at most 2 tickets per 60 min'],
    ] as const) {
      const { a } = authority({ takesPerWindow, quotaWindowMs });
      for (let i = 0; i < takesPerWindow; i++) await a.take(alice, `task-${i}`);
      await assert.rejects(a.take(alice, 'one more'), (e: GatewayHttpError) => e.code === '3103' && e.message === words);
    }
  });

  it('admission: 3105 while queued and when concurrency is used up; the slot frees on release', async () => {
    const { a } = authority({ maxConcurrentModelRequests: 1 });
    const id = (await a.take(alice, 'x')).ticket_id;
    await assert.rejects(a.admit(alice, id), (e: GatewayHttpError) => e.code === '3105' && e.status === 429);
    await a.tick();
    const first = await a.admit(alice, id);
    assert.equal(first.activated, true);
    await assert.rejects(a.admit(alice, id), (e: GatewayHttpError) => e.code === '3105' && e.extra.retry_after_ms === 2000);
    await first.release();
    await first.release(); // idempotent
    const second = await a.admit(alice, id);
    assert.equal(second.activated, false);
    await second.release();
    assert.equal(a.modelRequestsInFlight, 0);
  });
});

describe('gateway structured logs', () => {
  it('writes one JSON object a line at or above the level, nothing below', async () => {
    const { createLogger } = await import('../../src/gateway/http/logger');
    const lines: string[] = [];
    const log = createLogger('info', (line) => lines.push(line));
    log.debug('hidden');
    log.info('ticket active', { ticket_id: 't1' });
    log.error('failed', { error: new Error('boom') });
    assert.equal(lines.length, 2);
    const first = JSON.parse(lines[0]);
    assert.deepEqual([first.level, first.msg, first.ticket_id], ['info', 'ticket active', 't1']);
    assert.ok(!Number.isNaN(Date.parse(first.time)));
    assert.equal(JSON.parse(lines[1]).error.message, 'boom');
    assert.ok(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n')));
  });
});
