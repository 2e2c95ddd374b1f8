/**
 * What a folder holds that its last commit does not (docs/flows.md#isolation): a task on its own
 * branch starts from that commit, so these are the files it will not see. Through the hardened git.
 */
import { runGit, type HardenedGitOptions } from './hardened-git';

/**
 * The folder's uncommitted files, relative to it (`/` separated), sorted: tracked files changed
 * (staged or not) or deleted since HEAD, and new files git does not ignore. Null when git cannot
 * tell (not a repository, no commit yet).
 */
export async function uncommittedFiles(folder: string, options: Omit<HardenedGitOptions, 'cwd'> = {}): Promise<string[] | null> {
  const git = { ...options, cwd: folder };
  const [changed, untracked] = await Promise.all([
    runGit(['diff', '--name-only', '-z', '--no-renames', '--relative', 'HEAD', '--', '.'], git),
    runGit(['ls-files', '-z', '--others', '--exclude-standard', '--', '.'], git),
  ]);
  if (changed === null || untracked === null) return null;
  return [...new Set([...changed.split('\0'), ...untracked.split('\0')].filter(Boolean))].sort();
}
