/**
 * Where a segment of a task runs (docs/flows.md#isolation): a task asked to run on its own
 * branch gets its worktree at its first start (`task-worktree.ts`) and every later segment, and
 * every follow-up of it, runs in that same worktree; any other task runs in place in its folder.
 * A worktree removed by hand is reported (the task fails saying so, its row is marked), never a
 * crash; a task whose folder turns out not to be a git repository runs in place, and waits while
 * another in-place task runs in that folder.
 */
import type { OffPeakTask } from '../../core/types';
import type { TaskIsolation, TaskStore } from '../../store';
import type { ChangesPlace } from './task-changes';
import { createTaskWorktree, removeTaskWorktree, worktreeWorkFolder, type WorktreeGitOptions } from './task-worktree';

export interface Workplace {
  /** The agent's working directory (the same path for every segment of the task). */
  folder: string;
  /** Where the task's changes are counted (its snapshots go in its runtime folder). */
  changes: Omit<ChangesPlace, 'taskDir'>;
  isolation: TaskIsolation | undefined;
}

export type WorkplaceResult = { kind: 'ready'; place: Workplace } | { kind: 'failed'; reason: string } | { kind: 'wait'; reason: string };

export async function resolveWorkplace(
  store: TaskStore,
  task: OffPeakTask,
  worktreesDir: string,
  options: WorktreeGitOptions = {},
): Promise<WorkplaceResult> {
  let isolation = store.read((tx) => tx.isolation.get(task.id));
  const inPlace = (): WorkplaceResult => ({
    kind: 'ready',
    place: { folder: task.workspacePath, changes: { folder: task.workspacePath, repo: task.workspacePath }, isolation },
  });
  if (!isolation || isolation.mode !== 'worktree') return inPlace();
  if (isolation.worktreePath === null) {
    let made;
    try {
      made = await createTaskWorktree(
        { folder: task.workspacePath, worktreesDir, taskId: task.id, title: task.title || task.prompt },
        options,
      );
    } catch (err) {
      return { kind: 'failed', reason: `Could not give the task its own branch: ${(err as Error).message}.` };
    }
    if (made.kind === 'in-place') {
      const note = `Runs in place: ${made.reason}.`;
      const holder = await store.mutate((tx) => {
        tx.isolation.fallBackInPlace(task.id, note);
        return tx.isolation.inPlaceHolder(task.id, task.workspaceKey);
      });
      // Now an in-place task: the folder's claim rule applies to it from here on.
      if (holder) return { kind: 'wait', reason: `waiting for ${holder.title || holder.id} to finish in this folder` };
      isolation = store.read((tx) => tx.isolation.get(task.id));
      return inPlace();
    }
    await store.mutate((tx) => tx.isolation.recordWorktree(task.id, made));
    isolation = store.read((tx) => tx.isolation.get(task.id))!;
  }
  const { worktreePath, branch, baseCommit } = isolation;
  const folder = await worktreeWorkFolder(task.workspacePath, worktreePath!, options);
  if (!folder) {
    await store.mutate((tx) => tx.isolation.markMissing(task.id));
    return {
      kind: 'failed',
      reason: `The task's worktree ${worktreePath} is gone (removed by hand?), so it cannot go on; its branch ${branch ?? ''} is kept in ${task.workspacePath}.`,
    };
  }
  return { kind: 'ready', place: { folder, changes: { folder: worktreePath!, repo: worktreePath!, baseCommit }, isolation } };
}

/**
 * A task whose agent never started leaves nothing in the user's repository: its worktree and
 * branch (made at this start, not shared with a follow-up) go, and its row forgets them so a
 * retry makes new ones. Returns what could not be removed.
 */
export async function dropUnstartedWorktree(store: TaskStore, taskId: string, options: WorktreeGitOptions = {}): Promise<string[]> {
  const row = store.read((tx) => tx.isolation.get(taskId));
  if (row?.mode !== 'worktree' || !row.worktreePath || !row.branch) return [];
  if (store.read((tx) => tx.isolation.sharersOf(row.worktreePath!, taskId)).length > 0) return [];
  const { problems } = await removeTaskWorktree({ repoPath: row.repoPath, worktreePath: row.worktreePath, branch: row.branch }, options);
  await store.mutate((tx) => tx.isolation.forgetWorktree(taskId));
  return problems;
}
