// globalStorage reached through a symbolic link (docs/platforms.md: a symlinked `~/.vscode-server`
// on a Remote-SSH host, macOS's `/var` -> `/private/var`): the REAL reference gateway (loopback) in
// front of the scripted fake model upstream (a fixture standing in for the model API), the real
// store/service/scheduler/runtime, real reference-agent processes and real git, in a temporary folder.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { HostEngine } from '../../src/engine/host-engine';
import { createServiceBackend } from '../../src/panel/service-backend';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { BARE_HOST } from '../integration/panel-link';
import { startTestEngine, waitFor } from './test-engine';

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

describe('platform: globalStorage behind a symbolic link (Linux; as macOS /var and a symlinked ~/.vscode-server)', function () {
  let world: GatewayWorld;
  let host: HostEngine | undefined;

  afterEach(async () => {
    await host?.dispose();
    host = undefined;
    await world?.close();
  });

  it("platform: through a symlinked home folder the lease, the task DB, its lock and a task's worktree all work: the task runs on its branch, a follow-up reuses the worktree, Merge and Delete work", async () => {
    world = await startWorld({});
    const realHome = path.join(world.root, 'real-home');
    const linkedHome = path.join(world.root, 'home');
    fs.mkdirSync(realHome);
    fs.symlinkSync(realHome, linkedHome, 'dir');
    const storageDir = path.join(linkedHome, '.vscode-server', 'data', 'User', 'globalStorage', 'offpeak.offpeak-tasks');
    const h = (host = await startTestEngine({ storageDir, gatewayUrl: world.gateway.url, apiKey: USER_KEY, agent: 'reference' }));
    await waitFor(() => h.service.isLeader, 'the lease');

    const ws = makeGitWorkspace(world.root);
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'first.txt', content: '1\n' } },
      { kind: 'text', text: 'first done' },
    );
    const first = await h.service.create({
      title: 'first',
      prompt: 'write first.txt',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      isolation: 'worktree',
    });
    await waitFor(() => ['completed', 'failed'].includes(h.service.getTask(first.id)!.status), 'the task finished', 90_000);
    assert.equal(h.service.getTask(first.id)!.failureReason, null);
    assert.equal(h.service.getTask(first.id)!.status, 'completed');
    const iso = h.store.read((tx) => tx.isolation.get(first.id))!;
    assert.ok(
      iso.worktreePath!.startsWith(storageDir + path.sep),
      `the worktree is under globalStorage as the window names it: ${iso.worktreePath}`,
    );
    assert.equal(fs.readFileSync(path.join(iso.worktreePath!, 'first.txt'), 'utf8'), '1\n');
    assert.deepEqual(
      iso.changes!.map((c) => c.path),
      ['first.txt'],
    );
    assert.ok(!fs.existsSync(path.join(ws, 'first.txt')), "the user's folder is not touched");

    // A follow-up finds the same worktree again (its identity asked of git, not compared as a path string).
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'second.txt', content: '2\n' } },
      { kind: 'text', text: 'second done' },
    );
    const follow = await h.service.followUp(first.id, { prompt: 'write second.txt' });
    await waitFor(() => ['completed', 'failed'].includes(h.service.getTask(follow.id)!.status), 'the follow-up finished', 90_000);
    assert.equal(h.service.getTask(follow.id)!.failureReason, null);
    assert.equal(h.store.read((tx) => tx.isolation.get(follow.id))!.worktreePath, iso.worktreePath, 'the same worktree');

    // The files live in the real folder: the DB, the lease, the lock's place and the worktree.
    const realStorage = fs.realpathSync(storageDir);
    assert.ok(realStorage.startsWith(realHome + path.sep));
    const stored = fs.readdirSync(realStorage);
    assert.ok(stored.includes('tasks-index.sqlite'), `the task DB is there: ${stored.join(', ')}`);
    assert.ok(h.service.isLeader, 'the window still holds the lease');

    const backend = createServiceBackend(h.service, h.store, BARE_HOST, h.questions);
    assert.deepEqual(await backend.mergeChanges({ taskId: follow.id }), {
      outcome: 'merged',
      into: git(ws, 'symbolic-ref', '--short', 'HEAD'),
    });
    assert.equal(fs.readFileSync(path.join(ws, 'second.txt'), 'utf8'), '2\n');

    assert.deepEqual(await backend.delete({ taskId: follow.id }), { done: true });
    assert.deepEqual(await backend.delete({ taskId: first.id }), { done: true });
    await waitFor(
      () => !fs.existsSync(iso.worktreePath!) && git(ws, 'branch', '--list', 'offpeak/*') === '',
      'the worktree and its branch go with the last task using them',
    );
    assert.equal(
      git(ws, 'worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')).length,
      1,
      "git knows only the user's own checkout",
    );
  });
});
