/**
 * What the agent runtime remembers per task beyond the aggregate (off_peak_task_runtime): which
 * agent ran the first segment and the git commit it started from (the base of files_changed).
 */
import { RUNTIME_TABLE } from '../migrations/tables';
import { StoreRepo } from './store-repo';
import { strOrNull } from './cells';

export interface TaskRuntimeRecord {
  taskId: string;
  /** The agent kind (e.g. 'claude-code', 'reference'). */
  agent: string;
  baseCommit: string | null;
  createdAt: number;
}

export class RuntimeRepo extends StoreRepo {
  get(taskId: string): TaskRuntimeRecord | undefined {
    const row = this.rowOfTask(RUNTIME_TABLE, taskId);
    if (!row) return undefined;
    return { taskId, agent: String(row.agent), baseCommit: strOrNull(row.base_commit), createdAt: Number(row.created_at) };
  }

  /** First segment only: a later call keeps the first record and writes nothing (returns false). */
  recordFirstStart(record: { taskId: string; agent: string; baseCommit: string | null }): boolean {
    return (
      this.db.run(`INSERT OR IGNORE INTO ${RUNTIME_TABLE} (task_id, agent, base_commit, created_at) VALUES (?, ?, ?, ?)`, [
        record.taskId,
        record.agent,
        record.baseCommit,
        this.now,
      ]) === 1
    );
  }

  /** Forgets a deleted task's record. */
  delete(taskId: string): boolean {
    return this.deleteRowOfTask(RUNTIME_TABLE, taskId);
  }
}
