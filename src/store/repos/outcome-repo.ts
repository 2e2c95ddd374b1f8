/**
 * What happened after a task finished (off_peak_task_outcomes, v4): which window claimed its
 * notification, so that of all the windows sharing the DB exactly one tells the user, and when
 * the panel showed the result, so an unseen one carries a badge in every window until then.
 * A finished task without a row is neither notified nor seen yet.
 */
import { OUTCOMES_TABLE, TASKS_TABLE } from '../migrations/tables';
import { placeholders } from '../db/sql';
import { StoreRepo } from './store-repo';
import { numOrNull, strOrNull } from './cells';

/** A finished task whose notification nobody has claimed yet. */
export interface UnnotifiedOutcome {
  taskId: string;
  outcome: 'completed' | 'failed';
  title: string;
  prompt: string;
  failureReason: string | null;
  endedAt: number | null;
}

const FINISHED = "t.status IN ('completed', 'failed')";

export class OutcomeRepo extends StoreRepo {
  /** Finished tasks (completed or failed) whose notification is not claimed, oldest end first. */
  unnotified(limit = 100): UnnotifiedOutcome[] {
    return this.db
      .all(
        `SELECT t.off_peak_task_id AS id, t.status, t.title, t.prompt, t.failure_reason, t.ended_at
         FROM ${TASKS_TABLE} t LEFT JOIN ${OUTCOMES_TABLE} o ON o.task_id = t.off_peak_task_id
         WHERE ${FINISHED} AND o.notified_at IS NULL
         ORDER BY t.ended_at, t.off_peak_task_id LIMIT ?`,
        [limit],
      )
      .map((r) => ({
        taskId: String(r.id),
        outcome: r.status === 'failed' ? 'failed' : 'completed',
        title: String(r.title),
        prompt: String(r.prompt),
        failureReason: strOrNull(r.failure_reason),
        endedAt: numOrNull(r.ended_at),
      }));
  }

  /**
   * Claims the notification of a finished task for `windowId`. True for exactly one caller across
   * all windows (the DB's file lock serialises the transactions); false when the task is not
   * finished, is gone, or another window claimed it first.
   */
  claimNotice(taskId: string, windowId: string): boolean {
    const task = this.db.get(`SELECT status FROM ${TASKS_TABLE} t WHERE t.off_peak_task_id = ? AND ${FINISHED}`, [taskId]);
    if (!task) return false;
    this.db.run(`INSERT OR IGNORE INTO ${OUTCOMES_TABLE} (task_id, outcome) VALUES (?, ?)`, [taskId, String(task.status)]);
    return (
      this.db.run(`UPDATE ${OUTCOMES_TABLE} SET notified_by = ?, notified_at = ? WHERE task_id = ? AND notified_at IS NULL`, [
        windowId,
        this.now,
        taskId,
      ]) === 1
    );
  }

  /** The window that claimed a task's notification, if any. */
  notifiedBy(taskId: string): string | null {
    return (
      (this.db.scalar(`SELECT notified_by FROM ${OUTCOMES_TABLE} WHERE task_id = ? AND notified_at IS NOT NULL`, [taskId]) as
        string | undefined) ?? null
    );
  }

  /** Ids of finished tasks (completed or failed) the panel has not shown yet. */
  unseen(): string[] {
    return this.db
      .all(
        `SELECT t.off_peak_task_id AS id FROM ${TASKS_TABLE} t LEFT JOIN ${OUTCOMES_TABLE} o ON o.task_id = t.off_peak_task_id
         WHERE ${FINISHED} AND o.seen_at IS NULL ORDER BY t.ended_at, t.off_peak_task_id`,
      )
      .map((r) => String(r.id));
  }

  /** When the panel last showed a result (the user last looked), or null when never. */
  lastSeenAt(): number | null {
    return (this.db.scalar(`SELECT MAX(seen_at) FROM ${OUTCOMES_TABLE}`) as number | null | undefined) ?? null;
  }

  /** Something new happened to these results after they were seen (merged on the forge): their badge comes back. */
  markUnseen(taskIds: readonly string[]): number {
    if (taskIds.length === 0) return 0;
    const ids = [...new Set(taskIds)];
    return this.db.run(`UPDATE ${OUTCOMES_TABLE} SET seen_at = NULL WHERE task_id IN (${placeholders(ids.length)})`, ids);
  }

  /** The panel showed these results: their badge goes in every window. Returns how many were unseen. */
  markSeen(taskIds: readonly string[]): number {
    if (taskIds.length === 0) return 0;
    const ids = [...new Set(taskIds)];
    this.db.run(
      `INSERT OR IGNORE INTO ${OUTCOMES_TABLE} (task_id, outcome)
       SELECT off_peak_task_id, status FROM ${TASKS_TABLE} t WHERE t.off_peak_task_id IN (${placeholders(ids.length)}) AND ${FINISHED}`,
      ids,
    );
    return this.db.run(`UPDATE ${OUTCOMES_TABLE} SET seen_at = ? WHERE seen_at IS NULL AND task_id IN (${placeholders(ids.length)})`, [
      this.now,
      ...ids,
    ]);
  }
}
