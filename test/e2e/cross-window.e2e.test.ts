// Two "windows" (two HostEngines, each with its own store instance on ONE globalStorage dir, as
// two VS Code windows are) against the real gateway and the fake upstream (a test fixture).
// The lease holder has no folder open; the other window has the task's workspace open, so the
// task is handed to that window through the shared DB and its agent runs there.
import assert from 'node:assert/strict';
import path from 'node:path';
import type { RuntimeEvent } from '../../src/agent/task-runtime';
import { systemClock } from '../../src/core/clock';
import { HostEngine } from '../../src/engine/host-engine';
import { tsNodeArgv } from '../integration/runtime-helpers';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { waitFor } from './test-engine';

function startWindow(world: GatewayWorld, windowId: string, workspaces: string[], events: RuntimeEvent[]): Promise<HostEngine> {
  return HostEngine.start({
    storageDir: path.join(world.root, 'globalStorage'),
    gatewayUrl: world.gateway.url,
    apiKey: async () => USER_KEY,
    clock: systemClock,
    windowId,
    workspaceKeys: () => workspaces,
    agent: () => 'reference',
    referenceAgent: { command: process.execPath, argsPrefix: tsNodeArgv('src/reference-agent/main.ts'), env: { OFFPEAK_AGENT_RETRY_BASE_MS: '50' } },
    claudeCommand: () => 'claude',
    keepAwake: () => false,
    sync: { longPollMs: 2_000, fallbackPollMs: 300, coalesceMs: 300 },
    onRuntimeEvent: (e) => events.push(e),
  });
}

describe('cross-window dispatch (two host engines on one globalStorage)', function () {
  this.timeout(90_000);
  let world: GatewayWorld;
  const engines: HostEngine[] = [];

  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.dispose();
    await world.close();
  });

  it("runs a task in the window that has its workspace open, not in the lease holder's", async () => {
    const leaderEvents: RuntimeEvent[] = [];
    const otherEvents: RuntimeEvent[] = [];
    const leader = await startWindow(world, 'window-leader', [], leaderEvents);
    engines.push(leader);
    assert.equal(leader.service.isLeader, true);
    const ws = makeGitWorkspace(world.root, 'ws-b');
    const other = await startWindow(world, 'window-b', [ws], otherEvents);
    engines.push(other);
    assert.equal(other.service.isLeader, false, 'one lease holder');

    await leader.service.availability.refresh();
    const task = await leader.service.create({ title: 'cross', prompt: 'say hi', permissionMode: 'plan', workspacePath: ws });
    const done = await waitFor(() => {
      const t = leader.service.getTask(task.id);
      return t && ['completed', 'failed', 'cancelled'].includes(t.status) ? t : undefined;
    }, 'the task to finish', 60_000);
    assert.equal(done.status, 'completed', done.failureReason ?? '');
    assert.ok(otherEvents.some((e) => e.type === 'segment-started' && e.taskId === task.id), 'the agent ran in the window with the workspace');
    assert.ok(!leaderEvents.some((e) => e.type === 'segment-started'), 'the lease holder ran nothing');
    assert.equal(leader.service.history().filter((h) => h.taskId === task.id).length, 1);
  });

  it('a window that has closed is not chosen: the lease holder runs the task itself', async () => {
    const leaderEvents: RuntimeEvent[] = [];
    const leader = await startWindow(world, 'window-leader', [], leaderEvents);
    engines.push(leader);
    const ws = makeGitWorkspace(world.root, 'ws-c');
    const closing = await startWindow(world, 'window-c', [ws], []);
    await closing.dispose(); // unregisters its window
    await leader.service.availability.refresh();
    const task = await leader.service.create({ title: 'fallback', prompt: 'say hi', permissionMode: 'plan', workspacePath: ws });
    const done = await waitFor(() => {
      const t = leader.service.getTask(task.id);
      return t && ['completed', 'failed', 'cancelled'].includes(t.status) ? t : undefined;
    }, 'the task to finish', 60_000);
    assert.equal(done.status, 'completed', done.failureReason ?? '');
    assert.ok(leaderEvents.some((e) => e.type === 'segment-started' && e.taskId === task.id), 'the lease holder ran it');
  });
});
