// End-to-end fuzz: hostile gateway answers injected by the fault proxy (in front of the real
// gateway) while the service creates, syncs, continues and cancels. After every step: no crash
// (no unhandled rejection, every failure a ServiceError or a sync report with a message), no
// corrupted row. The 10,000-answer fuzz of the client's parsing is test/unit/gateway-client-fuzz.test.ts.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SERVER_TICKET_STATES, SETTLE_STATES, TASK_STATUSES, isTerminalStatus } from '../../src/core/types';
import { ServiceError } from '../../src/service';
import type { TaskStore } from '../../src/store';
import { hostileAnswer } from '../fixtures/hostile-answers';
import type { FaultRule } from '../fixtures/fault-proxy';
import { World, taskInput } from './service-harness';

const endpoints = {
  availability: (_m: string, p: string) => p.includes('/availability'),
  take: (m: string, p: string) => m === 'POST' && p === '/api/v1/off-peak/ticket',
  status: (_m: string, p: string) => p.includes('/status'),
  settle: (_m: string, p: string) => p.includes('/settle'),
};
type Endpoint = keyof typeof endpoints;

/** Every row must still make sense, whatever the gateway said. */
function assertRowsSound(store: TaskStore): void {
  const { tasks, tickets } = store.read((tx) => ({ tasks: tx.tasks.list(), tickets: tx.tickets.list() }));
  const ledger = new Map(tickets.map((t) => [t.ticketId, t]));
  const owners = new Map<string, string>();
  for (const t of tasks) {
    assert.ok(TASK_STATUSES.includes(t.status), `status ${t.status}`);
    assert.ok(t.queuePosition === null || (Number.isInteger(t.queuePosition) && t.queuePosition >= 1), `position ${t.queuePosition}`);
    assert.equal(typeof t.schedulable, 'boolean');
    if (isTerminalStatus(t.status)) assert.equal(t.schedulable, false, 'a terminal task is never schedulable');
    if (t.serverTicketId !== null) {
      const l = ledger.get(t.serverTicketId);
      assert.ok(l, `task ${t.id}'s ticket ${t.serverTicketId} is in the ledger`);
      assert.equal(l.taskId, t.id, 'the ledger row belongs to the same task');
      assert.ok(!owners.has(t.serverTicketId), 'no ticket is attached to two tasks');
      owners.set(t.serverTicketId, t.id);
      if (!isTerminalStatus(t.status) && t.schedulable)
        assert.ok(['ready', 'active'].includes(l.serverState), `schedulable on a ${l.serverState} ticket`);
    }
  }
  for (const l of tickets) {
    assert.ok(SETTLE_STATES.includes(l.settleState));
    assert.ok(SERVER_TICKET_STATES.includes(l.serverState));
    assert.ok(l.ordinal >= 0 && Number.isInteger(l.settleAttempts) && l.settleAttempts >= 0);
  }
}

