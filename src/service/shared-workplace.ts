// Where a task that continues another's work runs (docs/flows.md#isolation): one rule for a
// follow-up and for a chained step that continues in its branch.
import type { StoreTx } from '../store';

/**
 * A task that continues another's work (a follow-up, a chained step continuing in its branch) works
 * where that one ran: the same worktree, branch and base. False when the other has no such row.
 */
export function workWhereItRan(tx: StoreTx, taskId: string, ofTaskId: string): boolean {
  const of = tx.isolation.get(ofTaskId);
  if (!of) return false;
  tx.isolation.insert({
    taskId,
    mode: of.mode,
    repoPath: of.repoPath,
    worktreePath: of.worktreePath,
    branch: of.branch,
    baseCommit: of.baseCommit,
  });
  return true;
}
