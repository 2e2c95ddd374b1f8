// Outage: the gateway is down (connection refused), or answers 5xx, or never answers, for a
// simulated 5 minutes while tasks complete, are cancelled and are deleted. Afterwards every
// ticket of a finished or deleted task is settled ON THE GATEWAY, none is lost, and the running
// task was never touched. Real reference gateway on loopback; faults from the fault proxy.
import assert from 'node:assert/strict';
import { ServiceError } from '../../src/service';
import type { FaultRule } from '../fixtures/fault-proxy';
import { World, taskInput, startRunning } from './service-harness';

type Outage = 'down' | '5xx' | 'timeout';

const faults: Record<Exclude<Outage, 'down'>, FaultRule> = {
  '5xx': {
    kind: 'respond',
    response: {
      status: 503,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', code: 'internal', message: 'maintenance' } }),
    },
  },
  timeout: { kind: 'hang' },
};

describe('service: gateway outage for 5 simulated minutes', function () {
  this.timeout(120_000);
  let world: World;
  afterEach(async () => {
    await world?.close();
  });

  for (const outage of ['down', '5xx', 'timeout'] as const) {
    it(`outage (${outage}): tasks complete, are cancelled and deleted; afterwards every ticket is settled and none is lost (a deleted task's leaves the ledger once settled)`, async () => {
      world = await World.start({ gateway: { segmentCapacity: 4 }, timeoutMs: 600 });
      const w = await world.openWindow();
      const { service, store } = w;
      const tasks = [];
      for (let i = 0; i < 8; i++) tasks.push(await service.create(taskInput()));
      await world.promote(); // 0..3 ready
      await world.advance(15_000);
      for (const t of tasks.slice(0, 4)) assert.equal(service.getTask(t.id)!.schedulable, true);
      await startRunning(w, tasks[0].id);
      await startRunning(w, tasks[1].id);
      await startRunning(w, tasks[2].id);
      const keepsRunning = await startRunning(w, tasks[3].id);

      // ---- the outage starts
      if (outage === 'down') await world.proxy.goDown();
      else world.proxy.setFault(faults[outage]);
      const seenBefore = world.proxy.seen.length;
      const start = world.clock.now();
      const at = async (offsetMs: number) => world.advance(start + offsetMs - world.clock.now());

      await at(30_000);
      assert.equal(await service.lifecycle.complete(tasks[0].id, { filesChanged: 1 }), true);
      await at(60_000);
      await service.cancel(tasks[1].id); // running
      await at(90_000);
      await service.cancel(tasks[4].id); // queued
      await at(120_000);
      assert.equal(await service.delete(tasks[5].id), true); // queued: cancel, then delete
      await at(150_000);
      assert.equal(await service.lifecycle.fail(tasks[2].id, { failureReason: 'tests failed' }), true);
      await at(180_000);
      assert.equal(await service.delete(tasks[0].id), true); // completed: straight delete
      await at(200_000);
      await assert.rejects(service.create(taskInput()), (e) => e instanceof ServiceError && e.code === 'gateway_unavailable');
      await at(5 * 60_000);

      // during the outage: everything waits in the outbox, nothing was lost, the running task untouched
      const finished = [tasks[0], tasks[1], tasks[2], tasks[4], tasks[5]];
      for (const t of finished) {
        const l = store.read((tx) => tx.tickets.get(t.serverTicketId!))!;
        assert.equal(l.settleState, 'pending', `ticket of ${t.title} waits in the outbox`);
        assert.ok(l.settleAttempts >= 1);
      }
      assert.equal(service.getTask(tasks[0].id), undefined);
      assert.equal(service.getTask(tasks[5].id), undefined);
      assert.equal(service.getTask(tasks[3].id)!.status, 'running');
      assert.equal(service.getTask(tasks[3].id)!.serverTicketId, keepsRunning);
      assert.equal(service.listTasks().length, 6, 'the failed create inserted nothing');
      // backoff, not hammering: sync cycles at 10, 20, 40, 80, 160 s after the first failure
      const duringOutage = world.proxy.seen.length - seenBefore;
      if (outage !== 'down') assert.ok(duringOutage <= 20, `requests during the outage: ${duringOutage}`);
      const onGateway = await world.gatewayStates(finished.map((t) => t.serverTicketId!));
      assert.ok(
        [...onGateway.values()].every((s) => s !== 'settled'),
        'the gateway has not heard of any settle yet',
      );

      // ---- the gateway is back
      if (outage === 'down') await world.proxy.comeUp();
      else world.proxy.clearFaults();
      await world.advance(10 * 60_000);

      const issued = world.issuedTickets();
      const ledger = store.read((tx) => tx.tickets.list());
      const ledgerIds = new Set(ledger.map((t) => t.ticketId));
      // A deleted task's ticket leaves the ledger once its settle is acknowledged (docs/flows.md#ticket-ledger).
      const deleted = new Set([tasks[0].serverTicketId!, tasks[5].serverTicketId!]);
      for (const id of issued)
        assert.equal(
          ledgerIds.has(id),
          !deleted.has(id),
          `ticket ${id} issued by the gateway is in the ledger unless its task was deleted`,
        );
      const states = await world.gatewayStates(issued);
      for (const t of finished) {
        assert.equal(states.get(t.serverTicketId!), 'settled', `${t.title}'s ticket settled on the gateway`);
        if (!deleted.has(t.serverTicketId!)) assert.equal(store.read((tx) => tx.tickets.get(t.serverTicketId!))!.settleState, 'settled');
      }
      const reasons = world
        .settleRequests()
        .filter((r) => r.path.includes('/settle'))
        .map((r) => (r.body as { reason: string }).reason);
      assert.ok(reasons.includes('completed') && reasons.includes('cancelled') && reasons.includes('failed'));
      // the live ones stay live; nothing else was settled
      for (const t of [tasks[3], tasks[6], tasks[7]]) {
        const id = service.getTask(t.id)!.serverTicketId!;
        assert.notEqual(states.get(id), 'settled');
      }
      assert.equal(service.getTask(tasks[3].id)!.status, 'running');
      assert.ok(service.getTask(tasks[2].id)!.settledAt, 'the failed task is marked settled');
    });
  }

  it('slow gateway: a slow answer within the time limit is applied; a take slower than the limit is retried with the same task id and yields one ticket', async () => {
    world = await World.start({ timeoutMs: 700 });
    const w = await world.openWindow();
    const a = await w.service.create(taskInput());
    await world.promote();
    world.proxy.enqueue({ kind: 'slow', delayMs: 300 }, { match: (_m, p) => p.includes('/status') });
    await world.advance(15_000);
    assert.equal(w.service.getTask(a.id)!.schedulable, true, 'the slow answer was applied');
    // the first take answer arrives after the client gave up; the gateway did create the ticket
    world.proxy.enqueue({ kind: 'slow', delayMs: 1_000 }, { match: (m, p) => m === 'POST' && p === '/api/v1/off-peak/ticket' });
    const b = await w.service.create(taskInput());
    await new Promise((r) => setTimeout(r, 1_200)); // let the late answer land (and be ignored)
    const takes = world.proxy
      .forwarded()
      .filter((r) => r.path === '/api/v1/off-peak/ticket' && (r.body as { task_id: string }).task_id === b.id);
    assert.equal(takes.length, 2, 'timed out once, retried once');
    assert.deepEqual(
      new Set(takes.map((r) => (r.gatewayBody as { ticket_id: string }).ticket_id)),
      new Set([b.serverTicketId]),
      'both answers name the same ticket: retry-safe, nothing orphaned',
    );
    assert.equal(w.store.read((tx) => tx.tickets.forTask(b.id)).length, 1);
  });
});
