/**
 * The changed files of a task with added/removed line counts (docs/flows.md#review), counted
 * after each segment: the paths that differ between the task's first-start snapshot of the
 * folder it works in (its worktree, or its folder in place) and that folder now
 * (`files-changed.ts` takes the snapshots), each with the blob it had at the first start. The
 * old content is read by blob id (`git cat-file --batch`, no filter, no textconv) from the
 * repository's objects: for a worktree task those are the base commit's; in place, a file the
 * user had changed or not committed at the first start has no blob there (its counts and its
 * original read "unknown"). Line counts come from the `diff` library.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { diffLines } from 'diff';
import type { ChangedFile } from '../../store';
import { baselineTreeOf, snapshotDirOf, snapshotTree, type GitOptions } from './files-changed';
import { runGit, runGitBuffer } from './hardened-git';

/** The card and the review list at most this many files (the count says how many changed in all). */
export const MAX_LISTED_FILES = 5_000;

/** Above this many bytes a file's lines are not compared (its counts read "unknown"). */
const MAX_COMPARED_BYTES = 2 * 1024 * 1024;

interface RawEntry {
  path: string;
  status: ChangedFile['status'];
  oldBlob: string | null;
}

const ZERO = /^0+$/;

/** Parses `git diff-tree -r -z --raw` output. */
function parseRaw(raw: string): RawEntry[] {
  const parts = raw.split('\0');
  const out: RawEntry[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const meta = parts[i].replace(/^\n/, '');
    if (!meta.startsWith(':')) {
      i -= 1; // the tree id header line of some git versions
      continue;
    }
    const [, , oldSha, , letter] = meta.slice(1).split(' ');
    const status = letter.startsWith('A') ? 'added' : letter.startsWith('D') ? 'deleted' : 'modified';
    out.push({ path: parts[i + 1], status, oldBlob: status === 'added' || ZERO.test(oldSha) ? null : oldSha });
  }
  return out;
}

/** Reads many blobs in one `git cat-file --batch`; a blob the objects do not hold is absent from the map. */
export async function readBlobs(cwd: string, blobs: string[], options: GitOptions = {}): Promise<Map<string, Buffer>> {
  const found = new Map<string, Buffer>();
  const unique = [...new Set(blobs)];
  if (unique.length === 0) return found;
  const out = await runGitBuffer(['cat-file', '--batch'], {
    cwd,
    input: unique.map((b) => b + '\n').join(''),
    timeoutMs: options.timeoutMs,
    gitCommand: options.gitCommand,
  });
  if (!out) return found;
  let at = 0;
  while (at < out.length) {
    const eol = out.indexOf(0x0a, at);
    if (eol < 0) break;
    const header = out.subarray(at, eol).toString('utf8').split(' ');
    at = eol + 1;
    if (header[1] === 'missing' || header.length < 3) continue;
    const size = Number(header[2]);
    found.set(header[0], out.subarray(at, at + size));
    at += size + 1;
  }
  return found;
}

const isBinary = (b: Buffer) => b.subarray(0, 8000).includes(0);

function countLines(oldText: Buffer | null, newText: Buffer | null): { added: number | null; removed: number | null } {
  const sides = [oldText, newText];
  if (sides.some((b) => b && (isBinary(b) || b.length > MAX_COMPARED_BYTES))) return { added: null, removed: null };
  const parts = diffLines(oldText?.toString('utf8') ?? '', newText?.toString('utf8') ?? '');
  let added = 0;
  let removed = 0;
  for (const part of parts) {
    if (part.added) added += part.count ?? 0;
    else if (part.removed) removed += part.count ?? 0;
  }
  return { added, removed };
}

async function readNow(file: string): Promise<Buffer | null> {
  const stat = await fs.lstat(file).catch(() => null);
  if (!stat) return null;
  if (stat.isSymbolicLink()) return Buffer.from(await fs.readlink(file));
  return fs.readFile(file).catch(() => null);
}

/** Where a task's changes are counted. */
export interface ChangesPlace {
  /** The folder whose files are compared: the worktree's root, or the task's folder in place. */
  folder: string;
  /** The task's runtime folder (its snapshots). */
  taskDir: string;
  /** A folder of the repository whose objects hold the originals; null outside git. */
  repo: string | null;
  /** A worktree task: compared with this commit's tree (its branch against its base), not the first-start snapshot. */
  baseCommit?: string | null;
}

