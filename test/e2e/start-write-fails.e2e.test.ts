// A dispatch whose "task started" write fails (docs/flows.md#dispatch): the REAL reference gateway
// (loopback) in front of the scripted fake model upstream (a fixture standing in for the model API),
// the real store/service/scheduler/runtime and a real reference-agent process. The task store's
// disk is a fixture standing in for a failing one: it refuses (EIO) every write that would record
// a task as running, and notes whether the agent was still alive at the write that released the claim.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { HostEngine } from '../../src/engine/host-engine';
import { engineDirs } from '../../src/engine/host-engine';
import type { StoreFs } from '../../src/store';
import { loadSqlJs } from '../../src/store/db/sqljs';
import { processAlive, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { startTestEngine, waitFor } from './test-engine';

interface TaskRow {
  id: string;
  status: string;
  claimed: boolean;
}

/** What the failing disk saw: the task whose start it refused, its agent, and the write that released its claim. */
interface StartWriteFault {
  taskId?: string;
  agentPid?: number;
  refused: number;
  release?: { agentAlive: boolean };
}

/** The agent's pid from the pid record of the task's running segment (written at spawn). */
function agentPidOf(runtimeDir: string, taskId: string): number | undefined {
  const dir = path.join(runtimeDir, 'tasks', taskId);
  for (const segment of fs.readdirSync(dir)) {
    const record = path.join(dir, segment, 'agent.pid');
    if (fs.existsSync(record)) return (JSON.parse(fs.readFileSync(record, 'utf8')) as { pid: number }).pid;
  }
  return undefined;
}

describe('dispatch: a task whose start cannot be saved', function () {
  let world: GatewayWorld;
  let host: HostEngine | undefined;

  afterEach(async () => {
    await host?.dispose();
    host = undefined;
    await world?.close();
  });

  it('a failed "task started" write stops the agent before the claim is released: the task stays queued, saying why, and its agent is gone', async () => {
    world = await startWorld({});
    world.upstream.enqueue({ kind: 'text', text: 'Done.' });
    const SQL = await loadSqlJs();
    const storageDir = path.join(world.root, 'globalStorage');
    const { runtimeDir } = engineDirs(storageDir);
    const tasksIn = (file: string): TaskRow[] => {
      const db = new SQL.Database(fs.readFileSync(file));
      try {
        const rows = db.exec('SELECT off_peak_task_id, status, claim_running FROM off_peak_tasks')[0]?.values ?? [];
        return rows.map(([id, status, claim]) => ({ id: String(id), status: String(status), claimed: Number(claim) === 1 }));
      } finally {
        db.close();
      }
    };
    const fault: StartWriteFault = { refused: 0 };
    const storeFs: StoreFs = {
      ...fs,
      renameSync: (from: fs.PathLike, to: fs.PathLike) => {
        if (path.basename(String(to)) === 'tasks-index.sqlite') {
          const rows = tasksIn(String(from));
          const running = rows.find((r) => r.status === 'running');
          if (running) {
            fault.taskId = running.id;
            fault.agentPid ??= agentPidOf(runtimeDir, running.id);
            fault.refused += 1;
            throw Object.assign(new Error(`EIO: injected fault, rename '${String(to)}'`), {
              code: 'EIO',
              errno: -5,
              syscall: 'rename',
              path: String(to),
            });
          }
          const released = fault.taskId !== undefined && rows.find((r) => r.id === fault.taskId && !r.claimed);
          if (released && !fault.release) fault.release = { agentAlive: processAlive(fault.agentPid) };
        }
        fs.renameSync(from, to);
      },
    };
    const h = (host = await startTestEngine({ storageDir, gatewayUrl: world.gateway.url, apiKey: USER_KEY, agent: 'reference', storeFs }));
    await waitFor(() => h.service.isLeader, 'the lease');
    const ws = path.join(world.root, 'ws');
    fs.mkdirSync(ws);
    const task = await h.service.create({
      title: 'never marked',
      prompt: 'say hi',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      isolation: 'inPlace',
    });

    const release = await waitFor(() => fault.release, 'the claim released after the refused start', 90_000);
    assert.equal(fault.taskId, task.id);
    assert.ok(fault.refused >= 1);
    assert.ok(fault.agentPid !== undefined, 'the agent had been spawned when its start was refused');
    assert.equal(release.agentAlive, false, 'the agent was stopped before the claim was released');
    assert.equal(processAlive(fault.agentPid), false);
    const after = h.service.getTask(task.id)!;
    assert.equal(after.status, 'queued');
    assert.equal(after.claimRunning, false);
    assert.match(after.lastError ?? '', /could not be marked running .*its agent was stopped/);
  });

  it("item 5: the runtime's stop (the engine's) while a segment is starting (its agent spawned, its start not yet saved) waits for that start and stops its agent too", async () => {
    world = await startWorld({});
    world.upstream.enqueue({ kind: 'text', text: 'Done.' });
    const storageDir = path.join(world.root, 'globalStorage');
    const { runtimeDir } = engineDirs(storageDir);
    const SQL = await loadSqlJs();
    const runningIn = (file: string): string | undefined => {
      const db = new SQL.Database(fs.readFileSync(file));
      try {
        return db.exec("SELECT off_peak_task_id FROM off_peak_tasks WHERE status = 'running'")[0]?.values[0]?.[0] as string | undefined;
      } finally {
        db.close();
      }
    };
    // The first write that would record the task running: the runtime is told to stop right then
    // (as the engine's stop does), and that attempt fails once (a passing disk fault, retried), so
    // the stop comes while the start is under way.
    let stopping: { agentPid: number | undefined; stopped: Promise<void> } | undefined;
    const storeFs: StoreFs = {
      ...fs,
      renameSync: (from: fs.PathLike, to: fs.PathLike) => {
        if (!stopping && host && path.basename(String(to)) === 'tasks-index.sqlite') {
          const taskId = runningIn(String(from));
          if (taskId) {
            stopping = { agentPid: agentPidOf(runtimeDir, taskId), stopped: host.runtime.shutdown() };
            throw Object.assign(new Error(`EIO: injected fault, rename '${String(to)}'`), {
              code: 'EIO',
              errno: -5,
              syscall: 'rename',
              path: String(to),
            });
          }
        }
        fs.renameSync(from, to);
      },
    };
    const h = (host = await startTestEngine({ storageDir, gatewayUrl: world.gateway.url, apiKey: USER_KEY, agent: 'reference', storeFs }));
    await waitFor(() => h.service.isLeader, 'the lease');
    const ws = path.join(world.root, 'ws');
    fs.mkdirSync(ws);
    const task = await h.service.create({
      title: 'stopped while starting',
      prompt: 'say hi',
      permissionMode: 'plan',
      workspacePath: ws,
      isolation: 'inPlace',
    });

    const stop = await waitFor(() => stopping, 'the stop during the start', 90_000);
    assert.ok(stop.agentPid !== undefined, 'the agent had been spawned when the runtime was told to stop');
    await stop.stopped;
    assert.equal(processAlive(stop.agentPid), false, 'no agent of this window outlives its runtime');
    assert.equal(h.service.getTask(task.id)?.status, 'queued', 'the task went back to the queue with its session');
  });
});
