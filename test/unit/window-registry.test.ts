// The window registry on a real sql.js file: two registries (two windows) on one store directory.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemClock } from '../../src/core/clock';
import type { OffPeakTask } from '../../src/core/types';
import type { DispatchResult } from '../../src/scheduler/scheduler';
import { WindowRegistry } from '../../src/scheduler/window-registry';
import { TaskStore } from '../../src/store';

describe('window registry (cross-window hand-off through the shared DB)', () => {
  let dir: string;
  const stores: TaskStore[] = [];
  const registries: WindowRegistry[] = [];

  async function open(
    windowId: string,
    keys: string[],
    runLocal: (t: OffPeakTask) => Promise<DispatchResult>,
    extra: Partial<ConstructorParameters<typeof WindowRegistry>[0]> = {},
  ) {
    const store = await TaskStore.open({ directory: dir, clock: systemClock, durable: false, watch: { pollMs: 50 } });
    stores.push(store);
    const registry = new WindowRegistry({
      store,
      windowId,
      workspaceKeys: () => keys,
      clock: systemClock,
      runLocal,
      handoffPollMs: 20,
      ...extra,
    });
    registries.push(registry);
    await registry.start();
    return { store, registry };
  }

  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-windows-'))));
  afterEach(async () => {
    for (const r of registries.splice(0)) await r.stop();
    for (const s of stores.splice(0)) await s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("hands a task to the window that registered its workspace and returns that window's answer", async () => {
    const ran: string[] = [];
    const a = await open('A', [], async () => ({ status: 'failed', error: 'A must not run it' }));
    await open('B', ['/ws/b'], async (t) => {
      ran.push(t.id);
      return { status: 'started' };
    });
    const task = await a.store.mutate((tx) => tx.tasks.insert({ title: 't', prompt: 'p', permissionMode: 'plan', workspacePath: '/ws/b' }));
    const hosts = a.registry.remoteHosts();
    assert.deepEqual(
      hosts.map((h) => [h.windowId, [...h.workspaceKeys()]]),
      [['B', ['/ws/b']]],
    );
    const result = await hosts[0].runTask(task);
    assert.deepEqual(result, { status: 'started' });
    assert.deepEqual(ran, [task.id]);
    assert.deepEqual(
      a.store.read((tx) => [tx.windows.handOffAnswer(task.id), tx.windows.pendingHandOffs('B')]),
      [undefined, []],
      'the request row is cleaned up',
    );
  });

  it("item 1: the lease holder's tick drops the registration of a window whose process is gone; a live one stays", async () => {
    const dead = new Set<number>();
    const a = await open('A', [], async () => ({ status: 'started' }), { isAlive: (pid) => !dead.has(pid) });
    await open('B', ['/ws/b'], async () => ({ status: 'started' }));
    // B's row as a crashed window leaves it (with a pid the test decides is gone).
    await a.store.mutate((tx) => tx.windows.register({ windowId: 'B', workspaceKeys: ['/ws/b'], pid: 999_999_1, host: os.hostname() }));
    assert.equal(a.registry.isLive('B', 999_999_1), true);
    assert.deepEqual(await a.registry.dropDeadWindows(), [], 'nothing to drop while it runs: nothing written');
    dead.add(999_999_1);
    assert.equal(a.registry.isLive('B', 999_999_1), false);
    assert.deepEqual(await a.registry.dropDeadWindows(), ['B']);
    assert.deepEqual(
      a.store.read((tx) => tx.windows.list().map((w) => w.windowId)),
      ['A'],
    );
  });

  it('does not offer a window whose process is gone, nor one that unregistered', async () => {
    const a = await open('A', [], async () => ({ status: 'started' }), { isAlive: () => false });
    await open('B', ['/ws/b'], async () => ({ status: 'started' }));
    assert.deepEqual(a.registry.remoteHosts(), [], "B's pid is reported dead");
    const c = await open('C', [], async () => ({ status: 'started' }));
    const d = await open('D', ['/ws/d'], async () => ({ status: 'started' }));
    assert.ok(c.registry.remoteHosts().some((h) => h.windowId === 'D'));
    await d.registry.stop();
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(!c.registry.remoteHosts().some((h) => h.windowId === 'D'), 'D unregistered on stop');
  });

  it("a crashed window's registration and its open questions are dropped when another window registers", async () => {
    const before = await TaskStore.open({ directory: dir, clock: systemClock, durable: false, watch: false });
    stores.push(before);
    await before.mutate((tx) => {
      tx.tasks.insert({ id: 't1', title: '', prompt: 'p', permissionMode: 'default', workspacePath: '/w' });
      tx.windows.register({ windowId: 'Z', workspaceKeys: ['/w'], pid: 999_999, host: os.hostname() });
      tx.asks.publish('Z', [
        { id: 'q1', taskId: 't1', tool: 'run_command', summary: 'run ls', input: 'command: ls', askedAt: 1, deadlineAt: 600_001 },
      ]);
    });
    const a = await open('A', [], async () => ({ status: 'started' }), { isAlive: (pid) => pid !== 999_999 });
    const left = a.store.read((tx) => ({ windows: tx.windows.list().map((w) => w.windowId), asks: tx.asks.list().map((q) => q.id) }));
    assert.deepEqual(left, { windows: ['A'], asks: [] });
  });

  it('a window that never answers has its request withdrawn and the dispatch fails (for backoff)', async () => {
    const a = await open('A', [], async () => ({ status: 'started' }), { handoffTimeoutMs: 300 });
    const b = await open('B', ['/ws/b'], () => new Promise<DispatchResult>(() => {}));
    const task = await a.store.mutate((tx) => tx.tasks.insert({ title: 't', prompt: 'p', permissionMode: 'plan', workspacePath: '/ws/b' }));
    const host = a.registry.remoteHosts().find((h) => h.windowId === 'B')!;
    // B's runLocal hangs, so B never writes a result.
    const result = await host.runTask(task);
    assert.equal(result.status, 'failed');
    assert.match((result as { error: string }).error, /did not take the task/);
    void b;
  });
});
