// Several VS Code windows = several TaskService instances, each with its own TaskStore on ONE
// DB file. Only the lease holder syncs, so three windows cost the gateway exactly what one does;
// with nothing live there are no requests at all. Real gateway on loopback.
import assert from 'node:assert/strict';
import { World, taskInput } from './service-harness';

/** Creates `tasks` tasks spread over the windows, then runs `minutes` of simulated time; counts status requests. */
async function scenario(windows: number, tasks: number, minutes: number): Promise<{ status: number; leaders: number; world: World }> {
  const world = await World.start({ gateway: { segmentCapacity: 5 } });
  for (let i = 0; i < windows; i++) await world.openWindow(`window-${i + 1}`);
  for (let i = 0; i < tasks; i++) await world.windows[i % windows].service.create(taskInput());
  const before = world.statusRequests();
  for (let m = 0; m < minutes; m++) {
    if (m % 3 === 0) await world.promote();
    await world.advance(60_000);
  }
  const leaders = world.windows.filter((w) => w.service.isLeader).length;
  return { status: world.statusRequests() - before, leaders, world };
}

describe('service: several windows on one DB file', function () {
  this.timeout(180_000);
  let worlds: World[] = [];
  afterEach(async () => {
    for (const w of worlds) await w.close();
    worlds = [];
  });

  it('three service instances on one DB file issue exactly as many status requests as one', async () => {
    const one = await scenario(1, 30, 20);
    worlds.push(one.world);
    const three = await scenario(3, 30, 20);
    worlds.push(three.world);
    assert.ok(one.status > 10, `the scenario really polls (${one.status} requests)`);
    assert.equal(three.status, one.status);
    assert.equal(three.leaders, 1, 'exactly one window holds the lease');
    // every window sees the same rows
    const rows = three.world.windows.map((w) =>
      w.service
        .listTasks()
        .map((t) => `${t.id}:${t.serverTicketId}:${t.schedulable}`)
        .join('|'),
    );
    assert.equal(new Set(rows).size, 1);
  });

  it('the lease moves to another window when the holder stops; still one poller', async () => {
    const world = await World.start({});
    worlds.push(world);
    const a = await world.openWindow('a');
    const b = await world.openWindow('b');
    assert.equal(a.service.isLeader, true);
    assert.equal(b.service.isLeader, false);
    await b.service.create(taskInput());
    await world.advance(60_000);
    const byA = world.statusRequests();
    assert.ok(byA >= 3);
    await a.service.stop(); // releases the lease
    await world.advance(60_000);
    assert.equal(b.service.isLeader, true);
    assert.ok(world.statusRequests() > byA, 'b took over the polling');
  });

  it('with nothing live, zero requests over a simulated hour (three windows)', async () => {
    const world = await World.start({});
    worlds.push(world);
    for (let i = 0; i < 3; i++) await world.openWindow();
    // some history: a task that was cancelled and settled, one paused without a ticket... nothing live
    const t = await world.windows[0].service.create(taskInput());
    await world.windows[0].service.cancel(t.id);
    await world.advance(60_000);
    assert.equal(world.store0().read((tx) => tx.tickets.get(t.serverTicketId!))!.settleState, 'settled');
    world.proxy.resetLog();
    await world.advance(60 * 60_000);
    assert.equal(world.proxy.seen.length, 0, `requests in the idle hour: ${JSON.stringify(world.proxy.seen.map((r) => r.path))}`);
    assert.equal(world.windows.filter((w) => w.service.isLeader).length, 1, 'the lease is still held (local only)');
  });
});
