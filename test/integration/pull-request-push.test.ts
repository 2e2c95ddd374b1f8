// The push of "Open pull request" (docs/flows.md#pull-requests, docs/security.md#pushing-a-task-branch):
// real git to a real bare repository served over smart HTTP by the forge fixture (git http-backend,
// Basic auth with the token), through the hardened git runner.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pushTaskBranch } from '../../src/agent/workplace/branch-push';
import { startForgeFixture, type ForgeFixture } from '../fixtures/forge-fixture';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' }).trim();

/** Every file under a folder, read as text. */
function filesUnder(dir: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out.push({ file, text: fs.readFileSync(file).toString('latin1') });
  }
  return out;
}

/** Every live process's command line (Windows: through PowerShell's process table). */
function processList(): string {
  if (process.platform === 'win32')
    return execFileSync('powershell.exe', ['-NoProfile', '-Command', 'Get-CimInstance Win32_Process | ForEach-Object { $_.CommandLine }'], {
      encoding: 'utf8',
    });
  return execFileSync('ps', ['-A', '-o', 'args='], { encoding: 'utf8' });
}

describe('pushing a task branch for a pull request (real git, real bare remote over HTTP)', function () {
  this.timeout(120_000);
  let forge: ForgeFixture;
  let root: string;
  let repo: string;
  let bare: string;
  let privateDir: string;
  const branch = 'offpeak/fix-typo-abc123';

  beforeEach(async () => {
    forge = await startForgeFixture();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'pr-push-'));
    repo = path.join(root, 'repo');
    privateDir = path.join(root, 'private');
    fs.mkdirSync(privateDir, { mode: 0o700 });
    fs.mkdirSync(repo);
    fs.writeFileSync(path.join(repo, 'README.md'), 'hello\n');
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'init');
    bare = forge.bareRepo('team', 'app');
    git(repo, 'push', '-q', bare, 'main');
    git(repo, 'remote', 'add', 'origin', forge.cloneUrl('team', 'app'));
    git(repo, 'switch', '-q', '-c', branch);
    fs.writeFileSync(path.join(repo, 'README.md'), 'hello, world\n');
    git(repo, 'commit', '-q', '-am', 'task work');
    git(repo, 'switch', '-q', 'main');
    // Work on main the task must never push.
    fs.writeFileSync(path.join(repo, 'local.txt'), 'mine\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'local only');
  });
  afterEach(async () => {
    await forge.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const push = (over: Partial<Parameters<typeof pushTaskBranch>[0]> = {}) =>
    pushTaskBranch({
      repoPath: repo,
      branch,
      baseBranch: 'main',
      url: forge.cloneUrl('team', 'app'),
      username: 'x-access-token',
      token: forge.token,
      privateDir,
      ...over,
    });

  it("item 1: only the task's branch lands on the remote, the base branch untouched", async () => {
    const mainBefore = git(bare, 'rev-parse', 'refs/heads/main');
    const result = await push();
    assert.deepEqual(result, { kind: 'pushed', commit: git(repo, 'rev-parse', branch) });
    assert.equal(git(bare, 'rev-parse', `refs/heads/${branch}`), git(repo, 'rev-parse', branch));
    assert.equal(git(bare, 'rev-parse', 'refs/heads/main'), mainBefore, 'main on the remote is not the local main');
    assert.deepEqual(git(bare, 'for-each-ref', '--format=%(refname)').split('\n').sort(), ['refs/heads/main', `refs/heads/${branch}`]);
    assert.ok(forge.gitRequests.some((r) => r.service === 'git-receive-pack' && r.authorized));
  });

  it('item 1: the base branch is never pushed', async () => {
    const result = await push({ branch: 'main' });
    assert.equal(result.kind, 'failed');
    assert.equal(git(bare, 'rev-parse', 'refs/heads/main'), git(repo, 'rev-parse', 'main~1'));
    assert.equal(forge.gitRequests.length, 0, 'git never reached the remote');
  });

  it('item 1: never forced: a branch that moved on the remote is refused as non-fast-forward and stays as it was', async () => {
    // Someone else pushed to the branch meanwhile.
    const other = path.join(root, 'other');
    git(root, 'clone', '-q', bare, other);
    git(other, 'switch', '-q', '-c', branch);
    fs.writeFileSync(path.join(other, 'theirs.txt'), 'theirs\n');
    git(other, 'add', '.');
    git(other, 'commit', '-q', '-m', 'theirs');
    git(other, 'push', '-q', 'origin', branch);
    const theirs = git(other, 'rev-parse', 'HEAD');
    const result = await push();
    assert.equal(result.kind, 'failed');
    assert.equal(result.kind === 'failed' && result.failure, 'non-fast-forward');
    assert.equal(git(bare, 'rev-parse', `refs/heads/${branch}`), theirs, 'their commit is still the tip');
  });

  it('item 5: the token is in no argv (live process list during the push), no remote URL, no config, no file, no output', async () => {
    const argvs: string[] = [];
    const seenInPrivateDir: string[][] = [];
    forge.onGitRequest(() => {
      argvs.push(processList());
      const entries = fs.readdirSync(privateDir).sort();
      if (!seenInPrivateDir.some((seen) => seen.join() === entries.join())) seenInPrivateDir.push(entries);
    });
    const result = await push();
    assert.equal(result.kind, 'pushed');
    assert.ok(argvs.length >= 2, 'the process list was read while git was pushing');
    assert.ok(
      argvs.some((list) => list.includes('git') && list.includes('push')),
      'the pushing git was alive when the list was read',
    );
    for (const list of argvs) assert.ok(!list.includes(forge.token), 'no process has the token in its argv');
    // Every platform: the token goes as a header from the environment, through no script a shell would run.
    assert.deepEqual(seenInPrivateDir, [['push-git']], 'only the private git directory was in the private folder while git pushed');
    for (const { file, text } of [...filesUnder(repo), ...filesUnder(privateDir)])
      assert.ok(!text.includes(forge.token), `${file} does not hold the token`);
    assert.ok(!git(repo, 'config', '--list').includes(forge.token));
    assert.deepEqual(fs.readdirSync(privateDir), [], 'the private git directory is gone (no helper script was ever written)');
  });

  it('item 6: a wrong token is an authentication failure and the remote is unchanged', async () => {
    const result = await push({ token: 'ghp_wrong' });
    assert.equal(result.kind === 'failed' && result.failure, 'auth');
    assert.equal(git(bare, 'for-each-ref', '--format=%(refname)'), 'refs/heads/main');
  });

  it('item 5: a URL that is plain http to a non-loopback host, or carries a credential, is refused before git runs', async () => {
    for (const url of ['http://example.com/team/app.git', `http://u:${forge.token}@127.0.0.1:1/team/app.git`, 'ext::sh -c x']) {
      const result = await push({ url });
      assert.equal(result.kind === 'failed' && result.failure, 'refused', url);
    }
    assert.equal(forge.gitRequests.length, 0);
  });
});
