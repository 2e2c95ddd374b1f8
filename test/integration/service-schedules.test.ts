// Repeating schedules in the service (docs/flows.md#schedules-and-chains): three windows (three
// TaskServices, each with its own store on ONE sql.js DB file) against the REAL reference gateway
// on loopback, on one manual clock. Nothing wakes while nothing is due; the occurrence is fired by
// the lease holder once and its task takes one ticket.
import assert from 'node:assert/strict';
import { machineTimeZone, wallTimeAt } from '../../src/core/zoned-time';
import type { ScheduleDraftRecord } from '../../src/store';
import type { TimerHandle, Timers } from '../../src/core/timers';
import { GatewayClient } from '../../src/gateway-client/client';
import { TaskService } from '../../src/service';
import { TaskStore } from '../../src/store';
import { API_KEY, startRunning, World } from './service-harness';

/**
 * Timers as the machine's are: they count time the machine is awake only (a suspended machine's
 * monotonic clock stands still), while the wall clock (the world's ManualClock) also moves in `sleep`.
 */
class AwakeTimers implements Timers {
  private entries: { id: number; at: number; fn: () => void }[] = [];
  private nextId = 1;
  constructor(private readonly clock: World['clock']) {}
  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const entry = { id: this.nextId++, at: this.clock.now() + Math.max(0, delayMs), fn };
    this.entries.push(entry);
    return { id: entry.id };
  }
  clearTimeout(handle: TimerHandle | undefined): void {
    if (handle) this.entries = this.entries.filter((e) => e.id !== handle.id);
  }
  /** The machine sleeps `ms`: the wall clock moves, pending timers are that much further away. */
  sleep(ms: number): void {
    this.clock.set(this.clock.now() + ms);
    for (const e of this.entries) e.at += ms;
  }
  /** The machine is awake `ms`: due timers fire in order, `settle` after each. */
  async advance(ms: number, settle: () => Promise<void>): Promise<void> {
    const until = this.clock.now() + ms;
    for (;;) {
      const next = this.entries.reduce<(typeof this.entries)[number] | undefined>((a, e) => (!a || e.at < a.at ? e : a), undefined);
      if (!next || next.at > until) break;
      this.entries = this.entries.filter((e) => e !== next);
      if (next.at > this.clock.now()) this.clock.set(next.at);
      next.fn();
      await settle();
    }
    this.clock.set(until);
  }
}

const MINUTE = 60_000;

const draft = (i: number): ScheduleDraftRecord => ({
  title: `Nightly ${i}`,
  prompt: `Update dependency group ${i}`,
  workspacePath: '/tmp/ws-a',
  workspaceIdentity: null,
  permissionMode: 'acceptEdits',
  model: null,
  thoughtLevel: null,
  isolation: null,
  checkCommand: null,
});

