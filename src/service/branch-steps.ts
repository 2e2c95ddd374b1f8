// The tasks that share one worktree and branch (docs/flows.md#bring-it-home): a chain's steps
// that continue in its branch, a task and its follow-ups. Their work sits uncommitted, step on
// step, in one worktree, so it is brought home as one: Merge, Apply and Discard are offered on
// the last step only, and name every step. Pure rules over the store's rows.
import { isTerminalStatus, type OffPeakTask } from '../core/types';
import type { StoreReadTx, TaskIsolation } from '../store';

export interface BranchStep {
  task: OffPeakTask;
  isolation: TaskIsolation;
}

export interface BranchSteps {
  /** Every task in the store that works in this worktree, in the order they joined it. */
  steps: BranchStep[];
  /** Tasks not finished that wait to continue in this branch (they join it when their chain says go). */
  waiting: OffPeakTask[];
}

export const stepName = (task: OffPeakTask): string => task.title || task.prompt.split('\n')[0]!.slice(0, 80);

const byJoin = (x: BranchStep, y: BranchStep) =>
  x.isolation.createdAt - y.isolation.createdAt ||
  (x.task.startedAt ?? Infinity) - (y.task.startedAt ?? Infinity) ||
  x.task.queuedAt - y.task.queuedAt ||
  x.task.id.localeCompare(y.task.id);

/** The steps of every worktree the tasks work in, by worktree path (one pass, for a panel snapshot). */
export function branchGroups(tasks: readonly OffPeakTask[], rows: ReadonlyMap<string, TaskIsolation>): Map<string, BranchSteps> {
  const groups = new Map<string, BranchSteps>();
  const groupOf = new Map<string, BranchSteps>();
  for (const task of tasks) {
    const isolation = rows.get(task.id);
    if (isolation?.mode !== 'worktree' || !isolation.worktreePath) continue;
    let group = groups.get(isolation.worktreePath);
    if (!group) groups.set(isolation.worktreePath, (group = { steps: [], waiting: [] }));
    group.steps.push({ task, isolation });
    groupOf.set(task.id, group);
  }
  for (const group of groups.values()) group.steps.sort(byJoin);
  for (const task of tasks) {
    if (!task.continueInBranch || !task.afterTaskId || isTerminalStatus(task.status) || groupOf.has(task.id)) continue;
    groupOf.get(task.afterTaskId)?.waiting.push(task);
  }
  return groups;
}

/** The steps that share `taskId`'s worktree (it among them); undefined when it has none. */
export function branchStepsOf(tx: Pick<StoreReadTx, 'tasks' | 'isolation'>, taskId: string): BranchSteps | undefined {
  const own = tx.isolation.get(taskId);
  if (own?.mode !== 'worktree' || !own.worktreePath) return undefined;
  return branchGroups(tx.tasks.list(), tx.isolation.all()).get(own.worktreePath);
}

/** What is left to bring home: the steps not merged, applied or discarded yet (a follow-up after a merge is new work). */
export const openSteps = (group: BranchSteps): BranchStep[] => group.steps.filter((s) => s.isolation.broughtHome === null);

/**
 * Whether the branch can be brought home from `taskId`'s card now, or why not: only from its last
 * step, once every step has finished and none waits to continue in it.
 */
export function bringHomeRefusal(group: BranchSteps, taskId: string): string | undefined {
  const last = group.steps[group.steps.length - 1]!;
  const branch = last.isolation.branch ?? 'its branch';
  const live = group.steps.find((s) => !isTerminalStatus(s.task.status));
  if (live) return `"${stepName(live.task)}" still works on ${branch}; its work would be left out. Wait until it has finished.`;
  if (group.waiting.length > 0)
    return `"${stepName(group.waiting[0]!)}" waits to continue on ${branch}; bring the branch home once it has finished (or delete it).`;
  if (last.task.id !== taskId)
    return `${branch} also holds the work of ${group.steps
      .slice(group.steps.findIndex((s) => s.task.id === taskId) + 1)
      .map((s) => `"${stepName(s.task)}"`)
      .join(', ')}: bring it home as one from "${stepName(last.task)}", the last step.`;
  return undefined;
}

/**
 * The commit message of the steps' work: their titles in order on the first line, then each step
 * with the files it changed (one step: its title alone, as before chains).
 */
export function stepsCommitMessage(steps: readonly BranchStep[]): string {
  const names = steps.map((s) => stepName(s.task));
  if (steps.length === 1) return names[0]!.slice(0, 72);
  const head = names.join(' → ');
  const lines = steps.map((s, i) => {
    const files = s.isolation.changes?.map((c) => c.path) ?? [];
    return `- ${names[i]}: ${files.length > 0 ? files.join(', ') : 'no files changed'}`;
  });
  return `${head.length > 72 ? `${head.slice(0, 71)}…` : head}\n\nOff-peak chain of ${steps.length} steps:\n${lines.join('\n')}`;
}