async function objectsDirOf(repo: string, options: GitOptions): Promise<string | null> {
  const common = (
    await runGit(['rev-parse', '--git-common-dir'], { cwd: repo, timeoutMs: options.timeoutMs, gitCommand: options.gitCommand })
  )?.trim();
  return common ? path.resolve(repo, common, 'objects') : null;
}

/**
 * The task's changed files now, sorted by path, or null when unknown (no first-start snapshot,
 * the folder cannot be snapshotted, or the repository cannot be read).
 */
export async function listTaskChanges(place: ChangesPlace, options: GitOptions = {}): Promise<ChangedFile[] | null> {
  return (await listTaskChangesWithCount(place, options))?.changes ?? null;
}

/**
 * The listed changes and `count`, every changed path (files_changed: ignored ones included, as
 * `files-changed.ts` counts them). The list leaves out what git ignores in a repository (a
 * build output, an installed node_modules: not part of a branch) and stops at MAX_LISTED_FILES.
 */
export async function listTaskChangesWithCount(
  place: ChangesPlace,
  options: GitOptions = {},
): Promise<{ changes: ChangedFile[]; count: number } | null> {
  const git = { timeoutMs: options.timeoutMs, gitCommand: options.gitCommand };
  const dir = snapshotDirOf(place.taskDir);
  const objects = place.repo ? await objectsDirOf(place.repo, options) : null;
  // Outside git no original is kept: the list still says which paths changed.
  const repo = objects ? place.repo : null;
  if (place.baseCommit && !repo) return null;
  let baseline: string | null;
  if (place.baseCommit) {
    baseline = (await runGit(['rev-parse', '--verify', '--quiet', `${place.baseCommit}^{tree}`], { ...git, cwd: repo! }))?.trim() || null;
  } else {
    baseline = await baselineTreeOf(place.taskDir);
  }
  if (!baseline) return null;
  const now = await snapshotTree(place.folder, dir, 'end', { ...options, from: 'baseline' });
  if (!now) return null;
  // The private snapshot directory, borrowing (read only) the repository's objects for the base tree.
  const gitEnv: Record<string, string> = { GIT_DIR: path.resolve(dir) };
  if (objects) gitEnv.GIT_ALTERNATE_OBJECT_DIRECTORIES = objects;
  const raw = await runGit(['diff-tree', '-r', '-z', '--raw', '--no-renames', '--no-ext-diff', '--no-textconv', baseline, now], {
    ...git,
    cwd: dir,
    gitEnv,
  });
  if (raw === null) return null;
  const all = parseRaw(raw).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  let entries = all;
  if (repo && all.length > 0) {
    // Which of them git ignores (read from .gitignore files; no file content is read).
    const ignored = await runGit(['check-ignore', '-z', '--stdin'], {
      ...git,
      cwd: place.folder,
      input: all.map((e) => e.path + '\0').join(''),
    });
    const skip = new Set((ignored ?? '').split('\0').filter(Boolean));
    entries = all.filter((e) => !skip.has(e.path));
  }
  entries = entries.slice(0, MAX_LISTED_FILES);
  const olds = repo
    ? await readBlobs(
        repo,
        entries.flatMap((e) => (e.oldBlob ? [e.oldBlob] : [])),
        options,
      )
    : new Map<string, Buffer>();
  const changes = await Promise.all(
    entries.map(async (e): Promise<ChangedFile> => {
      const oldText = e.oldBlob ? (olds.get(e.oldBlob) ?? undefined) : null;
      const newText = e.status === 'deleted' ? null : await readNow(path.join(place.folder, e.path));
      // A first-start blob the objects do not hold: the original was not kept, counts unknown.
      const counts = oldText === undefined ? { added: null, removed: null } : countLines(oldText, newText);
      return { path: e.path, status: e.status, ...counts, oldBlob: oldText === undefined ? null : e.oldBlob };
    }),
  );
  return { changes, count: all.length };
}

/**
 * A changed file's text as the task's worktree has it now (the read-only side of a review). Only a
 * path the task recorded as changed is read; a symbolic link is shown as its target, not followed.
 */
export async function readWorktreeFile(worktreePath: string, changes: readonly ChangedFile[], file: string): Promise<string> {
  if (!changes.some((c) => c.path === file && c.status !== 'deleted')) return '';
  const full = path.join(worktreePath, ...file.split('/'));
  try {
    const stat = await fs.lstat(full);
    if (stat.isSymbolicLink()) return `(a symbolic link to ${await fs.readlink(full)})`;
    return stat.isFile() ? await fs.readFile(full, 'utf8') : '';
  } catch {
    return ''; // removed from the worktree since
  }
}
