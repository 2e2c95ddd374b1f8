// Trust II (issue 17) items 2 and 3, against the real gateway on loopback with simulated time
// (ManualClock + ManualTimers): what a recovery and the status sync do to a task whose ticket
// ended under it. docs/flows.md#recovery, docs/flows.md#sync, docs/flows.md#segments.
import assert from 'node:assert/strict';
import { USER, World, oneRunningTask } from './service-harness';

describe('service: recovery and segment ends (Trust II)', function () {
  this.timeout(60_000);
  let world: World;
  afterEach(async () => {
    await world?.close();
  });

  it('item 2: a task recovered from a crashed window whose ticket had expired takes its new ticket at once, with no timer fired in between', async () => {
    world = await World.start({ gateway: { activeWindowMs: 60_000 } });
    const { w, t, ticket1 } = await oneRunningTask(world);
    const { service, store } = w;
    await (await world.gateway.authority.admit(USER, ticket1)).release();
    await service.lifecycle.markAdmitted(ticket1);
    // The window running the task is gone; meanwhile the ticket's active window ends and the sync sees it.
    await world.advance(6 * 60_000);
    assert.ok(['expired', 'settled'].includes(store.read((tx) => tx.tickets.get(ticket1))!.serverState), 'the sync saw the ticket end');
    assert.equal(service.getTask(t.id)!.status, 'running');

    const takes = world.takeRequests();
    const at = world.clock.now();
    // What the lease holder's recovery does for the dead window's task.
    assert.deepEqual(await service.lifecycle.requeueInterrupted([t.id]), [t.id]);
    await world.settle(); // waits for in-flight work only: no timer fires, simulated time does not move
    assert.equal(world.clock.now(), at);
    assert.equal(world.takeRequests(), takes + 1, 'the new ticket was taken at once, not at the next lease tick or sync cycle');

    const after = service.getTask(t.id)!;
    assert.equal(after.status, 'queued');
    assert.equal(after.sessionId, `session-${t.id}`, 'same session');
    assert.ok(after.serverTicketId && after.serverTicketId !== ticket1, 'a new ticket is attached');
    const old = store.read((tx) => tx.tickets.get(ticket1))!;
    assert.equal(old.endReason, 'interrupted', 'the segment ended with the crash');
    assert.equal(old.settleReason, 'segment_end');
    assert.notEqual(old.settleState, 'none', 'the dead ticket is being settled');
  });

  it('item 3: a request admitted before the segment end and answered after it: the sync changes nothing on the running task; it completes as completed', async () => {
    world = await World.start({ gateway: { activeWindowMs: 60_000 } });
    const { w, t, ticket1 } = await oneRunningTask(world);
    const { service, store } = w;
    // The segment's last model request: admitted now, answered only after active_until.
    const request = await world.gateway.authority.admit(USER, ticket1);
    await service.lifecycle.markAdmitted(ticket1);
    // active_until passes while the request is in flight; the sync's next poll (at most 5 min) sees it.
    await world.advance(6 * 60_000);

    const during = store.read((tx) => tx.tickets.get(ticket1))!;
    assert.equal(service.getTask(t.id)!.status, 'running');
    assert.deepEqual(
      [during.endReason, during.segmentEndedAt, during.settleState, during.settleReason],
      [null, null, 'none', null],
      'the sync neither ended the segment nor settled the ticket',
    );
    assert.equal(during.serverState, 'expired', 'the sync recorded what the gateway said');

    await request.release(); // the answer arrives after the end
    assert.equal(await service.lifecycle.complete(t.id), true); // the runtime's outcome: the agent finished
    await world.settle();

    const task = service.getTask(t.id)!;
    assert.equal(task.status, 'completed');
    assert.equal(service.history()[0].status, 'succeeded');
    const row = store.read((tx) => tx.tickets.get(ticket1))!;
    assert.deepEqual(
      [row.endReason, row.settleReason, row.settleState],
      ['completed', 'completed', 'settled'],
      'ledger, end reason and settle reason say completed',
    );
    const settles = world.settleRequests().filter((r) => r.path.includes(ticket1));
    assert.equal(settles.length, 1);
    assert.equal((settles[0].body as { reason?: string }).reason, 'completed');
  });
});
