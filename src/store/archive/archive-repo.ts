/**
 * The task DB's side of the history archive (docs/flows.md#archive): which finished tasks are due
 * to move, their rows in every per-task table, and taking them out (only when they still equal
 * the copy the archive file holds) or putting them back.
 */
import { perTaskTables, readTaskRows, sameRows, deleteTaskRows, writeTaskRows, type PerTaskTable, type TaskRows } from './archive-rows';
import { stillMovable, wholeGroups } from './archive-groups';
import type { SqlDb } from '../db/sql';

/** Which finished tasks stay in the task DB: the `keepCount` most recent that ended after `keepSince`. */
export interface KeepRule {
  keepCount: number;
  /** Epoch ms: a task that ended before this moves. */
  keepSince: number;
}

export class ArchiveRepo {
  private tables: PerTaskTable[] | undefined;

  constructor(private readonly db: SqlDb) {}

  /** The per-task tables of the task DB (the archive file mirrors them). */
  schema(): PerTaskTable[] {
    return (this.tables ??= perTaskTables(this.db));
  }

  /**
   * Finished tasks beyond the rule, oldest end first, as groups that move together (tasks sharing
   * a session or worktree). A task with a ticket not settled or abandoned yet is never one: its
   * ledger row is the settle outbox's to finish; nor is one that shares a session or worktree with
   * a task that is not due. One read of the whole DB: a run plans once, then checks each batch
   * with `stillMovable`.
   */
  duePlan(rule: KeepRule): string[][] {
    const due = this.db
      .all(
        `WITH finished AS (
           SELECT off_peak_task_id AS id, COALESCE(ended_at, updated_at) AS ended,
                  ROW_NUMBER() OVER (ORDER BY COALESCE(ended_at, updated_at) DESC, off_peak_task_id DESC) AS rank
           FROM off_peak_tasks WHERE status IN ('completed', 'failed', 'cancelled'))
         SELECT id FROM finished
         WHERE (rank > ? OR ended < ?)
           AND NOT EXISTS (SELECT 1 FROM off_peak_tickets k WHERE k.task_id = finished.id AND k.settle_state NOT IN ('settled', 'abandoned'))
         ORDER BY ended, id`,
        [Math.max(0, Math.floor(rule.keepCount)), rule.keepSince],
      )
      .map((r) => String(r.id));
    // Tasks sharing a session or a worktree move together, and only when all of them are due.
    return wholeGroups(this.db, due);
  }

  /** Of a planned batch, the tasks that may still move now (see archive-groups.ts). */
  stillMovable(ids: readonly string[], planned: ReadonlySet<string>): string[] {
    return stillMovable(this.db, ids, planned);
  }

  /** The share of the file's pages that are free (rows deleted): worth a VACUUM when large. */
  freeShare(): number {
    const free = Number(this.db.scalar('PRAGMA freelist_count') ?? 0);
    const pages = Number(this.db.scalar('PRAGMA page_count') ?? 0);
    return pages > 0 ? free / pages : 0;
  }

  /** Every task id in the task DB (a task also left in the archive by a crash is shown from here). */
  allTaskIds(): string[] {
    return this.db.all('SELECT off_peak_task_id AS id FROM off_peak_tasks').map((r) => String(r.id));
  }

  /** Every row of these tasks, by task. */
  rowsOf(taskIds: readonly string[]): Map<string, TaskRows> {
    return readTaskRows(this.db, this.schema(), taskIds);
  }

  /**
   * Removes the tasks whose rows still equal `copies` (what the archive file was given): a task
   * that changed since (e.g. its branch was merged) stays, and the next run copies it again.
   * Returns the ids removed.
   */
  removeArchived(copies: ReadonlyMap<string, TaskRows>): string[] {
    const now = this.rowsOf([...copies.keys()]);
    const same = [...copies.keys()].filter((id) => now.has(id) && sameRows(now.get(id), copies.get(id)));
    deleteTaskRows(this.db, this.schema(), same);
    return same;
  }

  /** Puts an archived task's rows back (Open session, Review, Delete of an archived task). */
  restore(taskId: string, rows: TaskRows): void {
    writeTaskRows(this.db, this.schema(), taskId, rows);
  }
}
