// Bringing a finished task's work home (docs/flows.md#bring-it-home), in any window: Merge and
// Apply into the user's folder, Discard of its worktree and branch, the worktree to open; and a
// deleted task's worktree going with it (docs/flows.md#isolation). The one writer of the
// isolation table's "brought home" mark and of a deleted task's row there.
import { applyTaskChanges, mergeTaskBranch, type MergeInput } from '../agent/workplace/task-merge';
import { uncommittedFiles } from '../agent/workplace/folder-status';
import { removeTaskWorktree, unmergedWork, worktreeFit, type WorktreeFit } from '../agent/workplace/task-worktree';
import { isTerminalStatus, NON_TERMINAL_STATUSES, type OffPeakTask } from '../core/types';

export type { WorktreeFit } from '../agent/workplace/task-worktree';
import type { TaskCheck, TaskIsolation, TaskStore } from '../store';

/** What Merge or Apply works on, checked: shown in the question before the action runs. */
export interface BringHomePlan {
  task: OffPeakTask;
  isolation: TaskIsolation;
  check: TaskCheck | undefined;
  input: MergeInput;
}

export interface BringHomeOptions {
  store: TaskStore;
  /** The task's private runtime folder (removed with the task), where a merge builds its commit. */
  privateDirOf: (taskId: string) => string;
}

export class BringHome {
  constructor(private readonly options: BringHomeOptions) {}

  private taskOrThrow(taskId: string): OffPeakTask {
    const task = this.options.store.read((tx) => tx.tasks.get(taskId));
    if (!task) throw new Error('This task no longer exists.');
    return task;
  }

  /** A finished task with its own worktree, not merged, applied or discarded yet: what Merge and Apply work on. */
  plan(taskId: string, action: 'merge' | 'apply'): BringHomePlan {
    const { store } = this.options;
    const task = this.taskOrThrow(taskId);
    const isolation = store.read((tx) => tx.isolation.get(taskId));
    if (
      !isolation?.worktreePath ||
      !isolation.branch ||
      !isolation.baseCommit ||
      isolation.missingAt !== null ||
      isolation.broughtHome !== null
    ) {
      throw new Error(`This task has no branch of its own to ${action}.`);
    }
    if (!['completed', 'failed', 'cancelled'].includes(task.status))
      throw new Error(`${action[0].toUpperCase()}${action.slice(1)} a task once it has finished.`);
    const input: MergeInput = {
      folder: task.workspacePath,
      worktreePath: isolation.worktreePath,
      branch: isolation.branch,
      baseCommit: isolation.baseCommit,
      message: task.title || task.prompt.split('\n')[0].slice(0, 72),
      privateDir: this.options.privateDirOf(taskId),
    };
    return { task, isolation, check: store.read((tx) => tx.checks.get(taskId)), input };
  }

  /** "Merge": a merge commit in the folder's branch, recorded; a conflict is left for the user to resolve. */
  async merge(plan: BringHomePlan): Promise<{ outcome: 'merged'; into: string } | { outcome: 'conflict'; into: string; files: string[] }> {
    const result = await mergeTaskBranch(plan.input);
    if (result.kind === 'refused') throw new Error(`Not merged: ${result.reason}`);
    if (result.kind === 'conflict') return { outcome: 'conflict', into: result.into, files: result.files };
    await this.options.store.mutate((tx) => tx.isolation.recordBroughtHome(plan.task.id, 'merged'));
    return { outcome: 'merged', into: result.into };
  }

  /** "Apply": the task's changes written into the folder's working copy, uncommitted; recorded. */
  async apply(plan: BringHomePlan): Promise<void> {
    const result = await applyTaskChanges(plan.input);
    if (result.kind === 'refused') throw new Error(`Not applied: ${result.reason}`);
    await this.options.store.mutate((tx) => tx.isolation.recordBroughtHome(plan.task.id, 'applied'));
  }

  /** What Discard would remove (asked first), or why there is nothing to discard. */
  discardPlan(taskId: string): { task: OffPeakTask; isolation: TaskIsolation } {
    const task = this.taskOrThrow(taskId);
    const isolation = this.options.store.read((tx) => tx.isolation.get(taskId));
    if (!isolation?.worktreePath) throw new Error('This task has no branch of its own to discard.');
    return { task, isolation };
  }

  /** "Discard": see discardTaskWorktree. */
  discard(taskId: string): Promise<string[]> {
    return discardTaskWorktree(this.options.store, taskId);
  }

  /** Whether a folder can have a worktree of its own (the form's "Run on its own branch"), or why not. */
  fit(folder: string): Promise<WorktreeFit> {
    return worktreeFit(folder);
  }

  /** The folder's uncommitted files: what a task on its own branch, made from the last commit, will not see. */
  uncommitted(folder: string): Promise<string[] | null> {
    return uncommittedFiles(folder);
  }

