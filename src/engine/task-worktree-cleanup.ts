// A deleted task's worktree and branch go with it (docs/flows.md#isolation), unless another task
// still in the store works in the same worktree (a follow-up and the task it continues share
// one: the last of them to go takes it). Then its isolation row is forgotten. Never throws.
import { removeTaskWorktree } from '../agent/workplace/task-worktree';
import { NON_TERMINAL_STATUSES } from '../core/types';
import type { TaskStore } from '../store';

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