describe('service fuzz: hostile gateway answers end to end', function () {
  this.timeout(300_000);
  let world: World;
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  before(() => process.on('unhandledRejection', onUnhandled));
  after(async () => {
    process.off('unhandledRejection', onUnhandled);
    await world?.close();
  });

  it('300 hostile answers through the fault proxy: no crash, no corrupted row, a clear error each time', async () => {
    world = await World.start({ gateway: { segmentCapacity: 3 }, timeoutMs: 1500 });
    const { service, store } = await world.openWindow();
    for (let i = 0; i < 4; i++) await service.create(taskInput());
    await world.promote();
    const errors = new Map<string, number>();
    const note = (k: string) => errors.set(k, (errors.get(k) ?? 0) + 1);

    // Besides arbitrary garbage: plausible answers naming the right ids but wrong states,
    // other tasks' tickets, and positions that make no sense.
    const plausible = fc.record({
      seed: fc.nat(),
      state: fc.constantFrom('queued', 'ready', 'active', 'expired', 'settled', 'not_found'),
      position: fc.oneof(fc.integer({ min: -3, max: 5 }), fc.constant(null)),
    });
    const rule = fc.oneof(
      {
        weight: 4,
        arbitrary: hostileAnswer().map((a): FaultRule =>
          a.kind === 'reset' ? { kind: 'drop' } : { kind: 'respond', response: { status: a.status, headers: a.headers, body: a.body } },
        ),
      },
      {
        weight: 2,
        arbitrary: plausible.map((p): FaultRule => ({
          kind: 'respond-with',
          respond: ({ body }) => {
            const now = world.clock.now();
            const ids = (body as { ticket_ids?: string[] })?.ticket_ids;
            const known = store.read((tx) => tx.tickets.list()).map((t) => t.ticketId);
            if (ids) {
              const tickets = ids.map((id) => ({
                ticket_id: id,
                task_id: 'x',
                state: p.state,
                position: p.position,
                taken_at: now,
                ready_at: now,
                ready_deadline: now + 1000,
                active_at: now,
                active_until: now + 5000,
                expired_at: now,
                expired_from: 'ready',
                settled_at: now,
                reason: 'completed',
                next_poll_after_ms: 1000,
              }));
              return { status: 200, body: JSON.stringify({ server_time: now, tickets, next_poll_after_ms: 1000 }) };
            }
            const taskId = (body as { task_id?: string })?.task_id ?? 'none';
            const ticketId = known.length > 0 && p.seed % 2 === 0 ? known[p.seed % known.length] : `fuzz-${p.seed}`;
            return {
              status: 200,
              body: JSON.stringify({
                server_time: now,
                ticket_id: ticketId,
                task_id: taskId,
                state: p.state,
                position: p.position,
                ready_deadline: null,
                active_until: null,
                next_poll_after_ms: 1000,
                reused: false,
              }),
            };
          },
        })),
      },
    );

    await fc.assert(
      fc.asyncProperty(
        rule,
        fc.constantFrom<Endpoint>('availability', 'take', 'status', 'settle'),
        fc.nat(),
        async (fault, endpoint, pick) => {
          world.proxy.clearFaults();
          world.proxy.enqueue(fault, { match: endpoints[endpoint], times: 2 });
          const tasks = service.listTasks();
          const live = tasks.filter((t) => !isTerminalStatus(t.status));
          try {
            switch (endpoint) {
              case 'availability':
                await service.availability.refresh();
                if (service.availability.state.status === 'error') note('availability error');
                break;
              case 'take':
                if (live.length > 12 && pick % 2 === 0) await service.cancel(live[pick % live.length].id);
                else {
                  await service.availability.refresh();
                  await service.create(taskInput());
                }
                break;
              case 'status': {
                const paused = live.find((t) => t.status === 'paused');
                if (paused && pick % 3 === 0) await service.continue(paused.id);
                else if (live.length > 0 && pick % 3 === 1 && live[pick % live.length].status === 'queued')
                  await service.pause(live[pick % live.length].id).catch(() => undefined);
                world.clock.advance(6 * 60_000); // every live ticket is due
                const report = await service.syncNow();
                if (report.error) {
                  assert.ok(report.error.length > 10);
                  note('sync error');
                }
                break;
              }
              case 'settle':
                // keep a handful of live tasks around so status answers have something to hit
                if (live.length < 6) await service.create(taskInput()).catch(() => undefined);
                if (live.length > 3) await service.cancel(live[pick % live.length].id);
                world.clock.advance(5 * 60_000);
                await service.syncNow();
                break;
            }
            note('ok');
          } catch (e) {
            assert.ok(e instanceof ServiceError, `only ServiceErrors reach the caller, got ${String(e)}`);
            assert.ok(e.message.length > 10);
            note(e.code);
          }
          await world.settle();
          assertRowsSound(store);
        },
      ),
      { numRuns: 300, seed: Number(process.env.FUZZ_SEED ?? 4242) },
    );

    console.log(
      '      outcomes:',
      JSON.stringify([...errors]),
      'tasks:',
      service.listTasks().length,
      'ledger:',
      store.read((tx) => tx.tickets.list()).length,
    );
    assert.deepEqual(unhandled, [], 'no unhandled rejection');
    assert.ok((errors.get('sync error') ?? 0) > 0 && (errors.get('ok') ?? 0) > 0, JSON.stringify([...errors]));

    // once the gateway behaves again, the service is fine: the outbox drains and create works
    world.proxy.clearFaults();
    await world.advance(30 * 60_000);
    assertRowsSound(store);
    // and no queued task is left stalled: each holds a ticket the gateway says is live
    const queued = service.listTasks().filter((t) => t.status === 'queued');
    const states = await world.gatewayStates(queued.map((t) => t.serverTicketId).filter((id): id is string => id !== null));
    for (const t of queued) {
      const ledgerOf = () => JSON.stringify(store.read((tx) => tx.tickets.forTask(t.id)));
      assert.ok(t.serverTicketId, `queued task ${t.id} has a ticket (last error: ${t.lastError}; ledger: ${ledgerOf()})`);
      assert.ok(
        ['queued', 'ready', 'active'].includes(states.get(t.serverTicketId)!),
        `queued task ${t.id}'s ticket is live (${states.get(t.serverTicketId)})`,
      );
    }
    const fresh = await service.create(taskInput());
    assert.ok(fresh.serverTicketId);
    const pending = store.read((tx) => tx.tickets.list({ settleState: 'pending' }));
    assert.deepEqual(
      pending.map((p) => [p.ticketId, p.lastError]),
      [],
      'every settle got through once the gateway behaved',
    );
  });
});
