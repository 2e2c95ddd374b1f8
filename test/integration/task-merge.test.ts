// Merge of a task's branch into the folder's checked-out branch (docs/flows.md#bring-it-home),
// on real git repositories in a temporary folder.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applyTaskChanges, mergeTaskBranch } from '../../src/agent/workplace/task-merge';
import { createTaskWorktree, type TaskWorktree } from '../../src/agent/workplace/task-worktree';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' }).trim();

describe('merging a task branch into the folder (real git)', () => {
  let root: string;
  let repo: string;
  let wt: TaskWorktree;
  const write = (dir: string, file: string, text: string) => fs.writeFileSync(path.join(dir, file), text);
  const read = (dir: string, file: string) => fs.readFileSync(path.join(dir, file), 'utf8');
  const merge = () => mergeTaskBranch({ folder: repo, ...wt, message: 'The task', privateDir: path.join(root, 'private') });

  beforeEach(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'task-merge-'));
    repo = path.join(root, 'repo');
    fs.mkdirSync(repo);
    write(repo, 'a.txt', 'one\ntwo\n');
    write(repo, 'b.txt', 'b\n');
    write(repo, '.gitignore', 'build/\n');
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'init');
    const made = await createTaskWorktree({ folder: repo, worktreesDir: path.join(root, 'wt'), taskId: 'merge1234', title: 'Merge me' });
    if (made.kind !== 'created') throw new Error('no worktree');
    wt = made;
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it("clean: the task's uncommitted work becomes a commit on its branch, merged into main; ignored files stay out; the user's unrelated uncommitted edit is kept", async () => {
    write(wt.worktreePath, 'a.txt', 'one\ntwo\nthree\n');
    write(wt.worktreePath, 'new.txt', 'new\n');
    fs.mkdirSync(path.join(wt.worktreePath, 'build'));
    write(wt.worktreePath, 'build/out.js', 'ignored\n');
    write(repo, 'b.txt', 'the user edits b\n');
    const result = await merge();
    assert.equal(result.kind, 'merged');
    if (result.kind !== 'merged') return;
    assert.equal(result.into, 'main');
    assert.equal(git(repo, 'rev-parse', 'main'), result.commit);
    assert.equal(git(repo, 'log', '-1', '--format=%s', 'main'), 'Merge offpeak/merge-me-merge123 (off-peak task)');
    assert.equal(git(repo, 'rev-parse', 'main^2'), git(repo, 'rev-parse', wt.branch), "the merge's second parent is the task's branch");
    assert.equal(git(repo, 'log', '-1', '--format=%s', wt.branch), 'The task');
    assert.equal(git(repo, 'rev-parse', `${wt.branch}^`), wt.baseCommit);
    assert.deepEqual(git(repo, 'show', '--name-only', '--format=', `${wt.branch}`).split('\n').sort(), ['a.txt', 'new.txt']);
    assert.equal(read(repo, 'a.txt'), 'one\ntwo\nthree\n');
    assert.equal(read(repo, 'new.txt'), 'new\n');
    assert.ok(!fs.existsSync(path.join(repo, 'build')), 'ignored files are not committed');
    assert.equal(read(repo, 'b.txt'), 'the user edits b\n', "the user's uncommitted edit is kept");
    assert.equal(git(wt.worktreePath, 'status', '--porcelain'), '', "the worktree's index follows its branch");
  });

  it("a conflict leaves the merge in progress with the conflicted files named; the user's other uncommitted edit is kept", async () => {
    write(wt.worktreePath, 'a.txt', 'one\nTASK\n');
    write(repo, 'a.txt', 'one\nUSER\n');
    git(repo, 'commit', '-q', '-am', 'the user changed a meanwhile');
    write(repo, 'b.txt', 'the user edits b\n');
    const result = await merge();
    assert.deepEqual(result, { kind: 'conflict', into: 'main', files: ['a.txt'] });
    assert.match(read(repo, 'a.txt'), /<<<<<<<[\s\S]*USER[\s\S]*TASK/);
    assert.equal(read(repo, 'b.txt'), 'the user edits b\n');
    assert.deepEqual(await merge(), { kind: 'refused', reason: 'A merge is already in progress in the folder: finish or abort it first.' });
  });

  it('refused, changing nothing, when a file the task changed has uncommitted changes in the folder', async () => {
    write(wt.worktreePath, 'a.txt', 'one\nTASK\n');
    write(repo, 'a.txt', 'one\nuncommitted USER\n');
    const head = git(repo, 'rev-parse', 'HEAD');
    const result = await merge();
    assert.equal(result.kind, 'refused');
    assert.match((result as { reason: string }).reason, /overwrite your uncommitted changes to a\.txt/);
    assert.equal(git(repo, 'rev-parse', 'HEAD'), head);
    assert.equal(read(repo, 'a.txt'), 'one\nuncommitted USER\n');
  });

  it("apply: the task's changes land in the folder as uncommitted changes (HEAD unchanged); refused, changing nothing, over the user's uncommitted edit of the same file", async () => {
    write(wt.worktreePath, 'a.txt', 'one\ntwo\nthree\n');
    write(wt.worktreePath, 'new.txt', 'new\n');
    const head = git(repo, 'rev-parse', 'HEAD');
    write(repo, 'a.txt', 'one\nuser\n');
    const refused = await applyTaskChanges({ folder: repo, ...wt, message: 'The task', privateDir: path.join(root, 'private') });
    assert.equal(refused.kind, 'refused');
    assert.equal(read(repo, 'a.txt'), 'one\nuser\n');
    assert.ok(!fs.existsSync(path.join(repo, 'new.txt')));
    git(repo, 'checkout', '--', 'a.txt');
    write(repo, 'b.txt', 'the user edits b\n');
    const applied = await applyTaskChanges({ folder: repo, ...wt, message: 'The task', privateDir: path.join(root, 'private') });
    assert.deepEqual(applied, { kind: 'applied', files: ['a.txt', 'new.txt'] });
    assert.equal(git(repo, 'rev-parse', 'HEAD'), head, 'nothing committed in the folder');
    assert.equal(read(repo, 'a.txt'), 'one\ntwo\nthree\n');
    assert.equal(read(repo, 'new.txt'), 'new\n');
    assert.equal(read(repo, 'b.txt'), 'the user edits b\n');
  });
});
