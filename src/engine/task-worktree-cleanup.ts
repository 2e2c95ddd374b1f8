// A deleted task's worktree and branch go with it (docs/flows.md#isolation), unless another task
// still in the store works in the same worktree (a follow-up and the task it continues share
// one: the last of them to go takes it). Then its isolation row is forgotten. Never throws.
import { removeTaskWorktree } from '../agent/task-worktree';
import type { TaskStore } from '../store';

export async function pruneTaskWorktree(store: TaskStore, taskId: string, log: (line: string) => void = () => {}): Promise<void> {
  try {
    const isolation = store.read((tx) => tx.isolation.get(taskId));
    if (!isolation) return;
    if (isolation.worktreePath && isolation.branch && store.read((tx) => tx.isolation.sharersOf(isolation.worktreePath!, taskId)).length === 0) {
      const problems = await removeTaskWorktree({ repoPath: isolation.repoPath, worktreePath: isolation.worktreePath, branch: isolation.branch });
      if (problems.length > 0) log(`could not remove ${problems.join(' and ')} of the deleted task ${taskId}`);
    }
    await store.mutate((tx) => tx.isolation.forget(taskId));
  } catch (e) {
    log(`could not remove the worktree of the deleted task ${taskId}: ${e instanceof Error ? e.message : String(e)}`);
  }
}
