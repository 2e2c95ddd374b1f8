// Two "windows" (two HostEngines, each with its own store instance on ONE globalStorage dir, as
// two VS Code windows are) against the real gateway and the fake upstream (a test fixture).
// The lease holder has no folder open; the other window has the task's workspace open, so the
// task is handed to that window through the shared DB and its agent runs there.
import assert from 'node:assert/strict';
import path from 'node:path';
import type { HostEngine } from '../../src/engine/host-engine';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { waitFor } from './test-engine';
import { startWindow, type SharedStorage } from './two-windows';

describe('cross-window dispatch (two host engines on one globalStorage)', function () {
  this.timeout(90_000);
  let world: GatewayWorld;
  let place: SharedStorage;

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
    for (const e of place.engines.splice(0)) await e.dispose();
    await world.close();
  });

  it("runs a task in the window that has its workspace open, not in the lease holder's", async () => {
    const { engine: leader, events: leaderEvents } = await startWindow(place, 'window-leader', []);
    assert.equal(leader.service.isLeader, true);
    const ws = makeGitWorkspace(world.root, 'ws-b');
    const { engine: other, events: otherEvents } = await startWindow(place, 'window-b', [ws]);
    assert.equal(other.service.isLeader, false, 'one lease holder');

    await leader.service.availability.refresh();
    const task = await leader.service.create({ title: 'cross', prompt: 'say hi', permissionMode: 'plan', workspacePath: ws });
    const done = await waitFor(
      () => {
        const t = leader.service.getTask(task.id);
        return t && ['completed', 'failed', 'cancelled'].includes(t.status) ? t : undefined;
      },
      'the task to finish',
      60_000,
    );
    assert.equal(done.status, 'completed', done.failureReason ?? '');
    assert.ok(
      otherEvents.some((e) => e.type === 'segment-started' && e.taskId === task.id),
      'the agent ran in the window with the workspace',
    );
    assert.ok(!leaderEvents.some((e) => e.type === 'segment-started'), 'the lease holder ran nothing');
    assert.equal(leader.service.history().filter((h) => h.taskId === task.id).length, 1);
  });

  it('a window that has closed is not chosen: the lease holder runs the task itself', async () => {
    const { engine: leader, events: leaderEvents } = await startWindow(place, 'window-leader', []);
    const ws = makeGitWorkspace(world.root, 'ws-c');
    const { engine: closing } = await startWindow(place, 'window-c', [ws]);
    place.engines.splice(place.engines.indexOf(closing), 1);
    await closing.dispose(); // unregisters its window
    await leader.service.availability.refresh();
    const task = await leader.service.create({ title: 'fallback', prompt: 'say hi', permissionMode: 'plan', workspacePath: ws });
    const done = await waitFor(
      () => {
        const t = leader.service.getTask(task.id);
        return t && ['completed', 'failed', 'cancelled'].includes(t.status) ? t : undefined;
      },
      'the task to finish',
      60_000,
    );
    assert.equal(done.status, 'completed', done.failureReason ?? '');
    assert.ok(
      leaderEvents.some((e) => e.type === 'segment-started' && e.taskId === task.id),
      'the lease holder ran it',
    );
  });
});
