// Repeating schedules with three windows on one task DB (docs/flows.md#schedules-and-chains):
// HostEngines with their own store instances on ONE globalStorage, as three VS Code windows are, on
// the real clock, in front of the REAL reference gateway (loopback) and the scripted fake model
// upstream (a fixture standing in for the model API); real reference-agent processes and real git.
// The rule is a daily one at the next minute in the machine's zone: the test waits for it.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { wallTimeAt, machineTimeZone } from '../../src/core/zoned-time';
import type { HostEngine } from '../../src/engine/host-engine';
import { fireDueSchedules } from '../../src/service/schedule-firing';
import type { ScheduleDraftRecord } from '../../src/store';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { spawnHost } from './spawn-host';
import { waitFor } from './test-engine';
import { startWindow, type SharedStorage } from './two-windows';

const ENDED = ['completed', 'failed', 'cancelled'];

/** The next minute boundary at least `leadMs` ahead, and its minute of the day in the machine's zone. */
function nextMinute(leadMs: number): { dueAt: number; at: number } {
  const dueAt = Math.ceil((Date.now() + leadMs) / 60_000) * 60_000;
  return { dueAt, at: wallTimeAt(dueAt, machineTimeZone()).minuteOfDay };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('repeating schedules, three windows on one task DB (real gateway, reference agent processes)', function () {
  this.timeout(240_000);
  let world: GatewayWorld;
  let place: SharedStorage;
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    world = await startWorld();
    place = {
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      engines: [] as HostEngine[],
    };
  });
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const e of place.engines.splice(0)) await e.dispose();
    await world.close();
  });

  const draft = (ws: string): ScheduleDraftRecord => ({
    title: 'Nightly deps',
    prompt: 'say hi',
    workspacePath: ws,
    workspaceIdentity: null,
    permissionMode: 'plan',
    model: null,
    thoughtLevel: null,
    isolation: null,
    checkCommand: null,
  });

  /** Every run row and every task the schedule queued, as `engine`'s store reads the shared DB. */
  function runsOf(engine: HostEngine, scheduleId: string) {
    return engine.store.read((tx) => {
      const runs = tx.schedules.runsOf(scheduleId, 100);
      const tasks = [...tx.schedules.runsByTask().values()].filter((r) => r.scheduleId === scheduleId).map((r) => tx.tasks.get(r.taskId!)!);
      return { runs, tasks };
    });
  }

  async function runEnds(engine: HostEngine, scheduleId: string) {
    return waitFor(
      () => {
        const task = runsOf(engine, scheduleId).tasks[0];
        return task && ENDED.includes(task.status) ? task : undefined;
      },
      'the scheduled run to end',
      150_000,
    );
  }

  it("a schedule's occurrence is queued exactly once across three windows, even when every window fires at the due time", async () => {
    const ws = makeGitWorkspace(world.root, 'ws');
    for (let i = 0; i < 4; i++) world.upstream.enqueue({ kind: 'text', text: 'Done.' });
    const windows: HostEngine[] = [];
    for (const [id, folders] of [
      ['window-1', []],
      ['window-2', [ws]],
      ['window-3', []],
    ] as const)
      windows.push((await startWindow(place, id, [...folders])).engine);
    assert.deepEqual(
      windows.map((w) => w.service.isLeader),
      [true, false, false],
      'one lease holder',
    );

    const { dueAt, at } = nextMinute(8_000);
    const schedule = await windows[2]!.service.schedules.create(draft(ws), { kind: 'daily', at });
    while (Date.now() < dueAt) await sleep(Math.min(500, Math.max(1, dueAt - Date.now())));
    // Besides the lease holder's own firing, every window's store tries the same occurrence at once.
    let n = 0;
    await Promise.all(
      windows.map((w) => w.store.mutate((tx) => fireDueSchedules(tx, () => `extra-${w.service.leadership.holderId}-${++n}`))),
    );

    const done = await runEnds(windows[0]!, schedule.id);
    assert.equal(done.status, 'completed', done.failureReason ?? '');
    await sleep(2_000);
    for (const w of windows) {
      const { runs, tasks } = runsOf(w, schedule.id);
      assert.equal(runs.length, 1, 'one run row for the occurrence');
      assert.equal(runs[0]!.outcome, 'queued');
      assert.equal(runs[0]!.dueAt, dueAt);
      assert.equal(tasks.length, 1, 'one task for the occurrence');
      assert.equal(w.service.listTasks().length, 1, 'no other task anywhere');
    }
    assert.equal(windows[0]!.store.read((tx) => tx.tickets.forTask(done.id)).length, 1, 'one ticket taken');
    assert.match(done.title, /^Nightly deps \d{4}-\d{2}-\d{2}$/);
  });

  it("a schedule's occurrence is queued exactly once also when the lease holder is killed (SIGKILL) at the due time; another window takes the lease and the run completes", async () => {
    const ws = makeGitWorkspace(world.root, 'ws');
    for (let i = 0; i < 4; i++) world.upstream.enqueue({ kind: 'text', text: 'Done.' });
    // The lease holder is a process of its own, started first.
    const holder = spawnHost({
      storageDir: place.storageDir,
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      windowId: 'window-holder',
      workspaceKeys: [],
    });
    children.push(holder.child);
    await waitFor(() => holder.lines.some((l) => l.ready), 'the holder window to start', 60_000);
    const second = (await startWindow(place, 'window-2', [ws], { lease: { tickMs: 1_000 } })).engine;
    const third = (await startWindow(place, 'window-3', [], { lease: { tickMs: 1_000 } })).engine;
    assert.deepEqual([second.service.isLeader, third.service.isLeader], [false, false], 'the holder process holds the lease');

    const { dueAt, at } = nextMinute(10_000);
    const schedule = await third.service.schedules.create(draft(ws), { kind: 'daily', at });
    while (Date.now() < dueAt) await sleep(Math.min(200, Math.max(1, dueAt - Date.now())));
    // At the due time: whether the holder fired already or not, it dies now.
    holder.child.kill('SIGKILL');
    await holder.exited;

    await waitFor(() => second.service.isLeader || third.service.isLeader || undefined, 'another window to take the lease', 60_000);
    const done = await runEnds(second, schedule.id);
    assert.equal(done.status, 'completed', done.failureReason ?? '');
    await sleep(2_000);
    for (const w of [second, third]) {
      const { runs, tasks } = runsOf(w, schedule.id);
      assert.equal(runs.length, 1, 'one run row for the occurrence');
      assert.equal(runs[0]!.dueAt, dueAt);
      assert.equal(runs[0]!.catchUp, false, 'fired within the grace, not a catch-up');
      assert.equal(tasks.length, 1, 'one task for the occurrence');
      assert.equal(w.service.listTasks().length, 1, 'no other task anywhere');
    }
    assert.equal(second.store.read((tx) => tx.tickets.forTask(done.id)).length, 1, 'one ticket taken');
  });
});
