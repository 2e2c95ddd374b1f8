/**
 * A task's own branch and worktree (docs/flows.md#isolation). At the first start of a task on a
 * git folder the extension runs `git worktree add --no-checkout <dir> -b offpeak/<slug>-<short id> <HEAD>` in
 * the folder's repository (`--lock`ed, see below), the worktree in globalStorage
 * (`<globalStorage>/worktrees/<short id>`); every segment of the task (and its
 * follow-ups) then runs there, at the same path, so the agent resumes the same session (Claude
 * Code finds sessions by working directory). The user's working copy is only read (its HEAD).
 * Every git here goes through the hardened runner (hooks off, no system/global config, no
 * prompt, time limit); the checkout applies the repository's own attributes, as the user's
 * `git worktree add` would, with every filter driver off.
 *
 * The worktree is added without a checkout and then checked out from inside it: the config git
 * reads there can differ from the folder's (`[includeIf "onbranch:offpeak/**"]`,
 * `[includeIf "gitdir:…/worktrees/…"]`), and only a git run inside the new worktree sees the
 * drivers it names, so only there can the hardened runner switch them off.
 */
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { runGit, type HardenedGitOptions } from './hardened-git';

export type WorktreeGitOptions = Pick<HardenedGitOptions, 'timeoutMs' | 'gitCommand' | 'platform' | 'userConfigFile'>;

export interface TaskWorktree {
  /** The worktree's root folder (under globalStorage). */
  worktreePath: string;
  branch: string;
  baseCommit: string;
}

export type WorktreeResult = ({ kind: 'created' } & TaskWorktree) | { kind: 'in-place'; reason: string };

/** A title that ends with a date (a scheduled run's, "Nightly deps 2026-12-02"): the date is kept whole. */
const TRAILING_DATE = /-(\d{4}-\d{2}-\d{2})$/;

/**
 * `offpeak/<slug>-<short id>`: the title's words, lower case, at most 40 characters; a date the
 * title ends with survives the cut (docs/flows.md#schedules-and-chains).
 */
export function branchNameFor(taskId: string, title: string): string {
  const words = title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const date = TRAILING_DATE.exec(words)?.[1];
  const cut = (text: string, max: number) => text.slice(0, max).replace(/-+$/g, '');
  const slug =
    date && words.length > 40 ? `${cut(words.slice(0, -date.length - 1), 40 - date.length - 1)}-${date}`.replace(/^-/, '') : cut(words, 40);
  return `offpeak/${slug || 'task'}-${shortTaskId(taskId)}`;
}

/** The task id's first 8 letters and digits: the branch's suffix and the worktree's folder name. */
function shortTaskId(taskId: string): string {
  return (
    taskId
      .replace(/[^A-Za-z0-9]/g, '')
      .slice(0, 8)
      .toLowerCase() || 'task'
  );
}

/**
 * `<worktreesDir>/<short id>`: short, so a deep repository's paths stay under Windows' MAX_PATH
 * where git's own `core.longPaths` does not reach (the agent's tools, the user's build).
 */
export function worktreeDirFor(worktreesDir: string, taskId: string): string {
  return path.join(path.resolve(worktreesDir), shortTaskId(taskId));
}

function git(cwd: string, args: string[], options: WorktreeGitOptions): Promise<string | null> {
  return runGit(args, { ...options, cwd });
}

/**
 * Task worktrees are locked from the moment git adds them (`--lock`): a `git worktree prune` run
 * by another checkout of the repository (the other side of WSL or a container, which cannot reach
 * this path) then leaves them alone. Removal unlocks first.
 */
const LOCKED = '--lock';

/**
 * Clears git's record of a worktree at `dir` whose folder is gone (removed by hand, or a start
 * that crashed): only that one record, never a `git worktree prune` of the whole repository
 * (which would also drop the user's own worktrees that only the other side of WSL can reach).
 */
async function forgetWorktreeRecord(top: string, dir: string, options: WorktreeGitOptions): Promise<void> {
  await git(top, ['worktree', 'unlock', dir], options);
  await git(top, ['worktree', 'remove', '--force', dir], options);
}

/** The top folder of the repository `folder` belongs to, or null outside git. */
export async function repositoryTop(folder: string, options: WorktreeGitOptions = {}): Promise<string | null> {
  const top = await git(folder, ['rev-parse', '--show-toplevel'], options);
  return top?.trim() || null;
}

/** Whether a folder can have a worktree of its own: its repository's top and HEAD, or why not (the card's line). */
export type WorktreeFit = { kind: 'fits'; top: string; head: string } | { kind: 'in-place'; reason: string };

/**
 * A worktree is a checkout of the repository's HEAD: only a folder committed there has a
 * counterpart in it (docs/flows.md#isolation). A folder git ignores (npm start's demo folder
 * under `.tools/` was one), one not committed yet, one outside any repository or a repository
 * without a commit cannot have one: the task runs in place, and the reason says why.
 */
