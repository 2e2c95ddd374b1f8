/** What every repository of the task DB shares: its transaction's database and clock, and the reads of a table keyed by task id. */
import type { SqlDb, SqlRow } from '../db/sql';

/** A repository works inside one transaction: its database, and the time the transaction read once (`now`). */
export abstract class StoreRepo {
  constructor(
    protected readonly db: SqlDb,
    protected readonly now: number,
  ) {}

  /** One task's row of a table keyed by task_id. */
  protected rowOfTask(table: string, taskId: string): SqlRow | undefined {
    return this.db.get(`SELECT * FROM ${table} WHERE task_id = ?`, [taskId]);
  }

  /** One task's record of a table keyed by task_id. */
  protected recordOfTask<T>(table: string, taskId: string, toRecord: (row: SqlRow) => T): T | undefined {
    const row = this.rowOfTask(table, taskId);
    return row ? toRecord(row) : undefined;
  }

  /** Every row of a table keyed by task_id, as records by task id (one read for a panel snapshot). */
  protected recordsByTask<T>(table: string, toRecord: (row: SqlRow) => T): Map<string, T> {
    return new Map(this.db.all(`SELECT * FROM ${table}`).map((r) => [String(r.task_id), toRecord(r)]));
  }

  /** Removes a task's row of a table keyed by task_id; true when there was one. */
  protected deleteRowOfTask(table: string, taskId: string): boolean {
    return this.db.run(`DELETE FROM ${table} WHERE task_id = ?`, [taskId]) === 1;
  }
}
