// Task worktrees under every platform's git rules (docs/platforms.md, docs/flows.md#isolation),
// on real git repositories in a temporary folder. Windows is injected where git's answer depends on
// it (`core.longPaths`); Git for Windows itself is not run here (no registry reachable here has it).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hardenedGitArgs, hardenedGitEnv, keptUserSettings, runGit } from '../../src/agent/workplace/hardened-git';
import { commitWorktree } from '../../src/agent/workplace/task-merge';
import {
  createTaskWorktree,
  isWorktreeAt,
  removeTaskWorktree,
  worktreeWorkFolder,
  type TaskWorktree,
} from '../../src/agent/workplace/task-worktree';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' }).trim();
const worktreeCount = (repo: string) =>
  git(repo, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree ')).length;

function makeRepo(root: string, files: Record<string, string> = { 'a.txt': 'one\ntwo\n' }): string {
  const repo = path.join(root, 'repo');
  fs.mkdirSync(path.join(repo, 'pkg'), { recursive: true });
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(repo, name), text);
  fs.writeFileSync(path.join(repo, 'pkg', 'index.js'), 'module.exports = 1;\n');
  git(repo, 'init', '-q');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'init');
  return repo;
}

async function made(repo: string, worktreesDir: string, taskId: string, options = {}): Promise<TaskWorktree> {
  const result = await createTaskWorktree({ folder: repo, worktreesDir, taskId, title: 'A task' }, options);
  if (result.kind !== 'created') throw new Error(`no worktree: ${result.reason}`);
  return result;
}

