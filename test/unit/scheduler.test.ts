import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import type { OffPeakTask } from '../../src/core/types';
import { backoffDelay, DEFAULT_BACKOFF } from '../../src/scheduler/dispatch-backoff';
import { recoverInterrupted } from '../../src/scheduler/recovery';
import { TaskLifecycle } from '../../src/service/task-lifecycle';
import { Scheduler, type DispatchResult } from '../../src/scheduler/scheduler';
import { WindowDispatcher } from '../../src/scheduler/window-dispatcher';
import { ManualTimers } from '../../src/core/timers';
import { TaskStore } from '../../src/store';

const MIN = 60_000;

describe('scheduler', () => {
  let dir: string;
  let clock: ManualClock;
  let timers: ManualTimers;
  let store: TaskStore;
  let leader: boolean;
  let dispatched: string[];
  let answer: (task: OffPeakTask) => Promise<DispatchResult>;
  let scheduler: Scheduler;

  const markRunning = async (task: OffPeakTask): Promise<DispatchResult> => {
    const ok = await store.mutate((tx) => tx.tasks.markRunning(task.id, { sessionId: 'sess' }));
    return ok ? { status: 'started' } : { status: 'refused', reason: 'guard' };
  };

  function makeScheduler(options: { idleTickMs?: number } = {}): Scheduler {
    return new Scheduler({
      store,
      clock,
      timers,
      ...options,
      isLeader: () => leader,
      dispatcher: {
        dispatch: (task) => {
          dispatched.push(task.id);
          return answer(task);
        },
      },
    });
  }

  async function addTask(id: string, options: { schedulable?: boolean; ticket?: string | null } = {}): Promise<void> {
    await store.mutate((tx) =>
      tx.tasks.insert({
        id,
        title: id,
        prompt: 'p',
        permissionMode: 'plan',
        workspacePath: '/ws',
        serverTicketId: options.ticket === undefined ? `T-${id}` : options.ticket,
        schedulable: options.schedulable ?? true,
      }),
    );
  }

  const get = (id: string) => store.read((tx) => tx.tasks.get(id))!;

  async function round(): Promise<void> {
    await scheduler.tick();
    await scheduler.idle();
  }

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sched-unit-'));
    clock = new ManualClock(1_000_000);
    timers = new ManualTimers(clock);
    store = await TaskStore.open({ directory: dir, clock, durable: false, watch: false });
    leader = true;
    dispatched = [];
    answer = markRunning;
    scheduler = makeScheduler();
    scheduler.start();
  });
  afterEach(async () => {
    await scheduler.stop();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('claims only queued + schedulable + unclaimed tasks, oldest first, and only as lease holder', async () => {
    await addTask('a');
    clock.advance(1);
    await addTask('not-ready', { schedulable: false });
    await addTask('paused');
    await store.mutate((tx) => tx.tasks.pause('paused'));
    leader = false;
    await round();
    assert.deepEqual(dispatched, []);
    leader = true;
    await round();
    assert.deepEqual(dispatched, ['a']);
    assert.equal(get('a').status, 'running');
    assert.equal(get('a').claimRunning, false);
    await round();
    assert.deepEqual(dispatched, ['a'], 'a running task is not claimed again');
  });

  it('a failed dispatch releases the claim and backs off 30 s, doubling to 15 min, persisted across restarts', async () => {
    await addTask('a');
    answer = async () => ({ status: 'failed', error: 'no window' });
    await round();
    assert.deepEqual(dispatched, ['a']);
    const task = get('a');
    assert.equal(task.status, 'queued');
    assert.equal(task.claimRunning, false);
    assert.equal(task.attemptCount, 1);
    assert.equal(task.lastError, 'no window');
    await round();
    assert.equal(dispatched.length, 1, 'not before the backoff ends');
    clock.advance(30_000);
    await round();
    assert.equal(dispatched.length, 2);
    assert.equal(store.read((tx) => tx.dispatch.get('a'))!.nextDispatchAt, clock.now() + 60_000);

    // A new scheduler (host restart) on the same file still honours the backoff.
    await scheduler.stop();
    await store.close();
    store = await TaskStore.open({ directory: dir, clock, durable: false, watch: false });
    scheduler = makeScheduler();
    scheduler.start();
    await round();
    assert.equal(dispatched.length, 2);
    clock.advance(60_000);
    answer = markRunning;
    await round();
    assert.equal(dispatched.length, 3);
    assert.equal(get('a').status, 'running');
    assert.equal(
      store.read((tx) => tx.dispatch.get('a')),
      undefined,
      'backoff cleared after a start',
    );
    assert.deepEqual(
      [1, 2, 3, 5, 6, 10].map((n) => backoffDelay(DEFAULT_BACKOFF, n)),
      [30_000, 60_000, 120_000, 480_000, 900_000, 900_000],
    );
  });

  it('releases a zombie claim after 10 minutes, not before', async () => {
    await addTask('z');
    await store.mutate((tx) => tx.tasks.claim('z'));
    clock.advance(9 * MIN);
    await round();
    assert.deepEqual(dispatched, []);
    clock.advance(1 * MIN + 1);
    await round();
    assert.deepEqual(dispatched, ['z']);
    assert.equal(get('z').status, 'running');
  });

  it('an idle tick reads no task while no row changed, and claims at the next tick a task another window queued', async () => {
    await addTask('done');
    await round();
    assert.equal(get('done').status, 'running');
    await round(); // reads, finds nothing due
    const readOnce = store.read.bind(store);
    let reads = 0;
    store.read = ((fn) => {
      reads += 1;
      return readOnce(fn);
    }) as TaskStore['read'];
    await round();
    assert.equal(reads, 0, 'nothing changed since the last read found nothing due');

    const otherWindow = await TaskStore.open({ directory: dir, clock, durable: false, watch: false });
    try {
      await otherWindow.mutate((tx) =>
        tx.tasks.insert({
          id: 'new',
          title: 'new',
          prompt: 'p',
          permissionMode: 'plan',
          workspacePath: '/ws',
          serverTicketId: 'T-new',
          schedulable: true,
        }),
      );
    } finally {
      await otherWindow.close();
    }
    await round();
    assert.deepEqual(dispatched, ['done', 'new']);
    assert.ok(reads > 0);
  });

  it('without a safety-net tick (idleTickMs Infinity) an idle scheduler keeps no timer, in the holder or a follower; a backoff still gets one for its end', async () => {
    await scheduler.stop();
    scheduler = makeScheduler({ idleTickMs: Infinity });
    scheduler.start();
    await timers.advanceTo(clock.now(), () => scheduler.idle());
    await round();
    assert.equal(timers.pending, 0, 'holder with nothing to do: no timer');
    leader = false;
    await round();
    assert.equal(timers.pending, 0, 'follower: no timer (becoming the holder wakes it)');
    leader = true;
    await addTask('a');
    answer = async () => ({ status: 'failed', error: 'no window' });
    await round();
    assert.deepEqual(dispatched, ['a']);
    assert.equal(timers.pending, 1);
    assert.equal(timers.nextDueAt(), clock.now() + 30_000, 'woken when the backoff ends');
    answer = markRunning;
    await timers.advanceTo(clock.now() + 30_000, () => scheduler.idle());
    assert.deepEqual(dispatched, ['a', 'a']);
    assert.equal(get('a').status, 'running');
    assert.equal(timers.pending, 0);
  });

  it('markRunning is guarded: a task cancelled during dispatch stays cancelled and keeps no claim', async () => {
    await addTask('c');
    answer = async (task) => {
      await store.mutate((tx) => tx.tasks.cancel(task.id));
      return markRunning(task);
    };
    await round();
    const task = get('c');
    assert.equal(task.status, 'cancelled');
    assert.equal(task.claimRunning, false);
    assert.equal(task.startedAt, null);
  });

  it('dispatches at once a queued task whose current ticket is still active (interrupted segment)', async () => {
    await addTask('r', { schedulable: false });
    await store.mutate((tx) => {
      tx.tickets.insert({ ticketId: 'T-r', taskId: 'r', serverState: 'ready' });
      tx.tickets.markAdmitted('T-r');
    });
    await round();
    assert.deepEqual(dispatched, ['r']);
    // Once the ticket's segment expired (3102), it is not dispatched on that ticket again.
    await addTask('e', { schedulable: false });
    await store.mutate((tx) => {
      tx.tickets.insert({ ticketId: 'T-e', taskId: 'e', serverState: 'active' });
      tx.tickets.endSegment('T-e', 'expired');
    });
    await round();
    assert.deepEqual(dispatched, ['r']);
    // Nor on one whose deadline in the ledger has passed (a window reopened after it: docs/flows.md#a-question-across-a-reload).
    await addTask('late', { schedulable: false });
    await addTask('late-ready', { schedulable: true });
    await store.mutate((tx) => {
      tx.tickets.insert({ ticketId: 'T-late', taskId: 'late', serverState: 'active' });
      tx.tickets.updateServerState('T-late', { serverState: 'active', expiresAt: clock.now() + 1_000 });
      tx.tickets.insert({ ticketId: 'T-late-ready', taskId: 'late-ready', serverState: 'ready' });
      tx.tickets.updateServerState('T-late-ready', { serverState: 'ready', readyDeadline: clock.now() + 1_000 });
    });
    clock.advance(1_000);
    assert.deepEqual(
      store.read((tx) => tx.tasks.dueForDispatch().map((t) => t.id)),
      [],
    );
    await round();
    assert.deepEqual(dispatched, ['r']);
    assert.equal(await store.mutate((tx) => tx.tasks.claim('late')), false);
  });

  it('stop() releases claims whose dispatch is still in flight', async () => {
    await addTask('s');
    let finish!: (r: DispatchResult) => void;
    answer = () => new Promise((resolve) => (finish = resolve));
    await scheduler.tick();
    assert.equal(get('s').claimRunning, true);
    assert.deepEqual(scheduler.inFlightClaims, ['s']);
    await scheduler.stop();
    assert.equal(get('s').claimRunning, false);
    finish({ status: 'refused', reason: 'stopped' });
    await scheduler.idle();
  });

  it('start-up recovery: running -> queued keeping session, started_at and queued_at', async () => {
    await addTask('x');
    await round();
    const before = get('x');
    assert.equal(before.status, 'running');
    clock.advance(5_000);
    const report = await recoverInterrupted(store, path.join(dir, 'runtime'), (ids) => new TaskLifecycle(store).requeueInterrupted(ids));
    assert.deepEqual(report.requeued, ['x']);
    const after = get('x');
    assert.equal(after.status, 'queued');
    assert.equal(after.sessionId, before.sessionId);
    assert.equal(after.startedAt, before.startedAt);
    assert.equal(after.queuedAt, before.queuedAt);
  });
});

