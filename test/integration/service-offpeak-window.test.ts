// When the off-peak window next opens, as the extension's client and service learn it from the
// REAL reference gateway (loopback, ManualClock shared with the client side).
import assert from 'node:assert/strict';
import { World, taskInput } from './service-harness';

const HOUR = 3_600_000;

describe('service: the off-peak window opening time from the real gateway', function () {
  this.timeout(60_000);
  let world: World;
  afterEach(async () => {
    await world?.close();
  });

  // START is 20:00 UTC; a 19:00–23:00 UTC peak means the window is closed and opens at 23:00.
  const peakNow = { alwaysOpen: false, timeZone: 'UTC', peak: ['19:00-23:00'] };

  it('availability and the queued tickets\' status keep "closed until 23:00"; it reads open from 23:00', async () => {
    world = await World.start({ gateway: peakNow });
    const opensAt = world.clock.now() + 3 * HOUR;
    const { service } = await world.openWindow();
    let changes = 0;
    service.availability.onDidChange(() => (changes += 1));
    await service.availability.refresh();
    assert.deepEqual(service.availability.offPeakWindow, { open: false, opensAt });
    assert.equal(service.availability.state.status, 'enabled', 'a closed window still lets tickets be taken');

    const task = await service.create(taskInput());
    assert.equal(service.getTask(task.id)!.status, 'queued');
    // The sync's status answers carry it too (here: the same opening, so no change event).
    const changesBefore = changes;
    // While closed the gateway asks for a poll every 5 min (its maximum), not at once.
    await world.advance(6 * 60_000);
    assert.ok(world.statusRequests() > 0, 'the sync polled the queued ticket');
    assert.deepEqual(service.availability.offPeakWindow, { open: false, opensAt });
    assert.equal(changes, changesBefore, 'an unchanged opening time does not re-render anything');

    // At 23:00 the window opens.
    world.clock.set(opensAt - 60_000);
    await world.advance(60_000);
    assert.deepEqual(service.availability.offPeakWindow, { open: true }, 'past the opening time it reads as open');
  });

  it("a queued ticket's status updates the projection without an availability check", async () => {
    world = await World.start({ gateway: peakNow });
    const opensAt = world.clock.now() + 3 * HOUR;
    const { service } = await world.openWindow();
    await service.create(taskInput());
    const checks = world.proxy.forwarded({ pathIncludes: '/availability' }).length;
    // Forget what availability said: only the sync's status answer can tell it again.
    service.availability.noteOffPeakWindow({ open: true });
    await world.advance(6 * 60_000);
    assert.ok(world.statusRequests() > 0, 'the sync polled the queued ticket');
    assert.equal(world.proxy.forwarded({ pathIncludes: '/availability' }).length, checks, 'no availability request');
    assert.deepEqual(service.availability.offPeakWindow, { open: false, opensAt });
  });

  it('windows closed with no opening scheduled: opensAt null', async () => {
    world = await World.start({ gateway: { alwaysOpen: false, windowsClosed: true } });
    const { service } = await world.openWindow();
    await service.availability.refresh();
    assert.deepEqual(service.availability.offPeakWindow, { open: false, opensAt: null });
  });
});
