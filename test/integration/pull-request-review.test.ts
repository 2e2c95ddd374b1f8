// "Follow up from review" (docs/flows.md#pull-requests, issue 42 item 4): the pull request's review
// comments and failing checks become a follow-up that resumes the same session in the same
// worktree; its new commits go to the same pull request. Real git, the forge fixture, the real store.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PULL_REQUEST_LOOK_MS } from '../../src/service/pull-requests';
import { startRunning } from './service-harness';
import { git, PullRequestWorld } from './pull-request-world';

describe('Follow up from review (docs/flows.md#pull-requests; forge fixture, real git and store)', function () {
  this.timeout(120_000);
  let t: PullRequestWorld;
  beforeEach(async () => {
    t = await PullRequestWorld.start();
  });
  afterEach(async () => {
    await t.close();
  });

  it('item 4: the review comments and failing checks become a follow-up in the same session and worktree, pushed to the same pull request', async () => {
    const task = await t.finishedTask();
    await t.handlers().openPullRequest({ taskId: task.id });
    await t.world.settle();
    const sha = t.forge.pulls[0].headSha;
    t.forge.checkRuns.set(sha, [
      { name: 'ci/test', status: 'completed', conclusion: 'failure' },
      { name: 'ci/lint', status: 'completed', conclusion: 'success' },
    ]);
    t.forge.reviewComments.set(1, [
      { id: 1, path: 'README.md', line: 1, body: 'Say "hello, world" here.', user: { login: 'ana' }, position: 1 },
      { id: 2, path: 'README.md', line: 1, body: 'An old remark.', user: { login: 'bo' }, position: null },
    ]);

    assert.equal(t.view(task.id).canFollowUpFromReview, false, 'nothing to follow up on yet');
    await t.w.service.pullRequests.follow.look(task.id);
    assert.equal(t.view(task.id).canFollowUpFromReview, true, 'the card offers it once the checks fail');
    const { taskId: followId } = await t.handlers().followUpFromReview({ taskId: task.id });
    const follow = t.w.service.getTask(followId)!;
    assert.match(follow.prompt, /README\.md:1 \(@ana\): Say "hello, world" here\./);
    assert.match(follow.prompt, /ci\/test/);
    assert.ok(!follow.prompt.includes('ci/lint'), 'a passing check is not asked about');
    assert.ok(!follow.prompt.includes('An old remark'), 'an outdated comment is left out');
    assert.equal(follow.title, 'Follow-up from review of #1');
    const link = t.w.store.read((tx) => tx.followUps.get(follow.id))!;
    assert.equal(link.sessionId, `session-${task.id}`, 'the same session');
    const iso = t.w.store.read((tx) => tx.isolation.get(follow.id))!;
    assert.equal(iso.worktreePath, task.worktree, 'the same worktree');
    assert.equal(iso.branch, task.branch);

    // The follow-up runs off-peak like any, then its commits go to the same pull request.
    await t.world.promote();
    await t.world.advance(15_000);
    await startRunning(t.w, follow.id);
    fs.writeFileSync(path.join(task.worktree, 'README.md'), 'hello, world\n');
    assert.ok(await t.w.service.lifecycle.complete(follow.id, {}));
    assert.equal(t.view(follow.id).canOpenPullRequest, true, 'the follow-up card offers the push');
    const result = await t.handlers().openPullRequest({ taskId: follow.id });
    assert.equal(result.number, 1, 'the same pull request');
    assert.equal(t.forge.pulls.length, 1, 'no second pull request');
    assert.equal(git(t.forge.bareRepo('team', 'app'), 'show', `${task.branch}:README.md`), 'hello, world');
    assert.equal(t.view(follow.id).pullRequest?.number, 1, 'the follow-up card follows it now');
    assert.equal(t.view(task.id).pullRequest ?? null, null, 'and only it: one look per pull request');
  });

  it('item 4: a follow-up from review that completed pushes its commits to the same pull request by itself (the lease holder, once)', async () => {
    const task = await t.finishedTask();
    await t.handlers().openPullRequest({ taskId: task.id });
    await t.world.settle();
    t.forge.reviewComments.set(1, [{ id: 1, path: 'README.md', line: 1, body: 'Comma, please.', user: { login: 'ana' }, position: 1 }]);
    const { taskId: followId } = await t.handlers().followUpFromReview({ taskId: task.id });
    await t.world.promote();
    await t.world.advance(15_000);
    await startRunning(t.w, followId);
    fs.writeFileSync(path.join(task.worktree, 'README.md'), 'hello, world\n');
    assert.ok(await t.w.service.lifecycle.complete(followId, {}));
    await t.world.advance(60_000);
    assert.equal(git(t.forge.bareRepo('team', 'app'), 'show', `${task.branch}:README.md`), 'hello, world', 'pushed without a click');
    assert.equal(t.forge.pulls.length, 1, 'to the same pull request');
    assert.equal(t.view(followId).pullRequest?.number, 1);
    const pushes = t.forge.gitRequests.filter((r) => r.service === 'git-receive-pack' && r.authorized).length;
    await t.world.advance(PULL_REQUEST_LOOK_MS + 30_000);
    assert.equal(t.forge.gitRequests.filter((r) => r.service === 'git-receive-pack' && r.authorized).length, pushes, 'once');
  });

  it('item 4: no pull request, or one with nothing to address, says so and creates nothing', async () => {
    const task = await t.finishedTask();
    await assert.rejects(t.w.service.pullRequests.followUpFromReview(task.id), /no pull request/);
    await t.handlers().openPullRequest({ taskId: task.id });
    await assert.rejects(t.w.service.pullRequests.followUpFromReview(task.id), /no review comments and no failing checks/);
    assert.equal(t.w.service.listTasks().length, 1);
  });
});
