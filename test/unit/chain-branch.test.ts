// "Continue in its branch" and the followed task's branch (docs/flows.md#schedules-and-chains): a
// branch a waiting task will continue in is not discarded under it, and a branch that was discarded
// anyway skips the waiting task. A real sql.js store and a real git repository in a temporary folder.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTaskWorktree } from '../../src/agent/workplace/task-worktree';
import { ManualClock } from '../../src/core/clock';
import { discardTaskWorktree } from '../../src/service/bring-home';
import { applyChainGate } from '../../src/service/chains';
import { TaskStore } from '../../src/store';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' }).trim();

describe('chains: the followed task’s branch', () => {
  let root: string;
  let store: TaskStore;
  let worktreePath: string;
  beforeEach(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'chain-branch-'));
    const repo = path.join(root, 'repo');
    fs.mkdirSync(repo);
    fs.writeFileSync(path.join(repo, 'a.txt'), 'one\n');
    git(repo, 'init', '-q');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'init');
    const made = await createTaskWorktree({ folder: repo, worktreesDir: path.join(root, 'wt'), taskId: 'task-a-123', title: 'Step A' });
    assert.equal(made.kind, 'created');
    if (made.kind !== 'created') return;
    worktreePath = made.worktreePath;
    store = await TaskStore.open({ directory: path.join(root, 'db'), clock: new ManualClock(1_000), durable: false, watch: false });
    await store.mutate((tx) => {
      tx.tasks.insert({
        id: 'A',
        title: 'Step A',
        prompt: 'a',
        permissionMode: 'plan',
        workspacePath: repo,
        serverTicketId: 'T-A',
        schedulable: true,
      });
      tx.isolation.insert({
        taskId: 'A',
        mode: 'worktree',
        repoPath: repo,
        worktreePath: made.worktreePath,
        branch: made.branch,
        baseCommit: made.baseCommit,
      });
      tx.tasks.claim('A');
      tx.tasks.markRunning('A');
      tx.tasks.complete('A', {});
      tx.tasks.insert({
        id: 'B',
        title: 'Step B',
        prompt: 'b',
        permissionMode: 'plan',
        workspacePath: repo,
        after: { taskId: 'A', title: 'Step A', continueInBranch: true },
      });
    });
  });
  afterEach(async () => {
    await store?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('Discard of a completed task is refused while a task waits to continue in its branch, and the worktree stays', async () => {
    assert.equal(store.read((tx) => tx.tasks.get('A'))?.status, 'completed');
    await assert.rejects(discardTaskWorktree(store, 'A'), /Cannot discard now: "Step B" waits to continue on offpeak\//);
    assert.ok(fs.existsSync(worktreePath), 'the worktree is still there');
    assert.equal(store.read((tx) => tx.isolation.get('A'))?.broughtHome, null);
  });

  it('once the waiting task is gone, Discard goes ahead', async () => {
    await store.mutate((tx) => tx.tasks.cancel('B', {}));
    const removed = await discardTaskWorktree(store, 'A');
    assert.ok(removed.length > 0, `removed: ${removed.join(', ')}`);
    assert.equal(fs.existsSync(worktreePath), false);
  });

  it('a waiting task whose followed branch was discarded anyway is skipped with that reason, not run without it', async () => {
    await store.mutate((tx) => tx.isolation.recordBroughtHome('A', 'discarded'));
    const gate = await store.mutate((tx) => applyChainGate(tx, 'B'));
    assert.deepEqual(gate, { kind: 'skip', reason: 'Skipped: the branch of Step A was discarded.' });
    const b = store.read((tx) => tx.tasks.get('B'));
    assert.equal(b?.status, 'cancelled');
    assert.equal(b?.failureReason, 'Skipped: the branch of Step A was discarded.');
    assert.equal(
      store.read((tx) => tx.isolation.get('B')),
      undefined,
      'no worktree row borrowed from the discarded branch',
    );
  });
});
