// The card follows its pull request (docs/flows.md#pull-requests): the lease holder looks at each
// open pull request at most once per PULL_REQUEST_LOOK_MS with conditional requests (a 304 changes
// nothing), at once after an action; merged on the forge ends the task's branch ("Merged in #1"),
// closed unmerged keeps it. Real git, the forge fixture, the real store, simulated time.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { PULL_REQUEST_LOOK_MS } from '../../src/service/pull-requests';
import { git, PullRequestWorld, type FinishedTask } from './pull-request-world';

describe('the card follows its pull request (docs/flows.md#pull-requests; forge fixture, real git and store)', function () {
  this.timeout(120_000);
  let t: PullRequestWorld;
  beforeEach(async () => {
    t = await PullRequestWorld.start();
  });
  afterEach(async () => {
    await t.close();
  });

  const looks = () => t.forge.requests.filter((r) => r.method === 'GET' && /\/pulls\/1$/.test(r.path));
  const pr = (task: FinishedTask) => t.w.store.read((tx) => tx.pullRequests.get(task.id))!;

  async function opened(): Promise<FinishedTask> {
    const task = await t.finishedTask();
    await t.handlers().openPullRequest({ taskId: task.id });
    await t.world.settle();
    return task;
  }

  it('item 3: the card follows draft → open with its checks and review, looked at once after opening, then once per interval', async () => {
    const task = await opened();
    assert.equal(looks().length, 1, 'looked at once after the action');
    assert.notEqual(pr(task).checkedAt, null);
    const sha = t.forge.pulls[0].headSha;
    t.forge.checkRuns.set(sha, [{ name: 'ci/test', status: 'in_progress', conclusion: null }]);
    await t.world.advance(PULL_REQUEST_LOOK_MS / 2);
    assert.equal(looks().length, 1, 'not again before the interval');
    await t.world.advance(PULL_REQUEST_LOOK_MS / 2 + 30_000);
    assert.equal(looks().length, 2);
    assert.deepEqual(t.view(task.id).pullRequest, {
      number: 1,
      url: pr(task).url,
      state: 'draft',
      checks: 'pending',
      review: 'none',
      waitUntil: null,
    });

    t.forge.pulls[0].draft = false;
    t.forge.checkRuns.set(sha, [{ name: 'ci/test', status: 'completed', conclusion: 'failure' }]);
    t.forge.reviews.set(1, [{ id: 1, state: 'CHANGES_REQUESTED', body: 'rename it', user: { login: 'ana' } }]);
    await t.world.advance(PULL_REQUEST_LOOK_MS + 30_000);
    assert.deepEqual(t.view(task.id).pullRequest, {
      number: 1,
      url: pr(task).url,
      state: 'open',
      checks: 'failing',
      review: 'changes_requested',
      waitUntil: null,
    });
  });

  it('item 3: nothing changed on the forge: every look is conditional, answered 304, and changes nothing', async () => {
    const task = await opened();
    const before = pr(task);
    const count = t.forge.requests.length;
    await t.world.advance(PULL_REQUEST_LOOK_MS + 30_000);
    const again = t.forge.requests.slice(count);
    assert.ok(again.length >= 2, 'the pull request and its reviews were asked');
    assert.ok(
      again.every((r) => r.ifNoneMatch && r.status === 304),
      `every look conditional and unchanged: ${JSON.stringify(again)}`,
    );
    const after = pr(task);
    assert.deepEqual({ ...after, checkedAt: 0 }, { ...before, checkedAt: 0 }, 'nothing changed but when it was asked');
    assert.ok(after.checkedAt! > before.checkedAt!);
  });

  it('item 3: only the lease holder looks: a second window adds no request', async () => {
    await opened();
    await t.openWindow('follower');
    const count = looks().length;
    await t.world.advance(PULL_REQUEST_LOOK_MS + 30_000);
    assert.equal(looks().length, count + 1, 'one look per interval across both windows');
  });

  it('item 3: merged on the forge ends the branch as Merge does: worktree and branch removed, "Merged in #1", told once', async () => {
    const task = await opened();
    const told: { taskId: string; number: number }[] = [];
    t.w.service.pullRequests.onDidMerge((e) => told.push(e));
    Object.assign(t.forge.pulls[0], { merged: true, state: 'closed' });
    await t.world.advance(PULL_REQUEST_LOOK_MS + 30_000);
    assert.equal(pr(task).state, 'merged');
    assert.equal(fs.existsSync(task.worktree), false, 'the worktree is removed');
    assert.equal(git(t.repo, 'branch', '--list', task.branch), '', 'the local branch is removed');
    const isolation = t.w.store.read((tx) => tx.isolation.get(task.id))!;
    assert.equal(isolation.broughtHome?.kind, 'merged');
    assert.equal(t.view(task.id).canOpenPullRequest, false);
    assert.equal(t.view(task.id).mergedIn, 1);
    const [row] = t.w.service.history();
    assert.equal(row.outcome.label, 'Merged in #1', 'History says it');
    assert.deepEqual(told, [{ taskId: task.id, number: 1 }], 'told once');
    await t.world.advance(PULL_REQUEST_LOOK_MS + 30_000);
    assert.equal(told.length, 1, 'a merged pull request is not looked at again');
  });

  it('item 3: closed unmerged keeps the worktree and branch, says so, and a new pull request can be opened', async () => {
    const task = await opened();
    t.forge.pulls[0].state = 'closed';
    await t.world.advance(PULL_REQUEST_LOOK_MS + 30_000);
    assert.equal(pr(task).state, 'closed');
    assert.equal(fs.readFileSync(`${task.worktree}/README.md`, 'utf8'), 'hello\n', 'the worktree stays');
    assert.ok(git(t.repo, 'rev-parse', '--verify', task.branch), 'the branch stays');
    assert.equal(t.w.store.read((tx) => tx.isolation.get(task.id))!.broughtHome, null);
    assert.equal(t.view(task.id).pullRequest?.state, 'closed');
    assert.equal(t.view(task.id).canOpenPullRequest, true);
  });
});
