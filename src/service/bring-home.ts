// Bringing a finished task's work home (docs/flows.md#bring-it-home), in any window: Merge and
// Apply into the user's folder, Discard of its worktree and branch, the worktree to open; and a
// deleted task's worktree going with it (docs/flows.md#isolation). The one writer of the
// isolation table's "brought home" mark and of a deleted task's row there.
import { applyTaskChanges, mergeTaskBranch, type MergeInput } from '../agent/workplace/task-merge';
import { uncommittedFiles } from '../agent/workplace/folder-status';
import { removeTaskWorktree, unmergedWork, worktreeFit, type WorktreeFit } from '../agent/workplace/task-worktree';
import { isTerminalStatus, NON_TERMINAL_STATUSES, type OffPeakTask } from '../core/types';
import { branchStepsOf, bringHomeRefusal, openSteps, stepsCommitMessage, type BranchStep } from './branch-steps';

export type { WorktreeFit } from '../agent/workplace/task-worktree';
import type { TaskCheck, TaskIsolation, TaskStore } from '../store';

/** What Merge or Apply works on, checked: shown in the question before the action runs. */
export interface BringHomePlan {
  /** The last step: the task whose card offers it. */
  task: OffPeakTask;
  isolation: TaskIsolation;
  /** A failed check of a step brought home (the last one's first), else the last step's check. */
  check: TaskCheck | undefined;
  /** Every step whose work the branch holds and is brought home with it, in order (one: a task alone). */
  steps: BranchStep[];
  input: MergeInput;
}

/** What Discard removes: the steps' worktree and branch; `broughtHome` when every step's work is already merged or applied. */
export interface DiscardPlan {
  task: OffPeakTask;
  isolation: TaskIsolation;
  steps: BranchStep[];
  broughtHome: 'merged' | 'applied' | null;
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

  /**
   * A finished task with its own worktree, not merged, applied or discarded yet: what Merge and
   * Apply work on. The steps that share its branch come home as one, from the last of them
   * (docs/flows.md#bring-it-home).
   */
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
    const group = store.read((tx) => branchStepsOf(tx, taskId))!;
    const refusal = bringHomeRefusal(group, taskId);
    if (refusal) throw new Error(`Not ${action === 'merge' ? 'merged' : 'applied'}: ${refusal}`);
    const steps = openSteps(group);
    const input: MergeInput = {
      folder: task.workspacePath,
      worktreePath: isolation.worktreePath,
      branch: isolation.branch,
      baseCommit: isolation.baseCommit,
      message: stepsCommitMessage(steps),
      privateDir: this.options.privateDirOf(taskId),
    };
    const checks = store.read((tx) => steps.map((s) => tx.checks.get(s.task.id)));
    const check = [...checks].reverse().find((c) => c?.state === 'failed') ?? checks[checks.length - 1];
    return { task, isolation, check, steps, input };
  }

  /** "Merge": a merge commit in the folder's branch, recorded; a conflict is left for the user to resolve. */
  async merge(plan: BringHomePlan): Promise<{ outcome: 'merged'; into: string } | { outcome: 'conflict'; into: string; files: string[] }> {
    const result = await mergeTaskBranch(plan.input);
    if (result.kind === 'refused') throw new Error(`Not merged: ${result.reason}`);
    if (result.kind === 'conflict') return { outcome: 'conflict', into: result.into, files: result.files };
    await this.options.store.mutate((tx) => {
      for (const step of plan.steps) tx.isolation.recordBroughtHome(step.task.id, 'merged');
    });
    return { outcome: 'merged', into: result.into };
  }

  /** "Apply": the task's changes written into the folder's working copy, uncommitted; recorded. */
  async apply(plan: BringHomePlan): Promise<void> {
    const result = await applyTaskChanges(plan.input);
    if (result.kind === 'refused') throw new Error(`Not applied: ${result.reason}`);
    await this.options.store.mutate((tx) => {
      for (const step of plan.steps) tx.isolation.recordBroughtHome(step.task.id, 'applied');
    });
  }

  /** What Discard would remove (asked first), or why there is nothing to discard (or not from this step). */
  discardPlan(taskId: string): DiscardPlan {
    const task = this.taskOrThrow(taskId);
    const { isolation, group } = this.options.store.read((tx) => ({
      isolation: tx.isolation.get(taskId),
      group: branchStepsOf(tx, taskId),
    }));
    if (!isolation?.worktreePath || !group) throw new Error('This task has no branch of its own to discard.');
    const refusal = bringHomeRefusal(group, taskId);
    if (refusal) throw new Error(`Cannot discard now: ${refusal}`);
    const open = openSteps(group);
    const kinds = new Set(group.steps.map((s) => s.isolation.broughtHome?.kind));
    const broughtHome = open.length > 0 || kinds.has('discarded') ? null : kinds.has('merged') ? 'merged' : 'applied';
    return { task, isolation, steps: group.steps, broughtHome };
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
  if (isolation.broughtHome?.kind === 'discarded' || (isolation.broughtHome && isolation.missingAt !== null)) return [];
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
  // A step already merged or applied keeps that record: only its worktree and branch went.
  await store.mutate((tx) => {
    for (const t of users) {
      if (!t) continue;
      if (tx.isolation.get(t.id)?.broughtHome) tx.isolation.recordRemovedAfterBringHome(t.id);
      else tx.isolation.recordBroughtHome(t.id, 'discarded');
    }
  });
  return removed;
}
