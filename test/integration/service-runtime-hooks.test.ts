// The lifecycle changes the runtime makes (through the window's TaskLifecycle), against the real gateway:
// first admission / 3102 expiry -> requeue + retake with the same task id / terminal settle.
import assert from 'node:assert/strict';
import { USER, World, oneRunningTask, startRunning } from './service-harness';

describe('service: runtime hooks', function () {
  this.timeout(60_000);
  let world: World;
  afterEach(async () => {
    await world?.close();
  });

  it('3h ticket change: lifecycle.expireSegment requeues (same session, started_at kept), settles the old ticket and retakes with the same task id', async () => {
    world = await World.start({ gateway: { activeWindowMs: 60_000 } });
    const { w, t, ticket1 } = await oneRunningTask(world);
    const { service, store } = w;
    const started = service.getTask(t.id)!.startedAt;
    await (await world.gateway.authority.admit(USER, ticket1)).release();
    await service.lifecycle.markAdmitted(ticket1);
    assert.ok(store.read((tx) => tx.tickets.get(ticket1))!.activeAt, 'first admission recorded');
    await world.advance(61_000); // the active window ends; the agent's next model call would get 3102
    world.proxy.resetLog();
    assert.equal(await service.lifecycle.expireSegment(t.id, ticket1), true);
    await world.settle();

    const after = service.getTask(t.id)!;
    assert.equal(after.status, 'queued');
    assert.equal(after.sessionId, `session-${t.id}`, 'same session');
    assert.equal(after.startedAt, started, 'started_at kept');
    assert.ok(after.serverTicketId && after.serverTicketId !== ticket1);
    const ledger = store.read((tx) => tx.tickets.forTask(t.id));
    assert.deepEqual(
      ledger.map((l) => [l.ordinal, l.ticketId, l.endReason, l.settleState, l.settleReason]),
      [
        [1, ticket1, 'expired', 'settled', 'segment_end'],
        [2, after.serverTicketId, null, 'none', null],
      ],
    );
    const takes = world.proxy.forwarded().filter((r) => r.path === '/api/v1/off-peak/ticket');
    assert.deepEqual(
      takes.map((r) => r.body),
      [{ task_id: t.id }],
    );
    const states = await world.gatewayStates([ticket1, after.serverTicketId!]);
    assert.deepEqual([states.get(ticket1), states.get(after.serverTicketId!)], ['settled', 'queued']);
    // one History row however many segments
    await world.promote();
    await world.advance(15_000);
    await startRunning(w, t.id);
    await service.lifecycle.complete(t.id);
    await world.settle();
    assert.equal(service.history().length, 1);
    assert.equal(service.history()[0].status, 'succeeded');
    assert.ok(store.read((tx) => tx.tickets.forTask(t.id)).every((l) => l.settleState === 'settled'));
  });

  it('a retake that fails leaves the task queued without a ticket; the leader retakes later (never stalled)', async () => {
    world = await World.start({});
    const { w, t, ticket1 } = await oneRunningTask(world);
    await world.proxy.goDown();
    assert.equal(await w.service.lifecycle.expireSegment(t.id, ticket1), false);
    assert.equal(w.service.getTask(t.id)!.serverTicketId, null);
    assert.match(w.service.getTask(t.id)!.lastError ?? '', /retake failed/);
    await world.advance(60_000);
    await world.proxy.comeUp();
    await world.advance(5 * 60_000);
    const after = w.service.getTask(t.id)!;
    assert.ok(after.serverTicketId && after.serverTicketId !== ticket1);
    assert.equal(after.lastError, null);
    assert.equal(w.store.read((tx) => tx.tickets.get(ticket1))!.settleState, 'settled');
  });
});
