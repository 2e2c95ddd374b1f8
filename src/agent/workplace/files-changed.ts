/**
 * files_changed (docs/flows.md#segments): how many paths of the task's folder differ between the
 * moment the task first started and the moment it ended: created, modified, deleted, or a changed
 * mode or link target. Ignored paths count (a build output, a folder inside an ignored
 * directory), `.git` directories do not, and changes the user made meanwhile count too. It works
 * in any folder, a git repository or not, and is null ("unknown") whenever the count cannot be
 * trusted: no snapshot was taken at the start, a file or folder could not be read, git is
 * missing or did not answer in time, or the folder holds more than MAX_SNAPSHOT_ENTRIES files.
 *
 * A snapshot is a git tree written with the hardened runner into a private git directory in the
 * task's runtime folder (`<runtime>/tasks/<task>/files-snapshot`): the folder's files are listed
 * here (no link followed), hashed by `git update-index --info-only` into a private index, and
 * `git write-tree --missing-ok` names the result; the end's snapshot starts from the first one's
 * index, so only files whose stat changed are hashed again. Only tree objects are stored (no file content);
 * the repository's own `.git` is never read, so nothing in it (fsmonitor, hooks, filters) runs.
 * The count is `git diff-tree` between the start's tree and the end's.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { GIT_TIMEOUT_MS, runGit } from './hardened-git';

/** git's well-known empty tree: the base for a repository that had no commit yet. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** A folder with more files than this is not snapshotted: its count is "unknown". */
export const MAX_SNAPSHOT_ENTRIES = 1_000_000;

export interface GitOptions {
  /** Per git command. */
  timeoutMs?: number;
  /** The git executable (tests stand a hung one in for it). */
  gitCommand?: string;
  maxEntries?: number;
}

const SNAPSHOT_DIR = 'files-snapshot';
const BASELINE_FILE = 'baseline-tree';

/** Where a task's snapshots live: its own runtime folder (removed with the task). */
export function snapshotDirOf(taskDir: string): string {
  return path.join(taskDir, SNAPSHOT_DIR);
}

/**
 * The commit the workspace's repository was at (HEAD, the empty tree without commits), null
 * outside git. Kept in the runtime record for reference; files_changed no longer depends on it.
 */
export async function recordBaseCommit(workspace: string, options: GitOptions = {}): Promise<string | null> {
  const run = (args: string[]) => runGit(args, { cwd: workspace, timeoutMs: options.timeoutMs, gitCommand: options.gitCommand });
  const inside = await run(['rev-parse', '--is-inside-work-tree']);
  if (inside?.trim() !== 'true') return null;
  const head = await run(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  return head?.trim() || EMPTY_TREE;
}

/** Every file and symbolic link under `root` (relative, '/'-separated), `.git` entries left out; null when a folder cannot be read or there are too many. */
async function listFiles(root: string, maxEntries: number): Promise<string[] | null> {
  const files: string[] = [];
  const pending = [''];
  while (pending.length > 0) {
    const rel = pending.pop()!;
    let entries;
    try {
      entries = await fs.readdir(path.join(root, rel), { withFileTypes: true });
    } catch (err) {
      // A folder removed while listing is simply gone; any other failure makes the list partial.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && rel !== '') continue;
      return null;
    }
    for (const entry of entries) {
      if (entry.name === '.git') continue;
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) pending.push(child);
      else if (entry.isFile() || entry.isSymbolicLink()) {
        if (files.push(child) > maxEntries) return null;
      }
      // sockets, fifos and devices are not files an agent writes: not counted
    }
  }
  return files;
}

/**
 * Snapshots the folder as it is now; the tree's id, or null when it cannot be taken. The index
 * `<name>.index` is kept: a later snapshot that starts `from` it hashes only the files whose size,
 * times or inode changed (git's stat cache), not the whole folder again.
 */