  /**
   * What deleting a task would lose with its worktree and branch: commits or changes merged
   * nowhere (asked first). Undefined: nothing, or another task still works in the worktree.
   */
  async workLostByDelete(task: OffPeakTask): Promise<{ branch: string; work: string } | undefined> {
    const { store } = this.options;
    const isolation = store.read((tx) => tx.isolation.get(task.id));
    const shared = isolation?.worktreePath ? store.read((tx) => tx.isolation.sharersOf(isolation.worktreePath!, task.id)).length : 0;
    if (!isolation?.worktreePath || !isolation.branch || !isolation.baseCommit || shared > 0 || isolation.broughtHome !== null)
      return undefined;
    if (!isTerminalStatus(task.status) && task.status !== 'paused' && task.status !== 'queued') return undefined;
    const work = await unmergedWork({
      repoPath: isolation.repoPath,
      branch: isolation.branch,
      baseCommit: isolation.baseCommit,
      changedFiles: isolation.changes?.length ?? 0,
    });
    return work ? { branch: isolation.branch, work } : undefined;
  }

  /** "Open worktree in new window": the folder, while it is there. */
  worktreeToOpen(taskId: string): string {
    this.taskOrThrow(taskId);
    const isolation = this.options.store.read((tx) => tx.isolation.get(taskId));
    if (!isolation?.worktreePath || isolation.missingAt !== null || isolation.broughtHome !== null)
      throw new Error("This task's worktree is not there.");
    return isolation.worktreePath;
  }
}

/**
 * A deleted task's worktree and branch go with it, unless another task still in the store works
 * in the same worktree (a follow-up and the task it continues share one: the last of them to go
 * takes it). Then its isolation row is forgotten. Never throws.
 */
export async function pruneTaskWorktree(store: TaskStore, taskId: string, log: (line: string) => void = () => {}): Promise<void> {
  try {
    const isolation = store.read((tx) => tx.isolation.get(taskId));
    if (!isolation) return;
    if (
      isolation.worktreePath &&
      isolation.branch &&
      store.read((tx) => tx.isolation.sharersOf(isolation.worktreePath!, taskId)).length === 0
    ) {
      const { problems } = await removeTaskWorktree({
        repoPath: isolation.repoPath,
        worktreePath: isolation.worktreePath,
        branch: isolation.branch,
      });
      if (problems.length > 0) log(`could not remove ${problems.join(' and ')} of the deleted task ${taskId}`);
    }
    await store.mutate((tx) => tx.isolation.forget(taskId));
  } catch (e) {
    log(`could not remove the worktree of the deleted task ${taskId}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * "Discard" (docs/flows.md#bring-it-home): removes a finished task's worktree and branch and
 * records that (and when) on its row; the task, its History row and its list of changes stay.
 * Refused, with why, while a task that uses the same worktree is not finished. Returns what was
 * there and went (nothing, when both were already gone).
 */
export async function discardTaskWorktree(store: TaskStore, taskId: string): Promise<string[]> {
  const isolation = store.read((tx) => tx.isolation.get(taskId));
  if (!isolation || isolation.mode !== 'worktree' || !isolation.worktreePath || !isolation.branch)
    throw new Error('This task has no branch of its own to discard.');
  if (isolation.broughtHome?.kind === 'discarded') return [];
  const users = store.read((tx) => [taskId, ...tx.isolation.sharersOf(isolation.worktreePath!, taskId)].map((id) => tx.tasks.get(id)));
  const live = users.find((t) => t && !['completed', 'failed', 'cancelled'].includes(t.status));
  if (live)
    throw new Error(
      `Cannot discard now: "${live.title || live.id}" still works on ${isolation.branch}; cancel it or wait until it has finished.`,
    );
  // A task that waits to continue in this branch has no worktree row of its own yet (it gets one when
  // its chain says go), so the sharers above do not name it: it must not find the branch gone.
  const userIds = new Set(users.flatMap((t) => (t ? [t.id] : [])));
  const waiter = store.read((tx) =>
    tx.tasks
      .list({ status: NON_TERMINAL_STATUSES, hasTicket: false })
      .find((t) => t.continueInBranch && t.afterTaskId && userIds.has(t.afterTaskId)),
  );
  if (waiter)
    throw new Error(
      `Cannot discard now: "${waiter.title || waiter.id}" waits to continue on ${isolation.branch}; delete it or discard once it has finished.`,
    );
  const { removed, problems } = await removeTaskWorktree({
    repoPath: isolation.repoPath,
    worktreePath: isolation.worktreePath,
    branch: isolation.branch,
  });
  if (problems.length > 0)
    throw new Error(`Could not remove ${problems.join(' and ')}${removed.length > 0 ? ` (removed ${removed.join(' and ')})` : ''}.`);
  await store.mutate((tx) => {
    for (const t of users) if (t) tx.isolation.recordBroughtHome(t.id, 'discarded');
  });
  return removed;
}
