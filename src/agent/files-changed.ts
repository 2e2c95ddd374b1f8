/**
 * files_changed from git (DESIGN §8): the number of files that differ from the commit recorded
 * when the task first started, plus untracked (not ignored) files. Workspaces that are not git
 * repositories (or have no git) report null: "unknown", never a guess.
 */
import { execFile } from 'node:child_process';

/** git's well-known empty tree: the base for a repository that had no commit yet. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

function git(cwd: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('git', args, { cwd, maxBuffer: 64 * 1024 * 1024, windowsHide: true, env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } }, (err, stdout) =>
      resolve(err ? null : stdout),
    );
  });
}

/** The commit to diff against later: HEAD, the empty tree in a repository without commits, null outside git. */
export async function recordBaseCommit(workspace: string): Promise<string | null> {
  const inside = await git(workspace, ['rev-parse', '--is-inside-work-tree']);
  if (inside?.trim() !== 'true') return null;
  const head = await git(workspace, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  return head?.trim() || EMPTY_TREE;
}

/** Changed files since `base` (committed, staged or not) plus untracked files; null when unknown. */
export async function countFilesChanged(workspace: string, base: string | null): Promise<number | null> {
  if (!base) return null;
  const diff = await git(workspace, ['diff', '--name-only', '-z', base, '--']);
  if (diff === null) return null;
  const untracked = await git(workspace, ['ls-files', '--others', '--exclude-standard', '-z']);
  const files = new Set<string>();
  for (const name of diff.split('\0')) if (name) files.add(name);
  for (const name of (untracked ?? '').split('\0')) if (name) files.add(name);
  return files.size;
}
