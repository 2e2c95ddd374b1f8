// A task on its own branch (docs/flows.md#isolation) whose host process (a window) is killed with
// SIGKILL while its agent runs: a new host on the same DB resumes it in the SAME worktree, with
// the same session; the user's folder never sees its files. Real processes end to end: the REAL
// reference gateway (loopback), the scripted fake model upstream (a test fixture), reference
// agent processes, real git.
import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TaskStore } from '../../src/store';
import { makeGitWorkspace, processAlive, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { waitFor } from './test-engine';
import { spawnHost } from './spawn-host';

describe('a worktree task whose host is killed mid-run (real processes, real git)', function () {
  let world: GatewayWorld;
  let store: TaskStore | undefined;
  const hosts: ChildProcess[] = [];

  afterEach(async () => {
    for (const h of hosts) if (h.exitCode === null && h.signalCode === null) h.kill('SIGKILL');
    await store?.close();
    await world.close();
  });

  it('restart -> recovery requeues -> the same session resumes in the same worktree -> completed; the folder is untouched', async () => {
    world = await startWorld();
    const ws = makeGitWorkspace(world.root);
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'run_command', input: { command: 'pwd > before-crash.txt; sleep 60' } },
      { kind: 'tool_use', name: 'run_command', input: { command: 'pwd > after-crash.txt' } },
      { kind: 'text', text: 'Resumed after the restart and finished.' },
    );
    const common = {
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
    };
    const first = spawnHost({
      ...common,
      windowId: 'window-A',
      create: { title: 'survive', prompt: 'long work', permissionMode: 'bypassPermissions', workspacePath: ws, isolation: 'worktree' },
    });
    hosts.push(first.child);
    const started = await waitFor(() => first.lines.find((l) => l.event?.type === 'segment-started')?.event, 'the first segment', 60_000);
    store = await TaskStore.open({ directory: common.storageDir, watch: false });
    const worktree = store.read((tx) => tx.isolation.get(started.taskId))!.worktreePath!;
    await waitFor(() => fs.existsSync(path.join(worktree, 'before-crash.txt')), 'the command to run', 30_000);

    first.child.kill('SIGKILL');
    await first.exited;
    await waitFor(() => !processAlive(started.pid), 'the orphaned agent to end', 20_000).catch(() => undefined);

    const second = spawnHost({ ...common, windowId: 'window-B' });
    hosts.push(second.child);
    const ready = await waitFor(() => second.lines.find((l) => l.ready), 'the second host', 60_000);
    assert.deepEqual(ready.recovery!.requeued, [started.taskId]);
    const resumed = await waitFor(
      () => second.lines.find((l) => l.event?.type === 'segment-started')?.event,
      'the resumed segment',
      60_000,
    );
    assert.deepEqual([resumed.resume, resumed.sessionId], [true, started.sessionId]);
    await waitFor(
      () => {
        store!.checkForExternalChange();
        return store!.read((tx) => tx.tasks.get(started.taskId))!.status === 'completed';
      },
      'completed',
      60_000,
    );

    const real = fs.realpathSync(worktree);
    assert.equal(fs.readFileSync(path.join(worktree, 'before-crash.txt'), 'utf8').trim(), real);
    assert.equal(
      fs.readFileSync(path.join(worktree, 'after-crash.txt'), 'utf8').trim(),
      real,
      'the resumed segment ran in the same worktree',
    );
    assert.equal(store.read((tx) => tx.isolation.get(started.taskId))!.worktreePath, worktree, 'the same worktree recorded');
    assert.ok(!fs.existsSync(path.join(ws, 'before-crash.txt')) && !fs.existsSync(path.join(ws, 'after-crash.txt')));
    const worktrees = execFileSync('git', ['worktree', 'list', '--porcelain'], { cwd: ws, encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.startsWith('worktree '));
    assert.equal(worktrees.length, 2, "the user's folder and the task's one worktree");
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);
  });
});
