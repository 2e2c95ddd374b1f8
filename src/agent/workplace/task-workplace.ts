/**
 * Where a segment of a task runs (docs/flows.md#isolation): a task asked to run on its own
 * branch gets its worktree at its first start (`task-worktree.ts`) and every later segment, and
 * every follow-up of it, runs in that same worktree; any other task runs in place in its folder.
 * A worktree removed by hand is reported (the task fails saying so, its row is marked), never a
 * crash; a task whose folder turns out not to be a git repository runs in place, and waits while
 * another in-place task runs in that folder.
 */
import { isTerminalStatus, NON_TERMINAL_STATUSES, type OffPeakTask } from '../../core/types';
import type { TaskIsolation, TaskStore } from '../../store';
import type { ChangesPlace } from './task-changes';
import { runGit } from './hardened-git';
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
  // No branch: its first start, or a follow-up of a task whose empty worktree went (made again where its session ran).
  if (isolation.worktreePath === null || isolation.branch === null) {
    let made;
    try {
      made = await createTaskWorktree(
        {
          folder: task.workspacePath,
          worktreesDir,
          taskId: task.id,
          title: task.title || task.prompt,
          ...(isolation.worktreePath ? { dir: isolation.worktreePath } : {}),
        },
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

/** What the card says of a task whose worktree held nothing when it finished. */
export const EMPTY_WORKTREE_NOTE = 'It changed nothing: its worktree and branch were removed.';

/**
 * A finished task that changed nothing leaves no offpeak/… branch or worktree in the user's
 * repository (docs/flows.md#isolation): once every task working in the worktree has finished, none
 * waits to continue in its branch, none that ran changed a file and the branch has no commit of
 * its own, both go. The rows keep the worktree's path (a follow-up makes its worktree again there,
 * where Claude Code finds the session) and forget the branch. Returns what could not be removed.
 */
export async function dropEmptyWorktree(store: TaskStore, taskId: string, options: WorktreeGitOptions = {}): Promise<string[]> {
  const row = store.read((tx) => tx.isolation.get(taskId));
  if (row?.mode !== 'worktree' || !row.worktreePath || !row.branch || !row.baseCommit || row.broughtHome !== null || row.missingAt !== null)
    return [];
  const users = store.read((tx) => {
    const ids = [taskId, ...tx.isolation.sharersOf(row.worktreePath!, taskId)];
    const waiter = tx.tasks
      .list({ status: NON_TERMINAL_STATUSES, hasTicket: false })
      .some((t) => t.continueInBranch && !!t.afterTaskId && ids.includes(t.afterTaskId));
    const steps = ids.map((id) => ({ task: tx.tasks.get(id), isolation: tx.isolation.get(id) }));
    return waiter ? undefined : steps;
  });
  if (!users) return [];
  const busy = users.some(({ task }) => !task || !isTerminalStatus(task.status));
  // A step that never started changed nothing; one that ran must have counted no file (unknown keeps it).
  const changed = users.some(({ task, isolation }) => task?.startedAt !== null && isolation?.changes?.length !== 0);
  if (busy || changed) return [];
  const ahead = await runGit(['rev-list', '--count', `${row.baseCommit}..refs/heads/${row.branch}`], { ...options, cwd: row.repoPath });
  if (ahead?.trim() !== '0') return [];
  const { problems } = await removeTaskWorktree({ repoPath: row.repoPath, worktreePath: row.worktreePath, branch: row.branch }, options);
  if (problems.length === 0)
    await store.mutate((tx) => {
      for (const { task } of users) if (task) tx.isolation.forgetEmptyBranch(task.id, EMPTY_WORKTREE_NOTE);
    });
  return problems;
}
