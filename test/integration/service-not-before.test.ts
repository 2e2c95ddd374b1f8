// "Not before" (docs/flows.md#schedules-and-chains): a task created to start later takes its ticket
// at that time, so its place in the gateway's FIFO counts from then. Three windows (three
// TaskServices, each with its own store on ONE sql.js DB file) against the REAL reference gateway
// on loopback, on one manual clock.
import assert from 'node:assert/strict';
import { World, taskInput } from './service-harness';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('service: "not before" takes the ticket at that time (docs/flows.md#schedules-and-chains)', function () {
  this.timeout(60_000);
  let world: World;
  afterEach(async () => {
    await world?.close();
  });

  it('three windows: no ticket until the time, one take then, behind a task queued in between', async () => {
    world = await World.start();
    const holder = await world.openWindow('holder');
    const w2 = await world.openWindow('w2');
    const w3 = await world.openWindow('w3');
    assert.equal(holder.service.isLeader, true);
    const notBefore = world.clock.now() + 20 * MINUTE;

    const later = await w2.service.create(taskInput({ title: 'nightly', notBefore }));
    assert.equal(later.notBefore, notBefore);
    assert.equal(later.serverTicketId, null, 'stored without a ticket');
    assert.equal(world.takeRequests(), 0, 'no take at creation');

    await world.advance(10 * MINUTE);
    const between = await w3.service.create(taskInput({ title: 'queued in between' }));
    assert.equal(world.takeRequests(), 1);

    await world.advance(notBefore - world.clock.now() - 1_000);
    assert.equal(holder.service.getTask(later.id)?.serverTicketId, null, 'still no ticket a second before');
    assert.equal(world.takeRequests(), 1, 'nothing taken for it before its time');

    await world.advance(2_000);
    const taken = holder.service.getTask(later.id)!;
    assert.ok(taken.serverTicketId, 'taken at its time');
    assert.equal(world.takeRequests(), 2, 'one take, by the lease holder only');
    const ledger = holder.store.read((tx) => tx.tickets.forTask(later.id));
    assert.equal(ledger.length, 1);
    assert.ok(ledger[0]!.takenAt >= notBefore, 'the ticket is not older than its time');
    const behind = holder.store.read((tx) => tx.tickets.forTask(between.id))[0]!;
    assert.ok(behind.takenAt < ledger[0]!.takenAt);
    assert.ok(
      (taken.queuePosition ?? 0) > (holder.service.getTask(between.id)!.queuePosition ?? Infinity),
      'its FIFO place counts from its time: behind the task queued in between',
    );
  });

  it('the lease holder closes before the time: the next holder takes the ticket at the time, once', async () => {
    world = await World.start();
    const holder = await world.openWindow('holder');
    const next = await world.openWindow('next');
    const notBefore = world.clock.now() + 10 * MINUTE;
    const later = await next.service.create(taskInput({ notBefore }));
    await holder.service.stop();
    await world.advance(5 * MINUTE);
    assert.equal(next.service.isLeader, true, 'the other window holds the lease');
    assert.equal(world.takeRequests(), 0);
    await world.advance(5 * MINUTE + 1_000);
    assert.ok(next.service.getTask(later.id)?.serverTicketId, 'taken at its time by the new holder');
    assert.equal(world.takeRequests(), 1);
  });

  it('pause, continue, edit and delete work on it before its time, and never take early', async () => {
    world = await World.start();
    const holder = await world.openWindow('holder');
    const other = await world.openWindow('other');
    const notBefore = world.clock.now() + HOUR;
    const a = await other.service.create(taskInput({ notBefore }));
    const b = await other.service.create(taskInput({ notBefore }));

    await other.service.pause(a.id);
    const continued = await other.service.continue(a.id);
    assert.equal(continued.ticket, 'scheduled', 'continued before its time, it waits for it');
    assert.equal(world.takeRequests(), 0);

    const edited = await other.service.edit(a.id, { title: 'moved', notBefore: notBefore + HOUR });
    assert.equal(edited.notBefore, notBefore + HOUR);
    await other.service.delete(b.id);

    await world.advance(HOUR + 1_000);
    assert.equal(world.takeRequests(), 0, 'the deleted one never took, the moved one not yet');
    await world.advance(HOUR);
    assert.equal(world.takeRequests(), 1);
    assert.ok(holder.service.getTask(a.id)?.serverTicketId, 'the moved one took its ticket at its new time');
    await assert.rejects(
      other.service.edit(a.id, { notBefore: world.clock.now() + HOUR }),
      /ticket was taken meanwhile: its start time can no longer be moved/,
      'its time cannot move once its ticket is taken, and it says why',
    );
  });
});
