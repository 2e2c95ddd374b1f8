/**
 * files_changed from git: the number of files that differ from the commit recorded
 * when the task first started, plus untracked (not ignored) files. Workspaces that are not git
 * repositories (or have no git) report null: "unknown", never a guess.
 */
import { execFile } from 'node:child_process';

/** git's well-known empty tree: the base for a repository that had no commit yet. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

export interface GitOptions {
  /** A git that hangs (a lock, a network filesystem, a hook) must not keep the task running. */
  timeoutMs?: number;
  /** The git executable (tests stand a hung one in for it). */
  gitCommand?: string;
}

const GIT_TIMEOUT_MS = 60_000;

function git(cwd: string, args: string[], options: GitOptions): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(
      options.gitCommand ?? 'git',
      args,
      {
        cwd,
        maxBuffer: 64 * 1024 * 1024,
        windowsHide: true,
        timeout: options.timeoutMs ?? GIT_TIMEOUT_MS,
        killSignal: 'SIGKILL',
        env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
      },
      (err, stdout) => resolve(err ? null : stdout),
    );
  });
}

/** The commit to diff against later: HEAD, the empty tree in a repository without commits, null outside git (or when git does not answer). */
export async function recordBaseCommit(workspace: string, options: GitOptions = {}): Promise<string | null> {
  const inside = await git(workspace, ['rev-parse', '--is-inside-work-tree'], options);
  if (inside?.trim() !== 'true') return null;
  const head = await git(workspace, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], options);
  return head?.trim() || EMPTY_TREE;
}

/** Changed files since `base` (committed, staged or not) plus untracked files; null when unknown (also when git times out). */
export async function countFilesChanged(workspace: string, base: string | null, options: GitOptions = {}): Promise<number | null> {
  if (!base) return null;
  const diff = await git(workspace, ['diff', '--name-only', '-z', base, '--'], options);
  if (diff === null) return null;
  const untracked = await git(workspace, ['ls-files', '--others', '--exclude-standard', '-z'], options);
  if (untracked === null) return null;
  const files = new Set<string>();
  for (const name of diff.split('\0')) if (name) files.add(name);
  for (const name of untracked.split('\0')) if (name) files.add(name);
  return files.size;
}
