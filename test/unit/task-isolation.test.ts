// Isolation pieces (docs/flows.md#isolation, docs/flows.md#review) on a real sql.js store and
// real git repositories in a temporary folder.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { recordFilesBaseline } from '../../src/agent/workplace/files-changed';
import { listTaskChanges, listTaskChangesWithCount } from '../../src/agent/workplace/task-changes';
import { branchNameFor, createTaskWorktree, removeTaskWorktree, unmergedWork } from '../../src/agent/workplace/task-worktree';
import { ManualClock } from '../../src/core/clock';
import { discardReport, isolationFor, reviewPlan, workplaceOffers } from '../../src/panel/workplace-panel';
import type { TaskIsolation } from '../../src/store';
import type { OffPeakTask } from '../../src/core/types';
import { TaskStore } from '../../src/store';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' }).trim();

function makeRepo(root: string): string {
  const repo = path.join(root, 'repo');
  fs.mkdirSync(repo, { recursive: true });
  fs.writeFileSync(path.join(repo, 'a.txt'), 'one\ntwo\nthree\n');
  git(repo, 'init', '-q');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'init');
  return repo;
}

describe('task isolation', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'isolation-unit-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('branch names: offpeak/<slug of the title>-<short id>, safe for git whatever the title', () => {
    assert.equal(branchNameFor('9f3a2c1b-77aa-4bbb', 'Fix the flaky login test!'), 'offpeak/fix-the-flaky-login-test-9f3a2c1b');
    assert.equal(branchNameFor('abc', '../../etc; rm -rf ~'), 'offpeak/etc-rm-rf-abc');
    assert.equal(branchNameFor('abc', '日本語'), 'offpeak/task-abc');
    // A scheduled run's title ends with its date: the branch is named with it, also for a long title.
    assert.equal(branchNameFor('9f3a2c1b', 'Nightly deps 2026-12-02'), 'offpeak/nightly-deps-2026-12-02-9f3a2c1b');
    assert.equal(
      branchNameFor('9f3a2c1b', 'Update every dependency and fix what breaks 2026-12-02'),
      'offpeak/update-every-dependency-and-f-2026-12-02-9f3a2c1b',
    );
    for (const name of [branchNameFor('x1', 'a..b'), branchNameFor('x2', '.lock'), branchNameFor('x3', 'x'.repeat(300))]) {
      assert.doesNotThrow(() => execFileSync('git', ['check-ref-format', `refs/heads/${name}`]), name);
    }
  });

  it("the form's choice wins; without one, the machine setting decides for a git folder and a non-git folder runs in place", () => {
    const git_ = () => true;
    const plain = () => false;
    assert.equal(isolationFor(true, '/f', 'inPlace', plain), 'worktree');
    assert.equal(isolationFor(false, '/f', 'worktree', git_), 'inPlace');
    assert.equal(isolationFor(undefined, '/f', 'worktree', git_), 'worktree');
    assert.equal(isolationFor(undefined, '/f', 'worktree', plain), 'inPlace');
    assert.equal(isolationFor(undefined, '/f', 'inPlace', git_), 'inPlace');
  });

  it('the claim rule in the store: an in-place task sees the task running in place in its folder; worktree tasks and other folders do not count', async () => {
    const store = await TaskStore.open({ directory: root, clock: new ManualClock(1_000), durable: false, watch: false });
    try {
      await store.mutate((tx) => {
        for (const [id, ws] of [
          ['a', '/ws'],
          ['b', '/ws'],
          ['w', '/ws'],
          ['c', '/other'],
          ['legacy', '/ws'],
        ] as const) {
          tx.tasks.insert({
            id,
            title: `task ${id}`,
            prompt: 'p',
            permissionMode: 'plan',
            workspacePath: ws,
            serverTicketId: `T-${id}`,
            schedulable: true,
          });
        }
        tx.isolation.insert({ taskId: 'a', mode: 'inPlace', repoPath: '/ws' });
        tx.isolation.insert({ taskId: 'b', mode: 'inPlace', repoPath: '/ws' });
        tx.isolation.insert({ taskId: 'w', mode: 'worktree', repoPath: '/ws' });
        tx.isolation.insert({ taskId: 'c', mode: 'inPlace', repoPath: '/other' });
      });
      const holder = (id: string) => store.read((tx) => tx.isolation.inPlaceHolder(id, tx.tasks.get(id)!.workspaceKey))?.id;
      assert.equal(holder('b'), undefined, 'nothing runs yet');
      await store.mutate((tx) => tx.tasks.claim('w') && tx.tasks.markRunning('w', { sessionId: 's-w' }));
      assert.equal(store.read((tx) => tx.tasks.get('w'))!.status, 'running');
      assert.equal(holder('b'), undefined, 'a task on its own branch does not hold the folder');
      await store.mutate((tx) => tx.tasks.claim('a'));
      assert.equal(holder('b'), 'a', 'a claimed in-place task holds it');
      assert.equal(holder('c'), undefined, 'another folder is free');
      assert.equal(holder('w'), undefined, 'a worktree task never waits');
      assert.equal(holder('legacy'), undefined, 'a task without an isolation choice never waits');
      await store.mutate((tx) => tx.tasks.markRunning('a', { sessionId: 's-a' }));
      assert.equal(holder('b'), 'a', 'and so does a running one');
      await store.mutate((tx) => tx.tasks.complete('a', {}));
      assert.equal(holder('b'), undefined, 'free once it finished');
      await store.mutate((tx) => tx.tasks.claim('legacy') && tx.tasks.markRunning('legacy', { sessionId: 's-l' }));
      assert.equal(holder('b'), 'legacy', 'a task running in place without an isolation row holds the folder too');
    } finally {
      await store.close();
    }
  });

  it("a task's worktree: created at the folder's HEAD on its branch, its changes listed with line counts against the base, unmerged work found, removed with its branch", async () => {
    const repo = makeRepo(root);
    fs.writeFileSync(path.join(repo, 'a.txt'), 'one\nTWO\nthree\nuser edit\n'); // the user's uncommitted edit
    const made = await createTaskWorktree({ folder: repo, worktreesDir: path.join(root, 'wt'), taskId: 'task1234567', title: 'Edit a' });
    assert.equal(made.kind, 'created');
    if (made.kind !== 'created') return;
    assert.equal(made.baseCommit, git(repo, 'rev-parse', 'HEAD'));
    assert.equal(
      fs.readFileSync(path.join(made.worktreePath, 'a.txt'), 'utf8'),
      'one\ntwo\nthree\n',
      'the committed content, not the user edit',
    );
    const taskDir = path.join(root, 'runtime', 'task1');
    assert.ok(await recordFilesBaseline(made.worktreePath, taskDir));
    fs.writeFileSync(path.join(made.worktreePath, 'a.txt'), 'one\n2\nthree\nfour\n');
    fs.writeFileSync(path.join(made.worktreePath, 'new.bin'), Buffer.from([0, 1, 2, 3]));
    // What git ignores (an installed dependency) is counted in files_changed but not listed.
    fs.writeFileSync(path.join(made.worktreePath, '.gitignore'), 'deps/\n');
    fs.mkdirSync(path.join(made.worktreePath, 'deps'));
    fs.writeFileSync(path.join(made.worktreePath, 'deps', 'lib.js'), 'x\n');
    const listed = await listTaskChangesWithCount({
      folder: made.worktreePath,
      taskDir,
      repo: made.worktreePath,
      baseCommit: made.baseCommit,
    });
    assert.equal(listed?.count, 4);
    fs.rmSync(path.join(made.worktreePath, '.gitignore'));
    fs.rmSync(path.join(made.worktreePath, 'deps'), { recursive: true });
    const changes = await listTaskChanges({ folder: made.worktreePath, taskDir, repo: made.worktreePath, baseCommit: made.baseCommit });
    assert.deepEqual(
      listed?.changes.map((c) => c.path),
      ['.gitignore', 'a.txt', 'new.bin'],
    );
    assert.deepEqual(
      changes?.map((c) => [c.path, c.status, c.added, c.removed]),
      [
        ['a.txt', 'modified', 2, 1],
        ['new.bin', 'added', null, null],
      ],
    );
    assert.equal(changes![0].oldBlob, git(repo, 'rev-parse', 'HEAD:a.txt'));

    const where = { repoPath: repo, branch: made.branch, baseCommit: made.baseCommit };
    assert.match((await unmergedWork({ ...where, changedFiles: 2 }))!, /2 changed files not committed anywhere/);
    assert.equal(await unmergedWork({ ...where, changedFiles: 0 }), null);
    git(made.worktreePath, 'add', '.');
    git(made.worktreePath, 'commit', '-q', '-m', 'task work');
    assert.match(
      (await unmergedWork({ ...where, changedFiles: 2 }))!,
      /1 commit on offpeak\/edit-a-task1234 not merged into any other branch/,
    );

    const plan = reviewPlan({ id: 't', title: 'Edit a', prompt: 'p', workspacePath: repo } as never, {
      taskId: 't',
      mode: 'worktree',
      repoPath: repo,
      worktreePath: made.worktreePath,
      branch: made.branch,
      baseCommit: made.baseCommit,
      note: null,
      changes,
      missingAt: null,
      broughtHome: null,
      createdAt: 0,
    });
    assert.ok(!('problem' in plan));
    if ('problem' in plan) return;
    assert.deepEqual(
      plan.entries.map((e) => [e.path, e.modifiedPath, e.originalBlob]),
      [
        ['a.txt', path.join(made.worktreePath, 'a.txt'), changes![0].oldBlob],
        ['new.bin', path.join(made.worktreePath, 'new.bin'), null],
      ],
    );

    assert.deepEqual(await removeTaskWorktree({ repoPath: repo, worktreePath: made.worktreePath, branch: made.branch }), {
      removed: [`the worktree ${made.worktreePath}`, `the branch ${made.branch}`],
      problems: [],
    });
    assert.ok(!fs.existsSync(made.worktreePath));
    assert.equal(git(repo, 'branch', '--list', made.branch), '');
    assert.equal(fs.readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\nTWO\nthree\nuser edit\n', "the user's edit is untouched");
  });

  it('a start that crashed after `git worktree add` (nothing recorded) finds the branch and its worktree again, at the same path and base', async () => {
    const repo = makeRepo(root);
    const input = { folder: repo, worktreesDir: path.join(root, 'wt'), taskId: 'crash123', title: 'Crash' };
    const first = await createTaskWorktree(input);
    if (first.kind !== 'created') throw new Error('no worktree');
    fs.writeFileSync(path.join(first.worktreePath, 'kept.txt'), 'work\n');
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'the user commits meanwhile');
    assert.deepEqual(await createTaskWorktree(input), first, 'the same worktree, branch and base (not the new HEAD)');
    assert.ok(fs.existsSync(path.join(first.worktreePath, 'kept.txt')), 'its files are kept');
  });

  it('a folder that is not a git repository (or has no commit) runs in place, saying why', async () => {
    const plain = path.join(root, 'plain');
    fs.mkdirSync(plain);
    assert.deepEqual(await createTaskWorktree({ folder: plain, worktreesDir: path.join(root, 'wt'), taskId: 't1', title: 'x' }), {
      kind: 'in-place',
      reason: 'the folder is not in a git repository',
    });
    const empty = path.join(root, 'empty');
    fs.mkdirSync(empty);
    git(empty, 'init', '-q');
    assert.deepEqual(await createTaskWorktree({ folder: empty, worktreesDir: path.join(root, 'wt'), taskId: 't2', title: 'x' }), {
      kind: 'in-place',
      reason: 'the repository has no commit yet',
    });
  });

  it("a worktree removed by hand: removing the task prunes git's record and deletes the branch", async () => {
    const repo = makeRepo(root);
    const made = await createTaskWorktree({ folder: repo, worktreesDir: path.join(root, 'wt'), taskId: 'gone1234', title: 'Gone' });
    if (made.kind !== 'created') throw new Error('no worktree');
    fs.rmSync(made.worktreePath, { recursive: true, force: true });
    const where = { repoPath: repo, worktreePath: made.worktreePath, branch: made.branch };
    assert.deepEqual(
      await removeTaskWorktree(where),
      { removed: [`the branch ${made.branch}`], problems: [] },
      'only what was there is reported removed',
    );
    assert.equal(git(repo, 'branch', '--list', made.branch), '');
    assert.equal(
      git(repo, 'worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')).length,
      1,
    );
    assert.deepEqual(await removeTaskWorktree(where), { removed: [], problems: [] }, 'nothing left: nothing removed');
  });

  it('Discard reports what it removed, or that nothing was left', () => {
    assert.equal(
      discardReport(['the worktree /w/t-1', 'the branch offpeak/t-1']),
      'Removed the worktree /w/t-1 and the branch offpeak/t-1.',
    );
    assert.equal(discardReport(['the branch offpeak/t-1']), 'Removed the branch offpeak/t-1 (its worktree was already gone).');
    assert.equal(discardReport([]), 'Nothing to remove: its worktree and branch were already gone.');
  });

  it('Merge, Apply, Open worktree and Discard are offered only for a finished task whose worktree is there and holds changes', () => {
    const change = { path: 'a.txt', status: 'modified' as const, added: 1, removed: 0, oldBlob: null };
    const row = (over: Partial<TaskIsolation> = {}): TaskIsolation => ({
      taskId: 't',
      mode: 'worktree',
      repoPath: '/r',
      worktreePath: '/w/t',
      branch: 'offpeak/t',
      baseCommit: 'c0',
      note: null,
      changes: [change],
      missingAt: null,
      broughtHome: null,
      createdAt: 0,
      ...over,
    });
    const offers = (status: OffPeakTask['status'], over?: Partial<TaskIsolation>) =>
      Object.values(workplaceOffers({ status } as OffPeakTask, row(over)));
    assert.deepEqual(offers('completed'), [true, true, true], 'a worktree with changes: Merge/Apply, Open worktree, Discard');
    assert.deepEqual(offers('failed'), [true, true, true]);
    assert.deepEqual(offers('failed', { changes: [] }), [false, false, false], 'a worktree without changes: none');
    assert.deepEqual(offers('failed', { changes: null }), [false, false, false], 'changes never counted: none');
    assert.deepEqual(
      offers('failed', { worktreePath: null, branch: null }),
      [false, false, false],
      'no worktree (failed before it started): none',
    );
    assert.deepEqual(offers('completed', { missingAt: 5 }), [false, false, false], 'its worktree removed by hand: none');
    assert.deepEqual(offers('completed', { broughtHome: { kind: 'discarded', at: 5 } }), [false, false, false]);
    assert.deepEqual(
      offers('completed', { broughtHome: { kind: 'merged', at: 5 } }),
      [false, true, true],
      'merged: its worktree can still be opened and discarded',
    );
    assert.deepEqual(offers('running'), [false, true, false], 'a running task: its worktree can be looked at');
    assert.deepEqual(offers('completed', { mode: 'inPlace', worktreePath: null, branch: null }), [false, false, false]);
  });
});