describe('platform: task worktrees and git', () => {
  let root: string;
  /** The user's global git config, as this test writes it (the real one is never read). */
  let userConfigFile: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-git-'));
    userConfigFile = path.join(root, 'user.gitconfig');
    fs.writeFileSync(userConfigFile, '');
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('item 1: every hardened git run refuses lazy fetch and every transport protocol through its environment (a repository config cannot undo either)', () => {
    const env = hardenedGitEnv({}, { PATH: '/usr/bin', GIT_NO_LAZY_FETCH: '0', GIT_ALLOW_PROTOCOL: 'ext:file' });
    assert.equal(env.GIT_NO_LAZY_FETCH, '1');
    assert.equal(env.GIT_ALLOW_PROTOCOL, '');
    assert.equal(env.GIT_CONFIG_NOSYSTEM, '1', 'the other guards are kept');
    assert.equal(env.PATH, '/usr/bin');
  });

  it('platform: on Windows (injected platform) every hardened git run sets core.longPaths=true; elsewhere it is left out', async () => {
    const settings = (platform: NodeJS.Platform) => hardenedGitArgs(['status'], platform).filter((_, i, all) => all[i - 1] === '-c');
    assert.ok(settings('win32').includes('core.longPaths=true'));
    for (const platform of ['linux', 'darwin'] as const) assert.ok(!settings(platform).some((s) => /longpaths/i.test(s)), platform);
    // This machine's git (not Git for Windows) takes the Windows argv too: a task's worktree is made.
    const repo = makeRepo(root);
    const wt = await made(repo, path.join(root, 'wt'), 'win12345', { platform: 'win32', userConfigFile });
    assert.equal((await runGit(['config', '--get', 'core.longPaths'], { cwd: wt.worktreePath, platform: 'win32' }))?.trim(), 'true');
  });

  it("platform: a worktree is recognised by git's answer, not its path string: reached through a symbolic link it is the worktree (and its subfolder its counterpart); a subfolder or a plain folder is not a worktree", async () => {
    const repo = makeRepo(root);
    const realStorage = path.join(root, 'real-storage');
    fs.mkdirSync(realStorage);
    const linkedStorage = path.join(root, 'storage');
    fs.symlinkSync(realStorage, linkedStorage, 'dir');
    const wt = await made(repo, path.join(linkedStorage, 'worktrees'), 'link1234', { userConfigFile });
    assert.ok(wt.worktreePath.startsWith(linkedStorage + path.sep), 'named as the window names globalStorage');
    assert.equal(await isWorktreeAt(wt.worktreePath), true, 'through the link');
    assert.equal(await isWorktreeAt(fs.realpathSync(wt.worktreePath)), true, 'and by its real path');
    assert.equal(await isWorktreeAt(path.join(wt.worktreePath, 'pkg')), false, 'a subfolder is not the top');
    assert.equal(await isWorktreeAt(linkedStorage), false, 'a plain folder');
    assert.equal(
      path.resolve((await worktreeWorkFolder(path.join(repo, 'pkg'), wt.worktreePath)) ?? 'none'),
      path.join(wt.worktreePath, 'pkg'),
    );
  });

  it('platform: worktree folders are short: <worktreesDir>/<the first 8 letters of the task id>, whatever the title', async () => {
    const repo = makeRepo(root);
    const result = await createTaskWorktree(
      {
        folder: repo,
        worktreesDir: path.join(root, 'wt'),
        taskId: '9f3a2c1b-77aa-4bbb-8ccc-0123456789ab',
        title: 'A rather long title that says a lot about the task',
      },
      { userConfigFile },
    );
    assert.equal(result.kind === 'created' && result.worktreePath, path.join(root, 'wt', '9f3a2c1b'));
    assert.equal(result.kind === 'created' && result.branch, 'offpeak/a-rather-long-title-that-says-a-lot-abou-9f3a2c1b');
  });

  it("platform: task worktrees are locked, so another checkout's `git worktree prune` (one that cannot reach them: the other side of WSL or a container) keeps them; removal unlocks and removes them", async () => {
    const repo = makeRepo(root);
    const wt = await made(repo, path.join(root, 'wt'), 'lock1234', { userConfigFile });
    assert.match(
      git(repo, 'worktree', 'list', '--porcelain'),
      new RegExp(`worktree ${fs.realpathSync(wt.worktreePath)}\\n(?:.*\\n)*?locked`),
    );
    // The other side: the worktree's folder is out of its reach while it prunes.
    const away = path.join(root, 'out-of-reach');
    fs.renameSync(wt.worktreePath, away);
    git(repo, 'worktree', 'prune');
    fs.renameSync(away, wt.worktreePath);
    assert.equal(await isWorktreeAt(wt.worktreePath), true, 'still a worktree after the other side pruned');
    assert.equal(git(wt.worktreePath, 'rev-parse', '--abbrev-ref', 'HEAD'), wt.branch);

    assert.deepEqual((await removeTaskWorktree({ repoPath: repo, worktreePath: wt.worktreePath, branch: wt.branch })).problems, []);
    assert.ok(!fs.existsSync(wt.worktreePath));
    assert.equal(git(repo, 'branch', '--list', wt.branch), '');
    assert.equal(worktreeCount(repo), 1);
  });

  it("platform: removing a task's worktree whose folder is gone takes only its own record off git's list, never the user's other worktrees that this side cannot reach (no `git worktree prune`)", async () => {
    const repo = makeRepo(root);
    const wt = await made(repo, path.join(root, 'wt'), 'gone1234', { userConfigFile });
    // The user's own worktree, made on the other side (its folder unreachable from here).
    const users = path.join(root, 'users-worktree');
    git(repo, 'worktree', 'add', '-q', '-b', 'users-branch', users);
    fs.renameSync(users, path.join(root, 'elsewhere'));
    fs.rmSync(wt.worktreePath, { recursive: true, force: true });
    assert.deepEqual((await removeTaskWorktree({ repoPath: repo, worktreePath: wt.worktreePath, branch: wt.branch })).problems, []);
    assert.equal(git(repo, 'branch', '--list', wt.branch), '');
    const listed = git(repo, 'worktree', 'list', '--porcelain');
    assert.ok(!listed.includes(fs.realpathSync(path.join(root, 'wt'))), "the task's record is gone");
    assert.ok(
      listed.includes(`worktree ${path.join(fs.realpathSync(root), 'users-worktree')}`),
      "the user's worktree is still known to git",
    );
  });

  it('platform: a start that crashed after `git worktree add`, its folder removed since: the locked record is cleared and the worktree made again on the same branch', async () => {
    const repo = makeRepo(root);
    const first = await made(repo, path.join(root, 'wt'), 'again123', { userConfigFile });
    fs.rmSync(first.worktreePath, { recursive: true, force: true });
    const again = await made(repo, path.join(root, 'wt'), 'again123', { userConfigFile });
    assert.deepEqual(again, first);
    assert.equal(await isWorktreeAt(again.worktreePath), true);
    assert.equal(fs.readFileSync(path.join(again.worktreePath, 'a.txt'), 'utf8'), 'one\ntwo\n');
  });

  it("a start that crashed after an earlier version's `git worktree add` (its folder named <slug>-<short id>) finds that worktree by git's list and reuses it; once that folder is gone, its record is cleared and the worktree made at the short name", async () => {
    const repo = makeRepo(root);
    const wtDir = path.join(root, 'wt');
    const branch = 'offpeak/a-task-older123';
    const older = path.join(wtDir, 'a-task-older123');
    git(repo, 'worktree', 'add', '-q', '-b', branch, older, 'HEAD');
    fs.writeFileSync(path.join(older, 'kept.txt'), 'work\n');
    const found = await made(repo, wtDir, 'older123', { userConfigFile });
    assert.deepEqual([found.worktreePath, found.branch], [fs.realpathSync(older), branch]);
    assert.ok(fs.existsSync(path.join(found.worktreePath, 'kept.txt')), 'its work is kept');

    fs.rmSync(older, { recursive: true, force: true });
    const again = await made(repo, wtDir, 'older123', { userConfigFile });
    assert.equal(again.worktreePath, path.join(wtDir, 'older123'));
    assert.equal(await isWorktreeAt(again.worktreePath), true);
    assert.equal(worktreeCount(repo), 2, "the user's checkout and the task's new worktree");
  });

  it("platform: the user's own core.autocrlf (their global config, as Git for Windows sets it) is kept: a task's worktree is checked out with CRLF and its work committed with LF, as the user's own checkout would; the repository's own setting wins over it", async () => {
    fs.writeFileSync(userConfigFile, '[core]\n\tautocrlf = true\n');
    const repo = makeRepo(root);
    const wt = await made(repo, path.join(root, 'wt'), 'crlf1234', { userConfigFile });
    assert.equal(fs.readFileSync(path.join(wt.worktreePath, 'a.txt'), 'utf8'), 'one\r\ntwo\r\n', 'checked out with CRLF');
    fs.writeFileSync(path.join(wt.worktreePath, 'b.txt'), 'new\r\nfile\r\n');
    const privateDir = path.join(root, 'private');
    fs.mkdirSync(privateDir);
    const commit = await commitWorktree(
      { ...wt, message: 'task work', privateDir },
      { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' },
      { userConfigFile },
    );
    assert.equal(git(repo, 'cat-file', 'blob', `${commit}:b.txt`), 'new\nfile', 'committed with LF');
    assert.equal(git(repo, 'diff', '--name-only', wt.baseCommit, commit), 'b.txt', 'a.txt is unchanged: its CRLF is only the checkout');

    git(repo, 'config', 'core.autocrlf', 'false');
    const own = await made(repo, path.join(root, 'wt'), 'lf123456', { userConfigFile });
    assert.equal(
      fs.readFileSync(path.join(own.worktreePath, 'a.txt'), 'utf8'),
      'one\ntwo\n',
      "the repository's own core.autocrlf=false wins",
    );
  });

  it('platform: core.autocrlf is read as git reads it: its booleans, `input`, a bare key, the last value given', () => {
    const listing = (...records: string[]) => records.map((r) => r + '\0').join('');
    assert.deepEqual(keptUserSettings(listing('core.autocrlf\nyes')), ['core.autocrlf=true']);
    assert.deepEqual(keptUserSettings(listing('core.autocrlf\nInput')), ['core.autocrlf=input']);
    assert.deepEqual(keptUserSettings(listing('core.autocrlf')), ['core.autocrlf=true']);
    assert.deepEqual(keptUserSettings(listing('core.autocrlf\ntrue', 'filter.lfs.clean\ngit-lfs clean -- %f', 'core.autocrlf\noff')), [
      'core.autocrlf=false',
    ]);
    assert.deepEqual(keptUserSettings(listing('filter.lfs.clean\ngit-lfs clean -- %f')), []);
  });
});
