// Recovery as the lease holder runs it on every tick (docs/flows.md#recovery): which running tasks
// a window that is gone left behind, and what of its agents is stopped. Real processes stand in for
// the windows and agents; the store is a real sql.js file.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { isProcessAlive } from '../../src/core/process-alive';
import { recoverInterrupted } from '../../src/scheduler/recovery';
import { TaskLifecycle } from '../../src/service/task-lifecycle';
import { TaskStore } from '../../src/store';

const idleScript = 'setTimeout(() => {}, 120000)';

async function spawned(child: ChildProcess): Promise<ChildProcess> {
  await new Promise((r) => child.once('spawn', r));
  return child;
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((r) => child.once('exit', r));
}

async function deadPid(): Promise<number> {
  const gone = spawn(process.execPath, ['-e', '0']);
  await exited(gone);
  return gone.pid!;
}

describe('recovery of tasks a window left running', () => {
  let dir: string;
  let store: TaskStore;
  const cleanup: number[] = [];

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recovery-'));
    store = await TaskStore.open({ directory: dir, clock: new ManualClock(1_000), durable: false, watch: false });
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
      tx.tasks.markRunning('t1', { sessionId: 'session-1' });
    });
  });

  afterEach(async () => {
    for (const pid of cleanup.splice(0)) {
      // Never 0 or a non-number: on Windows process.kill(0) ends this very process.
      if (!(Number.isInteger(pid) && pid > 0)) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const runtimeDir = () => path.join(dir, 'runtime');
  const writeRecord = (record: object) => {
    const segmentDir = path.join(runtimeDir(), 'tasks', 't1', 'segment-1');
    fs.mkdirSync(segmentDir, { recursive: true });
    fs.writeFileSync(path.join(segmentDir, 'agent.pid'), JSON.stringify({ taskId: 't1', sessionId: 'session-1', ...record }));
    return path.join(segmentDir, 'agent.pid');
  };
  const requeue = (ids: readonly string[]) => new TaskLifecycle(store).requeueInterrupted(ids);
  const status = () => store.read((tx) => tx.tasks.get('t1'))!.status;

  it('item 1: a task whose agent already ended under a live window is left to that window (it is about to write the outcome)', async () => {
    const window = await spawned(spawn(process.execPath, ['-e', idleScript], { stdio: 'ignore' }));
    cleanup.push(window.pid!);
    const file = writeRecord({ pid: await deadPid(), hostPid: window.pid, windowId: 'window-b' });
    const report = await recoverInterrupted(store, runtimeDir(), requeue, () => false, { windowId: 'window-holder' });
    assert.deepEqual(report, { requeued: [], stillRunning: ['t1'], killedOrphans: [] });
    assert.equal(status(), 'running');
    assert.ok(fs.existsSync(file), 'the live window keeps its record');
  });

  it("item 1: the dead window's whole process group is stopped, also what the agent left in it after it ended", async () => {
    const host = await deadPid();
    // The "agent": its own process group (as the runtime spawns it), starting a child that leaves
    // its tree (the child carries the window's marker in its environment), then ending.
    const agent = await spawned(
      spawn(
        process.execPath,
        [
          '-e',
          `const c = require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(idleScript)}], { stdio: 'ignore' }); console.log(c.pid); c.unref();`,
        ],
        {
          detached: true,
          stdio: ['ignore', 'pipe', 'ignore'],
          env: { ...process.env, OFFPEAK_AGENT_PARENT_PID: String(host) },
        },
      ),
    );
    let out = '';
    agent.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await exited(agent);
    const left = Number(out.trim());
    cleanup.push(left);
    assert.ok(isProcessAlive(left), 'the agent left a process behind');
    writeRecord({ pid: agent.pid, hostPid: host, windowId: 'window-b' });

    const report = await recoverInterrupted(store, runtimeDir(), requeue, () => false, { windowId: 'window-holder' });
    assert.deepEqual(report.requeued, ['t1']);
    if (process.platform === 'linux') {
      assert.deepEqual(report.killedOrphans, [agent.pid]);
      for (let i = 0; i < 100 && isProcessAlive(left); i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(isProcessAlive(left), false, 'what the agent started is stopped with its group');
    }
  });

  it("a process group whose members do not carry the dead window's marker is left alone (nothing of ours in it)", async () => {
    const host = await deadPid();
    // Same shape, but the child does not carry the dead window's marker: it is not ours to stop.
    const agent = await spawned(
      spawn(
        process.execPath,
        [
          '-e',
          `const c = require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(idleScript)}], { stdio: 'ignore' }); console.log(c.pid); c.unref();`,
        ],
        {
          detached: true,
          stdio: ['ignore', 'pipe', 'ignore'],
          env: { ...process.env, OFFPEAK_AGENT_PARENT_PID: 'someone-else' },
        },
      ),
    );
    let out = '';
    agent.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await exited(agent);
    const other = Number(out.trim());
    cleanup.push(other);
    writeRecord({ pid: agent.pid, hostPid: host, windowId: 'window-b' });
    const report = await recoverInterrupted(store, runtimeDir(), requeue, () => false, { windowId: 'window-holder' });
    assert.deepEqual(report, { requeued: ['t1'], stillRunning: [], killedOrphans: [] });
    assert.equal(isProcessAlive(other), true);
  });

  it('item 1: on the holder tick a running task with no pid record is requeued only when the rule says so (the previous tick saw it too)', async () => {
    let seenBefore = false;
    const tick = () =>
      recoverInterrupted(store, runtimeDir(), requeue, () => false, { windowId: 'window-holder', requeueUnrecorded: () => seenBefore });
    assert.deepEqual((await tick()).requeued, [], 'the first tick only notes it');
    assert.equal(status(), 'running');
    seenBefore = true;
    assert.deepEqual((await tick()).requeued, ['t1']);
    assert.equal(status(), 'queued');
  });

  it("item 1: a window of this same process is alive only while registered; this window's own records are orphans unless its runtime runs them", async () => {
    const agent = await spawned(
      spawn(process.execPath, ['-e', idleScript, '--', '--session-id', 'session-1'], { detached: true, stdio: 'ignore' }),
    );
    cleanup.push(agent.pid!);
    writeRecord({ pid: agent.pid, hostPid: process.pid, windowId: 'window-b' });
    const registered = new Set(['window-b']);
    const isLiveWindow = (id: string, pid: number) => registered.has(id) && pid === process.pid;
    let report = await recoverInterrupted(store, runtimeDir(), requeue, () => false, { windowId: 'window-holder', isLiveWindow });
    assert.deepEqual(report, { requeued: [], stillRunning: ['t1'], killedOrphans: [] });
    registered.delete('window-b');
    report = await recoverInterrupted(store, runtimeDir(), requeue, () => false, { windowId: 'window-holder', isLiveWindow });
    assert.deepEqual(report, { requeued: ['t1'], stillRunning: [], killedOrphans: [agent.pid] });
    await exited(agent);
  });

  it("platform: a crashed window's agent is found in the process table and stopped with its child (this platform's own tools; on Windows its parent id still names the dead window)", async () => {
    // The "window" starts the agent (its own group on POSIX, as the runtime does; the session id
    // on its command line; on Windows its own console, since Wine ends a console's processes with
    // its owner) and ends without stopping it, as a crashed window does. The agent's child writes
    // its pid to a file.
    const childFile = path.join(dir, 'child.pid');
    const agentCode = `const c = require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(idleScript)}], { stdio: 'ignore' }); require('fs').writeFileSync(${JSON.stringify(childFile)}, String(c.pid)); ${idleScript}`;
    const windowCode = `const a = require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(agentCode)}, 'session-1'], { stdio: 'ignore', detached: true }); console.log(a.pid); setTimeout(() => process.exit(0), 500);`;
    const window = await spawned(spawn(process.execPath, ['-e', windowCode], { stdio: ['ignore', 'pipe', 'ignore'] }));
    let out = '';
    window.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await exited(window);
    const agentPid = Number(out.trim());
    cleanup.push(agentPid);
    // The file exists a moment before its pid is written in it (seen under Wine).
    const childPid = () => (fs.existsSync(childFile) ? Number(fs.readFileSync(childFile, 'utf8')) : 0);
    for (let i = 0; i < 400 && !(childPid() > 0); i++) await new Promise((r) => setTimeout(r, 50));
    const child = [childPid()];
    assert.ok(agentPid > 0 && child[0] > 0, `the window told the agent's pid (${agentPid}) and the agent its child's (${child[0]})`);
    cleanup.push(...child);
    assert.ok(isProcessAlive(child[0]) && isProcessAlive(agentPid), 'the agent and its child outlived the window');
    writeRecord({ pid: agentPid, hostPid: window.pid, windowId: 'window-b' });

    const report = await recoverInterrupted(store, runtimeDir(), requeue, () => false, { windowId: 'window-holder', killWaitMs: 10_000 });
    assert.deepEqual(report, { requeued: ['t1'], stillRunning: [], killedOrphans: [agentPid] });
    for (const pid of [agentPid, ...child]) {
      for (let i = 0; i < 200 && isProcessAlive(pid); i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(isProcessAlive(pid), false, `process ${pid} of the dead window's agent is stopped`);
    }
  });
});
