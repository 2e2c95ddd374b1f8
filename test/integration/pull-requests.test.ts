// "Open pull request" from the card (docs/flows.md#pull-requests): the panel's request, the
// service's action, real git pushing to a real bare remote over smart HTTP, Octokit against the
// forge fixture (a GitHub Enterprise stand-in on 127.0.0.1), the real store and reference gateway.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveWorkplace } from '../../src/agent/workplace/task-workplace';
import { bringHomeHandlers } from '../../src/panel/bring-home-handlers';
import type { PanelHostBits } from '../../src/panel/host-bits';
import { workplaceViews } from '../../src/panel/workplace-panel';
import type { PullRequestSettings } from '../../src/service';
import { startForgeFixture, type ForgeFixture } from '../fixtures/forge-fixture';
import { World, taskInput, startRunning, type Window } from './service-harness';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' }).trim();

const PROMPT = ['Fix the typo in the README.', 'line 2', 'line 3', 'line 4', 'line 5', 'line 6', 'line 7 folded', 'line 8 folded'].join(
  '\n',
);

describe('Open pull request (docs/flows.md#pull-requests; real git, forge fixture, real store)', function () {
  this.timeout(120_000);
  let forge: ForgeFixture;
  let world: World;
  let root: string;
  let repo: string;
  let w: Window;
  let settings: PullRequestSettings;
  let token: string | undefined;

  beforeEach(async () => {
    forge = await startForgeFixture();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'pr-open-'));
    repo = path.join(root, 'repo');
    fs.mkdirSync(repo);
    fs.writeFileSync(path.join(repo, 'README.md'), 'helo\n');
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'init');
    git(repo, 'push', '-q', forge.bareRepo('team', 'app'), 'main');
    git(repo, 'remote', 'add', 'origin', forge.cloneUrl('team', 'app'));
    settings = { remote: 'origin', draft: true, githubEnterpriseHosts: [forge.origin] };
    token = forge.token;
    world = await World.start();
    w = await world.openWindow('holder', {
      pullRequests: { settings: () => settings, token: async () => token },
    });
  });
  afterEach(async () => {
    await world?.close();
    await forge.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const handlers = () => bringHomeHandlers(w.service, w.store, {} as PanelHostBits, undefined);
  const view = (taskId: string) => w.store.read((tx) => workplaceViews(tx, w.service.listTasks())).get(taskId)!;
  const bare = () => forge.bareRepo('team', 'app');
  const remoteRefs = () => git(bare(), 'for-each-ref', '--format=%(refname)').split('\n').sort();

  /** A task on its own branch that wrote README.md and completed, as the runtime runs it. */
  async function finishedTask(): Promise<{ id: string; branch: string; worktree: string }> {
    const task = await w.service.create(
      taskInput({ title: 'Fix the README typo', prompt: PROMPT, workspacePath: repo, isolation: 'worktree' }),
    );
    await world.promote();
    await world.advance(15_000);
    await startRunning(w, task.id);
    const place = await resolveWorkplace(w.store, w.service.getTask(task.id)!, path.join(root, 'worktrees'));
    assert.equal(place.kind, 'ready');
    if (place.kind !== 'ready') throw new Error('no worktree');
    fs.writeFileSync(path.join(place.place.folder, 'README.md'), 'hello\n');
    await w.store.mutate((tx) =>
      tx.isolation.recordChanges(task.id, [{ path: 'README.md', status: 'modified', added: 1, removed: 1, oldBlob: null }]),
    );
    assert.ok(await w.service.lifecycle.complete(task.id, {}));
    const isolation = w.store.read((tx) => tx.isolation.get(task.id))!;
    return { id: task.id, branch: isolation.branch!, worktree: isolation.worktreePath! };
  }

  it('item 1: Open pull request pushes only the branch and opens a draft titled and described as the task', async () => {
    const t = await finishedTask();
    assert.equal(view(t.id).canOpenPullRequest, true, 'the card offers it');
    const result = await handlers().openPullRequest({ taskId: t.id });
    assert.equal(result.number, 1);
    assert.equal(result.url, `${forge.origin}/team/app/pull/1`);

    assert.deepEqual(remoteRefs(), ['refs/heads/main', `refs/heads/${t.branch}`], "only the task's branch was pushed");
    assert.equal(git(bare(), 'show', `${t.branch}:README.md`), 'hello', "the branch holds the task's work, committed");
    assert.equal(git(bare(), 'rev-parse', 'main'), git(repo, 'rev-parse', 'main'));

    const [pull] = forge.pulls;
    assert.equal(pull.title, 'Fix the README typo');
    assert.equal(pull.draft, true);
    assert.equal(pull.head, t.branch);
    assert.equal(pull.base, 'main');
    for (const part of [
      'Fix the typo in the README.',
      'line 6',
      'line 8 folded',
      '<details>',
      'README.md',
      'No check was set',
      'off-peak agent',
    ])
      assert.ok(pull.body.includes(part), `the body has ${part}`);
    assert.ok(pull.body.indexOf('line 7 folded') > pull.body.indexOf('<details>'), 'the rest of the prompt is folded');

    const card = view(t.id);
    assert.deepEqual(card.pullRequest, { number: 1, url: result.url, state: 'draft', checks: 'none', review: 'none', waitUntil: null });
    assert.equal(card.canOpenPullRequest, false, 'no second pull request while this one is open');
    await assert.rejects(handlers().openPullRequest({ taskId: t.id }), /already has pull request #1/);
  });

  it('item 1: offPeak.pullRequest.draft off opens it ready for review', async () => {
    settings = { ...settings, draft: false };
    const t = await finishedTask();
    await handlers().openPullRequest({ taskId: t.id });
    assert.equal(forge.pulls[0].draft, false);
    assert.equal(view(t.id).pullRequest?.state, 'open');
  });

  it('item 5: the API gets the token from the provider (never stored), and no session asks to sign in, pushing nothing', async () => {
    token = undefined;
    const t = await finishedTask();
    await assert.rejects(handlers().openPullRequest({ taskId: t.id }), /Sign in to 127\.0\.0\.1:\d+/);
    assert.deepEqual(remoteRefs(), ['refs/heads/main'], 'nothing was pushed');
    assert.equal(forge.requests.length, 0);
    token = forge.token;
    await handlers().openPullRequest({ taskId: t.id });
    assert.ok(forge.requests.every((r) => r.authorization === `token ${forge.token}`));
    const dbFile = fs.readdirSync(world.dir).filter((f) => f.endsWith('.sqlite'));
    for (const f of dbFile)
      assert.ok(!fs.readFileSync(path.join(world.dir, f)).toString('latin1').includes(forge.token), `${f} holds no token`);
  });

  /** The task's branch and worktree as they were: nothing lost, a retry possible. */
  function assertUntouched(t: { id: string; branch: string; worktree: string }) {
    assert.equal(fs.readFileSync(path.join(t.worktree, 'README.md'), 'utf8'), 'hello\n', 'the worktree keeps the work');
    assert.ok(git(repo, 'rev-parse', '--verify', t.branch), 'the branch is there');
    const isolation = w.store.read((tx) => tx.isolation.get(t.id))!;
    assert.equal(isolation.broughtHome, null);
    assert.equal(view(t.id).canOpenPullRequest, true, 'the card still offers it: a retry is possible');
    assert.equal(
      w.store.read((tx) => tx.pullRequests.get(t.id)),
      undefined,
    );
  }

  it('item 6: no remote says to add one or name another, nothing pushed', async () => {
    git(repo, 'remote', 'remove', 'origin');
    const t = await finishedTask();
    await assert.rejects(handlers().openPullRequest({ taskId: t.id }), /no remote "origin": add one .*offPeak\.pullRequest\.remote/);
    assertUntouched(t);
    assert.equal(forge.gitRequests.length, 0);
  });

  it('item 6: an unknown host is refused before any token is asked for or sent', async () => {
    let asked = 0;
    settings = { ...settings, githubEnterpriseHosts: [] };
    w.service.pullRequests['options'].token = async () => {
      asked++;
      return forge.token;
    };
    const t = await finishedTask();
    await assert.rejects(handlers().openPullRequest({ taskId: t.id }), /127\.0\.0\.1:\d+ is not a GitHub host .*githubEnterpriseHosts/);
    assert.equal(asked, 0, 'no token was asked for');
    assert.equal(forge.gitRequests.length + forge.requests.length, 0, 'nothing reached the host');
    assertUntouched(t);
  });

  it('item 6: a rejected push (the branch moved on the remote) says nothing was forced and keeps everything', async () => {
    const t = await finishedTask();
    const other = path.join(root, 'other');
    git(root, 'clone', '-q', bare(), other);
    git(other, 'switch', '-q', '-c', t.branch);
    fs.writeFileSync(path.join(other, 'theirs.txt'), 'theirs\n');
    git(other, 'add', '.');
    git(other, 'commit', '-q', '-m', 'theirs');
    git(other, 'push', '-q', 'origin', t.branch);
    const theirs = git(other, 'rev-parse', 'HEAD');
    await assert.rejects(handlers().openPullRequest({ taskId: t.id }), /commits this task's branch does not have\. Nothing was forced/);
    assert.equal(git(bare(), 'rev-parse', t.branch), theirs, 'the remote branch is as they left it');
    assertUntouched(t);
    assert.equal(forge.pulls.length, 0);
  });

  it('item 6: an expired session (the token refused) says to sign in again and asks for a new session on the retry', async () => {
    const asks: { renew?: boolean }[] = [];
    token = 'ghp_expired';
    w.service.pullRequests['options'].token = async (_h, o) => {
      asks.push(o);
      return token;
    };
    const t = await finishedTask();
    await assert.rejects(handlers().openPullRequest({ taskId: t.id }), /did not accept the sign-in \(expired or revoked\): sign in again/);
    assertUntouched(t);
    token = forge.token;
    await handlers()
      .openPullRequest({ taskId: t.id })
      .catch(() => undefined);
    assert.equal(asks[1]?.renew, true, 'the retry asks VS Code for a new session');
  });

  it('item 6: an offline forge says to check the connection; branch and worktree as they were', async () => {
    const t = await finishedTask();
    await forge.close();
    await assert.rejects(handlers().openPullRequest({ taskId: t.id }), /cannot be reached: check the connection and try again/);
    assertUntouched(t);
    forge = await startForgeFixture(); // afterEach closes one
  });
});
