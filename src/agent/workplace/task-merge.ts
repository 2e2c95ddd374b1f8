/**
 * "Merge" (docs/flows.md#bring-it-home): a finished task's work goes into the branch the user's
 * folder has checked out, as a merge commit, never at the cost of the user's uncommitted work.
 *
 * 1. The worktree's files are committed on the task's branch without running anything the
 *    repository's config names: they are hashed into a private git directory (its own config,
 *    so no clean filter runs; the repository's objects borrowed read-only), `commit-tree` makes
 *    the commit, its new objects are copied into the repository's object store (content
 *    addressed) and the branch moves with `update-ref`. Ignored files are left out, as `git add`
 *    would.
 * 2. The merge is refused, saying why, when the folder has no branch checked out, a merge is in
 *    progress, or a file the task changed has uncommitted changes (or is untracked) in the
 *    folder; otherwise `git merge --no-ff` runs there (hardened: no hooks). A conflict leaves
 *    the merge in progress for the user to resolve (the caller opens the merge editor).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { keptUserSettingsAt, runGit, userConfigEnv, type HardenedGitOptions } from './hardened-git';
import { repositoryTop } from './task-worktree';

export type MergeResult =
  | { kind: 'merged'; into: string; commit: string }
  | { kind: 'conflict'; into: string; files: string[] }
  | { kind: 'refused'; reason: string };

export interface MergeInput {
  /** The user's folder (the task's workspace). */
  folder: string;
  worktreePath: string;
  branch: string;
  baseCommit: string;
  /** The commit message of the task's work (its title). */
  message: string;
  /** A private directory for the commit's index and objects (the task's runtime folder). */
  privateDir: string;
}

const ZERO_SPLIT = (out: string | null) => (out ?? '').split('\0').filter(Boolean);
const PATH_CHECKS = ['-c', 'core.protectNTFS=false', '-c', 'core.protectHFS=false', '-c', 'core.bare=false'];

/** The user's name and e-mail from the repository's or the user's own git config (reading config runs nothing). */
export async function identityEnv(repo: string): Promise<Record<string, string>> {
  const get = async (key: string) => (await runGit(['config', '--get', key], { cwd: repo, gitEnv: userConfigEnv() }))?.trim() || null;
  const name = (await get('user.name')) ?? 'Off-Peak Tasks';
  const email = (await get('user.email')) ?? 'offpeak-tasks@localhost';
  return { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email };
}

async function copyNewObjects(fromObjects: string, toObjects: string): Promise<void> {
  for (const dir of await fs.readdir(fromObjects).catch(() => [] as string[])) {
    if (!/^[0-9a-f]{2}$/.test(dir)) continue;
    await fs.mkdir(path.join(toObjects, dir), { recursive: true });
    for (const file of await fs.readdir(path.join(fromObjects, dir))) {
      await fs
        .copyFile(path.join(fromObjects, dir, file), path.join(toObjects, dir, file), fs.constants.COPYFILE_EXCL)
        .catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'EEXIST') throw e;
        });
    }
  }
}

/** Commits the worktree's files on the task's branch (step 1); the branch's tip after it. */
export async function commitWorktree(
  input: Omit<MergeInput, 'folder'>,
  identity: Record<string, string>,
  options: Pick<HardenedGitOptions, 'userConfigFile'> = {},
): Promise<string> {
  const wt = input.worktreePath;
  const tip = (await runGit(['rev-parse', '--verify', '--quiet', `refs/heads/${input.branch}^{commit}`], { cwd: wt }))?.trim();
  if (!tip) throw new Error(`the branch ${input.branch} is gone`);
  const common = (await runGit(['rev-parse', '--git-common-dir'], { cwd: wt }))?.trim();
  if (!common) throw new Error(`${wt} is not a git worktree`);
  const objects = path.resolve(wt, common, 'objects');
  const listed = await runGit([...PATH_CHECKS, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: wt });
  if (listed === null) throw new Error('the worktree could not be listed');
  const present: string[] = [];
  for (const file of new Set(ZERO_SPLIT(listed))) {
    const stat = await fs.lstat(path.join(wt, file)).catch(() => null);
    if (stat && (stat.isFile() || stat.isSymbolicLink())) present.push(file);
  }
  const gitDir = path.resolve(input.privateDir, 'commit-objects');
  await fs.rm(gitDir, { recursive: true, force: true });
  await fs.mkdir(gitDir, { recursive: true, mode: 0o700 });
  if ((await runGit(['init', '--quiet', '--bare', '--template=', gitDir], { cwd: gitDir })) === null)
    throw new Error('a private git directory could not be made');
  const gitEnv = {
    GIT_DIR: gitDir,
    GIT_WORK_TREE: wt,
    GIT_INDEX_FILE: path.join(gitDir, 'commit.index'),
    GIT_ALTERNATE_OBJECT_DIRECTORIES: objects,
  };
  // The private git directory's config is not the repository's: the line endings git would use there are passed.
  const lineEndings = await keptUserSettingsAt(wt, options);
  const added = await runGit([...PATH_CHECKS, ...lineEndings, 'update-index', '--add', '-z', '--stdin'], {
    cwd: wt,
    gitEnv,
    input: present.map((f) => f + '\0').join(''),
  });
  if (added === null) throw new Error("the worktree's files could not be read");
  const tree = (await runGit([...PATH_CHECKS, 'write-tree'], { cwd: wt, gitEnv }))?.trim();
  if (!tree) throw new Error('the tree could not be written');
  const tipTree = (await runGit(['rev-parse', `${tip}^{tree}`], { cwd: wt }))?.trim();
  if (tree === tipTree) return tip;
  const commit = (
    await runGit(['commit-tree', tree, '-p', tip, '-m', input.message], { cwd: wt, gitEnv: { ...gitEnv, ...identity } })
  )?.trim();
  if (!commit) throw new Error('the commit could not be made');
  await copyNewObjects(path.join(gitDir, 'objects'), objects);
  if ((await runGit(['update-ref', '-m', 'off-peak: the task work', `refs/heads/${input.branch}`, commit, tip], { cwd: wt })) === null)
    throw new Error(`the branch ${input.branch} moved meanwhile`);
  // The worktree's index follows its branch (no file is read or written).
  await runGit(['read-tree', 'HEAD'], { cwd: wt });
  await fs.rm(gitDir, { recursive: true, force: true });
  return commit;
}