export async function snapshotTree(
  workspace: string,
  snapshotDir: string,
  name: string,
  options: GitOptions & { from?: string } = {},
): Promise<string | null> {
  const timeoutMs = options.timeoutMs ?? GIT_TIMEOUT_MS;
  const gitDir = path.resolve(snapshotDir);
  await fs.mkdir(gitDir, { recursive: true, mode: 0o700 });
  const base = { timeoutMs, gitCommand: options.gitCommand };
  // A private bare repository without templates (no sample hooks), 0700/0600; its config is git's default.
  if (!(await fs.stat(path.join(gitDir, 'HEAD')).catch(() => null))) {
    if ((await runGit(['init', '--quiet', '--bare', '--template=', '--shared=0600', gitDir], { ...base, cwd: gitDir })) === null)
      return null;
  }
  const files = await listFiles(workspace, options.maxEntries ?? MAX_SNAPSHOT_ENTRIES);
  if (!files) return null;
  const indexFile = path.join(gitDir, `${name}.index`);
  await fs.rm(indexFile, { force: true });
  const gitEnv = { GIT_DIR: gitDir, GIT_WORK_TREE: workspace, GIT_INDEX_FILE: indexFile };
  // Any file name this platform can hold is listed: git's checks for other platforms' names are off.
  const pathChecks = ['-c', 'core.protectNTFS=false', '-c', 'core.protectHFS=false', '-c', 'core.bare=false'];
  if (options.from && (await copyIndex(path.join(gitDir, `${options.from}.index`), indexFile))) {
    // Entries of files gone since (deleted, or now a folder) leave the copied index first.
    const indexed = await runGit([...pathChecks, 'ls-files', '-z'], { ...base, cwd: workspace, gitEnv });
    if (indexed === null) return null;
    const present = new Set(files);
    const gone = indexed.split('\0').filter((f) => f && !present.has(f));
    if (gone.length > 0) {
      const removed = await runGit([...pathChecks, 'update-index', '--force-remove', '-z', '--stdin'], {
        ...base,
        cwd: workspace,
        gitEnv,
        input: gone.map((f) => f + '\0').join(''),
      });
      if (removed === null) return null;
    }
  }
  const added = await runGit([...pathChecks, 'update-index', '--add', '--remove', '--replace', '--info-only', '-z', '--stdin'], {
    ...base,
    cwd: workspace,
    gitEnv,
    input: files.map((f) => f + '\0').join(''),
  });
  if (added === null) return null;
  const tree = await runGit([...pathChecks, 'write-tree', '--missing-ok'], { ...base, cwd: workspace, gitEnv });
  return tree?.trim() || null;
}

/**
 * Copies an index keeping its mtime: git trusts a cached stat only for entries older than the
 * index file itself (its racy-git rule), so a copy stamped "now" would hide a same-size edit made
 * in the second the first snapshot was taken.
 */
async function copyIndex(from: string, to: string): Promise<boolean> {
  try {
    await fs.copyFile(from, to);
    const { atime, mtime } = await fs.stat(from);
    await fs.utimes(to, atime, mtime);
    return true;
  } catch {
    return false;
  }
}

/** Takes the task's first-start snapshot (once; a later segment keeps the first). True when it exists. */
export async function recordFilesBaseline(workspace: string, taskDir: string, options: GitOptions = {}): Promise<boolean> {
  const dir = snapshotDirOf(taskDir);
  const file = path.join(dir, BASELINE_FILE);
  if (await fs.stat(file).catch(() => null)) return true;
  const tree = await snapshotTree(workspace, dir, 'baseline', options);
  if (!tree) return false;
  await fs.writeFile(file, tree + '\n', { mode: 0o600 });
  return true;
}

/** The first-start snapshot's tree id, or null when none was taken. */
export async function baselineTreeOf(taskDir: string): Promise<string | null> {
  const baseline = (await fs.readFile(path.join(snapshotDirOf(taskDir), BASELINE_FILE), 'utf8').catch(() => '')).trim();
  return /^[0-9a-f]{40,64}$/.test(baseline) ? baseline : null;
}

/** Paths that differ from the first-start snapshot; null when unknown (no baseline, or the folder cannot be snapshotted now). */
export async function countFilesChanged(workspace: string, taskDir: string, options: GitOptions = {}): Promise<number | null> {
  const dir = snapshotDirOf(taskDir);
  const baseline = (await fs.readFile(path.join(dir, BASELINE_FILE), 'utf8').catch(() => '')).trim();
  if (!/^[0-9a-f]{40,64}$/.test(baseline)) return null;
  const now = await snapshotTree(workspace, dir, 'end', { ...options, from: 'baseline' });
  if (!now) return null;
  const diff = await runGit(['diff-tree', '-r', '--name-only', '-z', '--no-renames', '--no-ext-diff', '--no-textconv', baseline, now], {
    cwd: dir,
    gitEnv: { GIT_DIR: path.resolve(dir) },
    timeoutMs: options.timeoutMs,
    gitCommand: options.gitCommand,
  });
  if (diff === null) return null;
  return diff.split('\0').filter(Boolean).length;
}