describe('start-up recovery of orphaned agents', () => {
  it('kills an agent whose host died, leaves a reused pid alone, and requeues the task', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recover-'));
    const clock = new ManualClock(1_000);
    const store = await TaskStore.open({ directory: dir, clock, durable: false, watch: false });
    await store.mutate((tx) => {
      tx.tasks.insert({
        id: 't1',
        title: 't',
        prompt: 'p',
        permissionMode: 'plan',
        workspacePath: '/ws',
        serverTicketId: 'T1',
        schedulable: true,
      });
      tx.tasks.claim('t1');
      tx.tasks.markRunning('t1', { sessionId: 'session-orphan-1' });
    });
    const spawnIdle = (marker: string) =>
      spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', '--', marker], { detached: true, stdio: 'ignore' });
    const orphan = spawnIdle('--resume session-orphan-1');
    const stranger = spawnIdle('someone-else');
    await Promise.all([orphan, stranger].map((c) => new Promise((r) => c.once('spawn', r))));
    const deadHost = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => deadHost.on('exit', r));
    const segment = (name: string, pid: number) => {
      const d = path.join(dir, 'runtime', 'tasks', 't1', name);
      fs.mkdirSync(d, { recursive: true });
      fs.writeFileSync(
        path.join(d, 'agent.pid'),
        JSON.stringify({ pid, hostPid: deadHost.pid, sessionId: 'session-orphan-1', taskId: 't1' }),
      );
    };
    segment('segment-1', orphan.pid!);
    segment('segment-2', stranger.pid!);
    const report = await recoverInterrupted(store, path.join(dir, 'runtime'), (ids) => new TaskLifecycle(store).requeueInterrupted(ids));
    assert.deepEqual(report.killedOrphans, [orphan.pid]);
    assert.deepEqual(report.requeued, ['t1']);
    assert.equal(store.read((tx) => tx.tasks.get('t1'))!.status, 'queued');
    await new Promise((r) => (orphan.exitCode !== null || orphan.signalCode !== null ? r(undefined) : orphan.on('exit', r)));
    assert.equal(orphan.signalCode, 'SIGKILL');
    assert.equal(stranger.exitCode === null && stranger.signalCode === null, true, 'a process that is not our agent is never killed');
    stranger.kill('SIGKILL');
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("leaves a task this window's runtime is running alone: its agent is not killed, the task is not requeued (a lease regained)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recover-own-'));
    const store = await TaskStore.open({ directory: dir, clock: new ManualClock(1_000), durable: false, watch: false });
    await store.mutate((tx) => {
      tx.tasks.insert({
        id: 't1',
        title: 't',
        prompt: 'p',
        permissionMode: 'plan',
        workspacePath: '/ws',
        serverTicketId: 'T1',
        schedulable: true,
      });
      tx.tasks.claim('t1');
      tx.tasks.markRunning('t1', { sessionId: 'session-own-1' });
    });
    // This process is the host: its pid record names process.pid, as a window's own agent does.
    const agent = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', '--', '--resume session-own-1'], {
      detached: true,
      stdio: 'ignore',
    });
    await new Promise((r) => agent.once('spawn', r));
    const segmentDir = path.join(dir, 'runtime', 'tasks', 't1', 'segment-1');
    fs.mkdirSync(segmentDir, { recursive: true });
    fs.writeFileSync(
      path.join(segmentDir, 'agent.pid'),
      JSON.stringify({ pid: agent.pid, hostPid: process.pid, sessionId: 'session-own-1', taskId: 't1' }),
    );
    const report = await recoverInterrupted(
      store,
      path.join(dir, 'runtime'),
      (ids) => new TaskLifecycle(store).requeueInterrupted(ids),
      (id) => id === 't1',
    );
    assert.deepEqual(report, { requeued: [], stillRunning: ['t1'], killedOrphans: [] });
    assert.equal(store.read((tx) => tx.tasks.get('t1'))!.status, 'running');
    assert.equal(agent.exitCode === null && agent.signalCode === null, true, "the window's own agent is still running");
    assert.ok(fs.existsSync(path.join(segmentDir, 'agent.pid')), 'its pid record is kept');
    agent.kill('SIGKILL');
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('window dispatcher', () => {
  const host = (windowId: string, keys: string[], log: string[]) => ({
    windowId,
    workspaceKeys: () => keys,
    runTask: async (): Promise<DispatchResult> => {
      log.push(windowId);
      return { status: 'started' };
    },
  });

  it('prefers the window with the workspace open, else the lease holder window, else fails', async () => {
    const log: string[] = [];
    const dispatcher = new WindowDispatcher('leader');
    const task = { workspaceKey: '/repo/b' } as OffPeakTask;
    assert.deepEqual(await dispatcher.dispatch(task), { status: 'failed', error: 'no window is available to run the task' });
    dispatcher.register(host('leader', ['/repo/a'], log));
    const unregister = dispatcher.register(host('other', ['/repo/b'], log));
    assert.deepEqual(await dispatcher.dispatch(task), { status: 'started', windowId: 'other' });
    unregister();
    assert.deepEqual(await dispatcher.dispatch(task), { status: 'started', windowId: 'leader' });
    assert.deepEqual(log, ['other', 'leader']);
  });
});
