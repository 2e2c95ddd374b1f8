/**
 * Item 6 of the platform guarantees, records only (docs/platforms.md#remote-windows): two machines can
 * share one globalStorage (Remote-SSH hosts with one NFS home). A pid means something only on the
 * machine that wrote it, so the pid records of recovery, the window registry and the leader lease
 * carry the machine, and another machine's records are never judged dead from here. The second
 * machine is injected: records naming another host, next to twins naming this one.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock, systemClock } from '../../src/core/clock';
import { isProcessAlive } from '../../src/core/process-alive';
import { recoverInterrupted } from '../../src/scheduler/recovery';
import { WindowRegistry } from '../../src/scheduler/window-registry';
import { TaskLifecycle } from '../../src/service/task-lifecycle';
import { TaskStore } from '../../src/store';

const THIS_HOST = 'host-a';
const OTHER_HOST = 'host-b';

/** A pid that surely belongs to no running process here: a child that already exited. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '']).pid!;

describe("platform: two machines' records in one globalStorage", () => {
  let dir: string;
  let store: TaskStore;
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-platform-hosts-'));
    store = await TaskStore.open({ directory: dir, clock: new ManualClock(1_000), durable: false, watch: false });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function runningTask(id: string): Promise<void> {
    await store.mutate((tx) => {
      tx.tasks.insert({
        id,
        title: id,
        prompt: 'p',
        permissionMode: 'plan',
        workspacePath: '/ws',
        serverTicketId: `T-${id}`,
        schedulable: true,
      });
      tx.tasks.claim(id);
      tx.tasks.markRunning(id, { sessionId: `session-${id}` });
    });
  }
  /** An agent of task `id` still running (its session id on its command line, as a real agent's). */
  async function liveAgent(id: string): Promise<number> {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)', `session-${id}`], { stdio: 'ignore' });
    children.push(child);
    await new Promise((resolve) => child.once('spawn', resolve));
    return child.pid!;
  }
  const runtimeDir = () => path.join(dir, 'runtime');
  function writeRecord(id: string, record: object): string {
    const segmentDir = path.join(runtimeDir(), 'tasks', id, 'segment-1');
    fs.mkdirSync(segmentDir, { recursive: true });
    const file = path.join(segmentDir, 'agent.pid');
    fs.writeFileSync(file, JSON.stringify({ taskId: id, sessionId: `session-${id}`, ...record }));
    return file;
  }
  const status = (id: string) => store.read((tx) => tx.tasks.get(id))!.status;

  it("platform: two hosts' pid records: another host's task is left running with its agent and record; this host's dead window's task is requeued", async () => {
    await runningTask('far');
    await runningTask('near');
    const farAgent = await liveAgent('far');
    // Both windows' pids are not running HERE; only the one on this machine is known to be gone.
    const farRecord = writeRecord('far', { pid: farAgent, hostPid: deadPid(), windowId: 'w-far', host: OTHER_HOST });
    writeRecord('near', { pid: deadPid(), hostPid: deadPid(), windowId: 'w-near', host: THIS_HOST });
    const report = await recoverInterrupted(
      store,
      runtimeDir(),
      (ids) => new TaskLifecycle(store).requeueInterrupted(ids),
      () => false,
      { windowId: 'w-here', host: THIS_HOST },
    );
    assert.deepEqual(report.requeued, ['near']);
    assert.deepEqual(report.stillRunning, ['far']);
    assert.deepEqual(report.killedOrphans, []);
    assert.equal(status('far'), 'running');
    assert.equal(status('near'), 'queued');
    assert.ok(isProcessAlive(farAgent), "the other machine's agent was not killed (its pid may be anything here)");
    assert.ok(fs.existsSync(farRecord), "the other machine's record stays");
  });

  it("platform: two hosts' window registrations: another host's window is never dropped as dead; this host's dead one is", async () => {
    await store.mutate((tx) => {
      tx.windows.register({
        windowId: 'w-far',
        workspaceKeys: ['/far'],
        pid: deadPid(),
        host: os.hostname() === OTHER_HOST ? 'host-c' : OTHER_HOST,
      });
      tx.windows.register({ windowId: 'w-near-dead', workspaceKeys: ['/near'], pid: deadPid(), host: os.hostname() });
    });
    const registry = new WindowRegistry({
      store,
      windowId: 'w-here',
      workspaceKeys: () => [],
      clock: systemClock,
      runLocal: async () => ({ status: 'started' }),
    });
    assert.deepEqual(await registry.dropDeadWindows(), ['w-near-dead']);
    assert.deepEqual(
      store.read((tx) => tx.windows.list().map((w) => w.windowId)),
      ['w-far'],
    );
    assert.equal(registry.isLive('w-far'), false, 'and it is not offered as a window of this machine either');
  });

  it("platform: two hosts' leases: an unexpired lease of another host's holder is refused though its pid is not running here; this host's is taken", async () => {
    const writeLease = (host: string) =>
      fs.writeFileSync(
        store.leasePath,
        JSON.stringify({ holder: 'other-window', token: 'tok', acquiredAt: 1_000, ttlMs: 600_000, pid: deadPid(), host }),
      );
    writeLease(os.hostname() === OTHER_HOST ? 'host-c' : OTHER_HOST);
    fs.utimesSync(store.leasePath, new Date(), new Date());
    const refused = await store.acquireLease('leader', 'this-window', 600_000);
    assert.equal(refused.held, false);
    writeLease(os.hostname());
    const taken = await store.acquireLease('leader', 'this-window', 600_000);
    assert.ok(taken.held && taken.acquired, "a dead holder of this machine's lease is replaced");
  });
});
