// Sync cost against the real reference gateway on loopback (requests counted at the fault-proxy
// fixture, which passes everything through here), with simulated time:
// - requests_per_cycle_250: status requests per sync cycle with 250 live tickets (goal 3: batches of 100);
// - idle_requests_per_hour: requests of any kind in a simulated hour with nothing live (goal 0);
// - windows3_vs_1: status requests with three windows on one DB file / with one (goal 1.0).
// Writes bench/results/sync.json and prints it.
import { World, taskInput } from '../test/integration/service-harness';
import { publish, sized } from './mode';

async function requestsPerCycle(live: number): Promise<number> {
  const world = await World.start({ gateway: { segmentCapacity: 0 } }); // all stay queued
  try {
    const { service } = await world.openWindow();
    for (let i = 0; i < live; i++) await service.create(taskInput());
    const cycles: number[] = [];
    service.onDidSync((r) => {
      if (r.statusRequests > 0) cycles.push(r.statusRequests);
    });
    await world.advance(5 * 60_000);
    return cycles.reduce((a, b) => a + b, 0) / Math.max(1, cycles.length);
  } finally {
    await world.close();
  }
}

async function idleRequestsPerHour(): Promise<number> {
  const world = await World.start({});
  try {
    await world.openWindow();
    await world.openWindow();
    world.proxy.resetLog();
    await world.advance(60 * 60_000);
    return world.proxy.seen.length;
  } finally {
    await world.close();
  }
}

async function statusRequestsWith(windows: number): Promise<number> {
  const world = await World.start({ gateway: { segmentCapacity: 5 } });
  try {
    for (let i = 0; i < windows; i++) await world.openWindow(`window-${i + 1}`);
    for (let i = 0; i < 60; i++) await world.windows[i % windows].service.create(taskInput());
    const before = world.statusRequests();
    for (let m = 0; m < 30; m++) {
      if (m % 3 === 0) await world.promote();
      await world.advance(60_000);
    }
    return world.statusRequests() - before;
  } finally {
    await world.close();
  }
}

async function main(): Promise<void> {
  const requests_per_cycle_250 = await requestsPerCycle(sized(250, 120));
  const idle_requests_per_hour = await idleRequestsPerHour();
  const one = await statusRequestsWith(1);
  const three = await statusRequestsWith(3);
  const result = {
    requests_per_cycle_250,
    idle_requests_per_hour,
    windows3_vs_1: Math.round((three / one) * 1000) / 1000,
    status_requests_1_window: one,
    status_requests_3_windows: three,
  };
  publish('sync', result);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