export async function worktreeFit(folder: string, options: WorktreeGitOptions = {}): Promise<WorktreeFit> {
  // One git in the common case: `HEAD:./` (the folder's tree in HEAD) fails unless the folder is committed.
  const found = (await git(folder, ['rev-parse', '--show-toplevel', 'HEAD^{commit}', 'HEAD:./'], options))?.trim().split('\n');
  if (found?.length === 3 && /^[0-9a-f]{40,64}$/.test(found[1])) return { kind: 'fits', top: found[0], head: found[1] };
  const top = await repositoryTop(folder, options);
  if (!top) return { kind: 'in-place', reason: 'the folder is not in a git repository' };
  const head = (await git(folder, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], options))?.trim();
  if (!head) return { kind: 'in-place', reason: 'the repository has no commit yet' };
  const ignored = (await git(folder, ['check-ignore', '--quiet', path.resolve(folder)], options)) !== null;
  const why = ignored ? 'is ignored by its git repository' : 'is not committed in its git repository';
  return { kind: 'in-place', reason: `the folder ${why} ${top}, so a branch of that repository would not contain it` };
}

/**
 * Creates the task's worktree on a new branch at the folder's HEAD; a crash between `git
 * worktree add` and the store write is repaired by the next start (the branch's worktree is
 * found again and reused). `in-place` (with why) when the folder cannot have one (`worktreeFit`).
 * `dir`: where, when not the task's own folder under `worktreesDir` (a follow-up making again the
 * worktree its session ran in).
 */
export async function createTaskWorktree(
  input: { folder: string; worktreesDir: string; taskId: string; title: string; dir?: string },
  options: WorktreeGitOptions = {},
): Promise<WorktreeResult> {
  const branch = branchNameFor(input.taskId, input.title);
  const dir = input.dir ?? worktreeDirFor(input.worktreesDir, input.taskId);
  const fit = await worktreeFit(input.folder, options);
  if (fit.kind === 'in-place') return fit;
  const { top, head } = fit;
  await fs.mkdir(path.dirname(dir), { recursive: true, mode: 0o700 });
  if ((await git(top, ['worktree', 'add', '--quiet', '--no-checkout', LOCKED, '-b', branch, dir, head], options)) !== null) {
    await checkOutOnce(dir, branch, options);
    return { kind: 'created', worktreePath: dir, branch, baseCommit: head };
  }

  // A start that crashed after `git worktree add`: the branch (and maybe its folder) exist.
  const existing = (await git(top, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], options))?.trim();
  if (!existing) throw new Error(`git could not create the branch ${branch} and its worktree at ${dir}`);
  const base = (await git(top, ['merge-base', existing, head], options))?.trim() || existing;
  // Where git has the branch checked out: `dir`, or another folder (one an earlier version named).
  const listed = await worktreeOfBranch(top, branch, options);
  if (listed && (await isWorktreeAt(listed, options))) {
    await checkOutOnce(listed, branch, options);
    return { kind: 'created', worktreePath: listed, branch, baseCommit: base };
  }
  if (!(await isWorktreeAt(dir, options))) {
    for (const gone of new Set([listed ?? dir, dir])) await forgetWorktreeRecord(top, gone, options);
    if ((await git(top, ['worktree', 'add', '--quiet', '--no-checkout', LOCKED, dir, branch], options)) === null)
      throw new Error(`git could not add a worktree for the branch ${branch} at ${dir}`);
  }
  await checkOutOnce(dir, branch, options);
  return { kind: 'created', worktreePath: dir, branch, baseCommit: base };
}

/** The folder git lists for the worktree that has `branch` checked out, or null (git's own record, never a guess from a path). */
async function worktreeOfBranch(top: string, branch: string, options: WorktreeGitOptions): Promise<string | null> {
  // Without -z (git 2.36+): a folder name holding a newline is the one thing this misreads.
  const listing = await git(top, ['worktree', 'list', '--porcelain'], options);
  for (const entry of (listing ?? '').split('\n\n')) {
    const lines = entry.split('\n');
    const folder = lines.find((l) => l.startsWith('worktree '))?.slice('worktree '.length);
    if (folder && lines.includes(`branch refs/heads/${branch}`)) return folder;
  }
  return null;
}

/**
 * Checks out a worktree added with `--no-checkout`, from inside it (so the driver look-up reads
 * the config git reads there); a worktree that has an index was checked out already and is left
 * as it is (the agent's work in it included).
 */
async function checkOutOnce(dir: string, branch: string, options: WorktreeGitOptions): Promise<void> {
  const index = (await git(dir, ['rev-parse', '--git-path', 'index'], options))?.trim();
  if (index && (await fs.stat(path.resolve(dir, index)).catch(() => null))) return;
  if ((await git(dir, ['reset', '--hard', '--quiet', 'HEAD'], options)) === null)
    throw new Error(`git could not check out the branch ${branch} in ${dir}`);
}

/**
 * Whether `dir` is the top of a git worktree (a folder removed by hand is not). Asked of git
 * (`--show-prefix`: empty at the top), never by comparing paths: git answers with real paths, and
 * a symbolic link on the way (a symlinked home, macOS's `/var`), Windows' drive-letter case or an
 * 8.3 short name would make the same folder read as another.
 */