describe('service: repeating schedules (docs/flows.md#schedules-and-chains)', function () {
  this.timeout(120_000);
  let world: World;
  afterEach(async () => {
    await world?.close();
  });

  it('100 schedules, one due in 30 min: lease ticks until then write nothing and ask the gateway nothing; at its time the holder queues its run once, which takes one ticket', async () => {
    world = await World.start();
    const holder = await world.openWindow('holder');
    const w2 = await world.openWindow('w2');
    const w3 = await world.openWindow('w3');
    assert.equal(holder.service.isLeader, true);
    const zone = machineTimeZone();
    const start = world.clock.now();
    const minuteNow = wallTimeAt(start, zone).minuteOfDay;
    // 99 schedules due 6 h or more from now; one at the minute 30 min ahead.
    for (let i = 0; i < 99; i++) await w2.service.schedules.create(draft(i), { kind: 'daily', at: (minuteNow + 6 * 60 + i) % 1440 });
    const soon = await w3.service.schedules.create(draft(99), { kind: 'daily', at: (minuteNow + 30) % 1440 });
    const dueAt = start - (start % MINUTE) + 30 * MINUTE;
    await world.advance(1_000);
    assert.equal(holder.service.nextDueAt(), dueAt, "the holder's one planned wake-up is the earliest occurrence");

    const persists = () => world.windows.map((w) => w.store.stats.persists);
    const before = persists();
    const requests = world.proxy.forwarded({}).length;
    await world.advance(dueAt - world.clock.now() - 30_000);
    assert.deepEqual(persists(), before, 'no window wrote the DB while nothing was due');
    assert.equal(world.proxy.forwarded({}).length, requests, 'no request to the gateway while nothing was due');
    assert.equal(holder.service.listTasks().length, 0);

    await world.advance(31_000);
    const runs = holder.store.read((tx) => tx.schedules.runsOf(soon.id));
    assert.equal(runs.length, 1, 'one run recorded');
    assert.equal(runs[0]!.catchUp, false);
    const tasks = holder.service.listTasks();
    assert.equal(tasks.length, 1, 'one task queued, by one window');
    assert.equal(tasks[0]!.id, runs[0]!.taskId);
    assert.ok(tasks[0]!.serverTicketId, 'its ticket was taken at its time');
    assert.equal(world.takeRequests(), 1);
    // The other 99 stay quiet: the next wake-up is the next occurrence, hours away.
    assert.ok((holder.service.nextDueAt() ?? 0) > dueAt, 'the timer moved on');
  });

  it('the previous run still running: the next occurrence is skipped and says so, queues nothing and takes no ticket', async () => {
    world = await World.start();
    const holder = await world.openWindow('holder');
    const zone = machineTimeZone();
    const s = await holder.service.schedules.create(draft(1), {
      kind: 'daily',
      at: (wallTimeAt(world.clock.now(), zone).minuteOfDay + 5) % 1440,
    });
    await world.advance(6 * MINUTE);
    const [first] = holder.service.listTasks();
    assert.ok(first?.serverTicketId, 'the first run took its ticket');
    await world.promote();
    await world.advance(15_000);
    await startRunning(holder, first.id);
    await world.advance(24 * 60 * MINUTE);
    const runs = holder.store.read((tx) => tx.schedules.runsOf(s.id));
    assert.deepEqual(
      runs.map((r) => r.outcome),
      ['skipped', 'queued'],
    );
    assert.match(runs[0]!.note ?? '', /^Skipped the .+ run: the previous run is still running\.$/);
    assert.equal(runs[0]!.taskId, null);
    assert.equal(holder.service.listTasks().length, 1, 'no second task');
    assert.equal(world.takeRequests(), 1, 'no second ticket');
  });

  it('three days with every window closed: the window opened next queues one catch-up run, marked with the missed count', async () => {
    world = await World.start();
    const first = await world.openWindow('first');
    const zone = machineTimeZone();
    const s = await first.service.schedules.create(draft(1), {
      kind: 'daily',
      at: (wallTimeAt(world.clock.now(), zone).minuteOfDay + 60) % 1440,
    });
    await first.service.stop();
    world.clock.set(world.clock.now() + 3 * 24 * 60 * MINUTE);
    const next = await world.openWindow('next');
    await world.advance(1_000);
    assert.equal(next.service.isLeader, true);
    const runs = next.store.read((tx) => tx.schedules.runsOf(s.id));
    assert.equal(runs.length, 1, 'one run for the stretch');
    assert.deepEqual([runs[0]!.outcome, runs[0]!.catchUp, runs[0]!.missedCount], ['queued', true, 2]);
    assert.equal(next.service.listTasks().length, 1);
  });

  it("the machine slept past a schedule's time (its timer counts awake time only): the first lease tick after waking queues the catch-up run", async () => {
    world = await World.start();
    const timers = new AwakeTimers(world.clock);
    const store = await TaskStore.open({ directory: world.dir, clock: world.clock, watch: false, durable: false });
    const gateway = new GatewayClient({ baseUrl: world.proxy.baseUrl, apiKey: () => API_KEY, clock: world.clock });
    const service = new TaskService({ store, gateway, clock: world.clock, timers, windowId: 'laptop', sync: { longPollMs: 0 } });
    const settle = async () => {
      await service.idle();
      await new Promise((r) => setImmediate(r));
    };
    try {
      await service.start();
      assert.equal(service.isLeader, true);
      const zone = machineTimeZone();
      const s = await service.schedules.create(draft(1), {
        kind: 'daily',
        at: (wallTimeAt(world.clock.now(), zone).minuteOfDay + 10) % 1440,
      });
      await timers.advance(MINUTE, settle);
      timers.sleep(3 * 60 * MINUTE);
      // Awake again for one lease tick (30 s): the sync timer, pushed 3 h out by the sleep, has not fired.
      await timers.advance(31_000, settle);
      const runs = store.read((tx) => tx.schedules.runsOf(s.id));
      assert.equal(runs.length, 1, 'queued at the first tick after waking');
      assert.equal(runs[0]!.catchUp, true);
      assert.equal(service.listTasks().length, 1);
    } finally {
      await service.stop();
      await store.close();
    }
  });

  it('pause, resume, edit and delete from any window: paused fires nothing and catches nothing up; a deleted schedule leaves its queued run as an ordinary task', async () => {
    world = await World.start();
    const holder = await world.openWindow('holder');
    const w2 = await world.openWindow('w2');
    const zone = machineTimeZone();
    const minuteNow = wallTimeAt(world.clock.now(), zone).minuteOfDay;
    const s = await w2.service.schedules.create(draft(1), { kind: 'daily', at: (minuteNow + 10) % 1440 });
    await w2.service.schedules.setPaused(s.id, true);
    await world.advance(20 * MINUTE);
    assert.equal(holder.service.listTasks().length, 0, 'paused: nothing fired');
    assert.equal(holder.service.nextDueAt(), undefined, 'paused: no timer');
    await w2.service.schedules.setPaused(s.id, false);
    await world.advance(MINUTE);
    assert.equal(holder.service.listTasks().length, 0, 'resumed: the paused occurrence is not caught up');

    await w2.service.schedules.edit(
      s.id,
      { ...draft(1), prompt: 'edited' },
      { kind: 'daily', at: (wallTimeAt(world.clock.now(), zone).minuteOfDay + 5) % 1440 },
    );
    await world.advance(6 * MINUTE);
    const [run] = holder.service.listTasks();
    assert.equal(run?.prompt, 'edited', 'the edited draft queues the next run');
    await w2.service.schedules.delete(s.id);
    assert.equal(holder.service.schedules.list().length, 0);
    assert.equal(holder.service.getTask(run!.id)?.status, 'queued', 'its queued run stays');
    await assert.rejects(w2.service.schedules.setPaused(s.id, true), /there is no schedule/);
  });
});