export async function mergeTaskBranch(input: MergeInput): Promise<MergeResult> {
  const top = await repositoryTop(input.folder);
  if (!top) return { kind: 'refused', reason: `${input.folder} is not a git repository any more.` };
  const git = (args: string[], gitEnv?: Record<string, string>) => runGit(args, { cwd: top, gitEnv });
  const into = (await git(['symbolic-ref', '--quiet', '--short', 'HEAD']))?.trim();
  if (!into) return { kind: 'refused', reason: 'The folder has no branch checked out (a detached HEAD): check one out first.' };
  if ((await git(['rev-parse', '--verify', '--quiet', 'MERGE_HEAD'])) !== null)
    return { kind: 'refused', reason: 'A merge is already in progress in the folder: finish or abort it first.' };
  const identity = await identityEnv(top);
  const tip = await commitWorktree(input, identity);
  // Never at the cost of the user's uncommitted work: the task's files must be clean in the folder.
  const taskFiles = new Set(ZERO_SPLIT(await git(['diff-tree', '-r', '-z', '--name-only', '--no-renames', input.baseCommit, tip])));
  const dirty = [
    ...ZERO_SPLIT(await git([...PATH_CHECKS, 'diff-index', '-z', '--name-only', 'HEAD'])),
    ...ZERO_SPLIT(await git([...PATH_CHECKS, 'ls-files', '-z', '--others'])),
  ];
  const clash = dirty.filter((f) => taskFiles.has(f));
  if (clash.length > 0) {
    return {
      kind: 'refused',
      reason: `Merging would overwrite your uncommitted changes to ${clash.slice(0, 5).join(', ')}${clash.length > 5 ? ` and ${clash.length - 5} more` : ''}: commit or stash them first.`,
    };
  }
  const merged = await git(['merge', '--no-ff', '--no-edit', '-m', `Merge ${input.branch} (off-peak task)`, input.branch], identity);
  if (merged !== null) return { kind: 'merged', into, commit: (await git(['rev-parse', 'HEAD']))!.trim() };
  const conflicts = ZERO_SPLIT(await git(['diff', '--name-only', '-z', '--diff-filter=U']));
  if (conflicts.length > 0) return { kind: 'conflict', into, files: conflicts };
  return { kind: 'refused', reason: 'git could not merge the branch; the folder is unchanged.' };
}

export type ApplyResult = { kind: 'applied'; files: string[] } | { kind: 'refused'; reason: string };

/**
 * "Apply as uncommitted changes": the task's changes (its branch against its base, after step 1)
 * written into the folder's files as uncommitted changes (`git apply`, all or nothing), refused
 * like a merge when a file the task changed has uncommitted changes there, or when the patch
 * does not apply to what the folder holds now (then Merge is the way).
 */
export async function applyTaskChanges(input: MergeInput): Promise<ApplyResult> {
  const top = await repositoryTop(input.folder);
  if (!top) return { kind: 'refused', reason: `${input.folder} is not a git repository any more.` };
  const git = (args: string[], extra: { input?: string } = {}) => runGit(args, { cwd: top, ...extra });
  const tip = await commitWorktree(input, await identityEnv(top));
  const taskFiles = ZERO_SPLIT(await git(['diff-tree', '-r', '-z', '--name-only', '--no-renames', input.baseCommit, tip]));
  if (taskFiles.length === 0) return { kind: 'refused', reason: 'The task changed no files.' };
  const files = new Set(taskFiles);
  const dirty = [
    ...ZERO_SPLIT(await git([...PATH_CHECKS, 'diff-index', '-z', '--name-only', 'HEAD'])),
    ...ZERO_SPLIT(await git([...PATH_CHECKS, 'ls-files', '-z', '--others'])),
  ];
  const clash = dirty.filter((f) => files.has(f));
  if (clash.length > 0)
    return {
      kind: 'refused',
      reason: `Applying would overwrite your uncommitted changes to ${clash.slice(0, 5).join(', ')}${clash.length > 5 ? ` and ${clash.length - 5} more` : ''}: commit or stash them first.`,
    };
  const patch = await git(['diff', '--binary', '--no-ext-diff', '--no-textconv', '--no-renames', input.baseCommit, tip]);
  if (patch === null) return { kind: 'refused', reason: "The task's changes could not be read." };
  if ((await git(['apply', '--whitespace=nowarn', '-'], { input: patch })) === null) {
    return {
      kind: 'refused',
      reason: "The task's changes do not apply cleanly to what the folder holds now; nothing was changed. Use Merge instead.",
    };
  }
  return { kind: 'applied', files: taskFiles };
}