export async function isWorktreeAt(dir: string, options: WorktreeGitOptions = {}): Promise<boolean> {
  if (!(await fs.stat(path.join(dir, '.git')).catch(() => null))) return false;
  const prefix = await git(dir, ['rev-parse', '--show-prefix'], options);
  return prefix !== null && prefix.trim() === '';
}

/**
 * The folder the agent works in: the worktree's counterpart of the task's folder (the folder may
 * be a subfolder of its repository), or null when the worktree is gone.
 */
export async function worktreeWorkFolder(
  repoFolder: string,
  worktreePath: string,
  options: WorktreeGitOptions = {},
): Promise<string | null> {
  if (!(await isWorktreeAt(worktreePath, options))) return null;
  const prefix = (await git(repoFolder, ['rev-parse', '--show-prefix'], options))?.trim() ?? '';
  return prefix ? path.join(worktreePath, prefix) : worktreePath;
}

/**
 * The worktree's counterpart of the task's folder, from the file system alone (no git): the
 * folder's path below the top of its repository (the nearest folder above holding `.git`),
 * joined to the worktree's root.
 */
export function worktreeCounterpart(folder: string, worktreePath: string): string {
  for (let dir = path.resolve(folder); ; dir = path.dirname(dir)) {
    if (fsSync.existsSync(path.join(dir, '.git'))) return path.join(worktreePath, path.relative(dir, path.resolve(folder)));
    if (path.dirname(dir) === dir) return worktreePath;
  }
}

/**
 * What deleting the task would lose: commits on its branch that no other branch has, or changes
 * counted in its worktree while the branch has no commit of its own (uncommitted work). Null
 * when nothing (or the repository cannot be read: then the caller asks anyway).
 */
export async function unmergedWork(
  where: { repoPath: string; branch: string; baseCommit: string; changedFiles: number },
  options: WorktreeGitOptions = {},
): Promise<string | null> {
  const refs = await git(where.repoPath, ['for-each-ref', '--format=%(refname)', 'refs/heads/'], options);
  if (refs === null) return 'the repository could not be read';
  const others = refs.split('\n').filter((r) => r && r !== `refs/heads/${where.branch}`);
  const own = await git(where.repoPath, ['rev-list', '--count', `refs/heads/${where.branch}`, '--not', ...others], options);
  const commits = Number(own?.trim() ?? 'NaN');
  if (Number.isFinite(commits) && commits > 0)
    return `${commits} commit${commits === 1 ? '' : 's'} on ${where.branch} not merged into any other branch`;
  const ahead = Number(
    (await git(where.repoPath, ['rev-list', '--count', `${where.baseCommit}..refs/heads/${where.branch}`], options))?.trim() ?? 'NaN',
  );
  if (where.changedFiles > 0 && ahead === 0)
    return `${where.changedFiles} changed file${where.changedFiles === 1 ? '' : 's'} not committed anywhere`;
  if (!Number.isFinite(commits)) return 'the branch could not be read';
  return null;
}

/** What removing a task's worktree did: what was there and went, and what could not be removed. */
export interface WorktreeRemoval {
  removed: string[];
  problems: string[];
}

/**
 * Removes the task's worktree and branch (unlocking it first). A worktree folder already removed
 * by hand is taken off git's list (that record only, not reported as removed).
 */
export async function removeTaskWorktree(
  where: { repoPath: string; worktreePath: string; branch: string },
  options: WorktreeGitOptions = {},
): Promise<WorktreeRemoval> {
  const removed: string[] = [];
  const problems: string[] = [];
  const folderThere = fsSync.existsSync(where.worktreePath);
  const top = (await repositoryTop(where.repoPath, options)) ?? where.repoPath;
  await git(top, ['worktree', 'unlock', where.worktreePath], options);
  if (await isWorktreeAt(where.worktreePath, options)) {
    if ((await git(top, ['worktree', 'remove', '--force', where.worktreePath], options)) === null) {
      await fs
        .rm(where.worktreePath, { recursive: true, force: true })
        .catch((e: Error) => problems.push(`the folder ${where.worktreePath}: ${e.message}`));
    }
  } else {
    await fs.rm(where.worktreePath, { recursive: true, force: true }).catch(() => undefined);
  }
  if (problems.length > 0)
    await git(top, ['worktree', 'lock', where.worktreePath], options); // still there: guarded again
  // The folder is gone now; git's record of it too (a no-op when `worktree remove` took it).
  else await forgetWorktreeRecord(top, where.worktreePath, options);
  if (folderThere && !fsSync.existsSync(where.worktreePath)) removed.push(`the worktree ${where.worktreePath}`);
  const hasBranch = (await git(top, ['rev-parse', '--verify', '--quiet', `refs/heads/${where.branch}`], options))?.trim();
  if (hasBranch) {
    if ((await git(top, ['branch', '-D', '--quiet', where.branch], options)) === null) problems.push(`the branch ${where.branch}`);
    else removed.push(`the branch ${where.branch}`);
  }
  return { removed, problems };
}
