// What goes wrong with a pull request says what to do and loses nothing (docs/flows.md#pull-requests,
// issue 42 item 6): a protected branch, an account without write access, a token the API refuses
// at creation, the forge's rate limit on the card's looks. Real git, the forge fixture, the real store.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PULL_REQUEST_LOOK_MS } from '../../src/service/pull-requests';
import { pullRequestWords } from '../../webview/pull-request-line';
import { git, PullRequestWorld } from './pull-request-world';

describe('pull request errors (docs/flows.md#pull-requests; forge fixture, real git and store)', function () {
  this.timeout(120_000);
  let t: PullRequestWorld;
  beforeEach(async () => {
    t = await PullRequestWorld.start();
  });
  afterEach(async () => {
    await t.close();
  });
  const remoteRefs = () => git(t.forge.bareRepo('team', 'app'), 'for-each-ref', '--format=%(refname)').split('\n').sort();

  it('item 6: a protected branch refusal (the remote declines the push) says so, keeps everything, and a retry works', async () => {
    const hook = path.join(t.forge.bareRepo('team', 'app'), 'hooks', 'pre-receive');
    fs.writeFileSync(hook, '#!/bin/sh\necho "error: GH006: Protected branch update failed: required status checks." >&2\nexit 1\n', {
      mode: 0o755,
    });
    const task = await t.finishedTask();
    await assert.rejects(
      t.handlers().openPullRequest({ taskId: task.id }),
      /refused offpeak\/[^ ]+: a protected branch rule\. Nothing changed here/,
    );
    assert.deepEqual(remoteRefs(), ['refs/heads/main'], 'nothing landed');
    assert.equal(t.forge.pulls.length, 0);
    t.assertUntouched(task);
    fs.rmSync(hook);
    assert.equal((await t.handlers().openPullRequest({ taskId: task.id })).number, 1, 'the retry opens it');
  });

  it('item 6: no permission (the forge answers the push 403) says to ask for write access and keeps everything', async () => {
    t.forge.denyPushes = 403;
    const task = await t.finishedTask();
    await assert.rejects(
      t.handlers().openPullRequest({ taskId: task.id }),
      /may not push there\. Nothing changed here; ask for write access/,
    );
    assert.deepEqual(remoteRefs(), ['refs/heads/main']);
    assert.equal(t.forge.pulls.length, 0);
    t.assertUntouched(task);
  });

  it('item 6: the API refusing the token (401) at creation says to sign in again, the pushed branch stays, the retry renews the session and pushes nothing new', async () => {
    const asks: { renew?: boolean }[] = [];
    t.w.service.pullRequests['options'].token = async (_h, o) => {
      asks.push(o);
      return t.forge.token;
    };
    const task = await t.finishedTask();
    t.forge.failNext(401);
    await assert.rejects(
      t.handlers().openPullRequest({ taskId: task.id }),
      /did not accept the sign-in \(expired or revoked\): sign in again and try again\. The branch offpeak\/[^ ]+ was pushed; try again to open the pull request\./,
    );
    assert.equal(t.forge.pulls.length, 0);
    t.assertUntouched(task);
    const pushed = git(t.forge.bareRepo('team', 'app'), 'rev-parse', task.branch);
    const receives = t.forge.gitRequests.filter((r) => r.service === 'git-receive-pack' && r.authorized).length;
    assert.equal((await t.handlers().openPullRequest({ taskId: task.id })).number, 1);
    assert.equal(asks[1]?.renew, true, 'the retry asks VS Code for a new session');
    assert.equal(git(t.forge.bareRepo('team', 'app'), 'rev-parse', task.branch), pushed, 'the same commit');
    assert.ok(t.forge.gitRequests.filter((r) => r.service === 'git-receive-pack' && r.authorized).length <= receives + 1);
  });

  it('item 6: a rate limit on a look waits for the reset (no look before it), the card says so, and the look after it goes on', async () => {
    const task = await t.finishedTask();
    await t.handlers().openPullRequest({ taskId: task.id });
    await t.world.settle();
    const resetAt = t.world.clock.now() + 3 * PULL_REQUEST_LOOK_MS;
    t.forge.rateLimitResetAt = resetAt;
    t.forge.failNext('rate');
    await t.world.advance(PULL_REQUEST_LOOK_MS + 30_000);
    const limited = t.forge.requests.length;
    assert.equal(t.forge.requests[limited - 1].status, 403, 'the look met the rate limit');
    const view = t.view(task.id).pullRequest!;
    assert.equal(view.waitUntil, resetAt);
    assert.match(pullRequestWords(view), /rate limit: the next look after \d\d:\d\d/);
    await t.world.advance(resetAt - t.world.clock.now() - 1_000);
    assert.equal(t.forge.requests.length, limited, 'no look before the reset');
    t.forge.pulls[0].draft = false;
    await t.world.advance(60_000);
    assert.ok(t.forge.requests.length > limited, 'looked after the reset');
    assert.equal(t.view(task.id).pullRequest?.state, 'open');
    assert.equal(t.view(task.id).pullRequest?.waitUntil ?? null, null, 'no longer waiting');
  });

  it('item 6: a forge that cannot be reached is tried again at the next interval, not at every lease tick', async () => {
    const task = await t.finishedTask();
    await t.handlers().openPullRequest({ taskId: task.id });
    await t.world.settle();
    t.forge.failNext(502, 502, 502, 502, 502, 502);
    await t.world.advance(PULL_REQUEST_LOOK_MS + 30_000);
    const failed = t.forge.requests.length;
    assert.equal(t.forge.requests[failed - 1].status, 502);
    await t.world.advance(PULL_REQUEST_LOOK_MS / 2);
    assert.equal(t.forge.requests.length, failed, 'not retried at every lease tick');
  });
});
