/**
 * Per-task dispatch backoff (off_peak_dispatch_backoff): a task whose dispatch failed waits
 * before the scheduler tries it again, across restarts. The policy (delays) is the caller's.
 */
import { DISPATCH_TABLE, TASKS_TABLE } from '../migrations/tables';
import { StoreRepo } from './store-repo';
import { strOrNull } from './cells';

export interface DispatchBackoffRecord {
  taskId: string;
  failures: number;
  nextDispatchAt: number;
  lastError: string | null;
}

export class DispatchRepo extends StoreRepo {
  get(taskId: string): DispatchBackoffRecord | undefined {
    const row = this.rowOfTask(DISPATCH_TABLE, taskId);
    if (!row) return undefined;
    return {
      taskId,
      failures: Number(row.failures),
      nextDispatchAt: Number(row.next_dispatch_at),
      lastError: strOrNull(row.last_error),
    };
  }

  /** One more failed dispatch; `delayFor(failures)` says how long to wait. */
  recordFailure(taskId: string, error: string, delayFor: (failures: number) => number): DispatchBackoffRecord {
    const failures = (this.get(taskId)?.failures ?? 0) + 1;
    const nextDispatchAt = this.now + delayFor(failures);
    const lastError = error.slice(0, 1000);
    this.db.run(
      `INSERT INTO ${DISPATCH_TABLE} (task_id, failures, next_dispatch_at, last_error, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(task_id) DO UPDATE SET failures = excluded.failures, next_dispatch_at = excluded.next_dispatch_at,
         last_error = excluded.last_error, updated_at = excluded.updated_at`,
      [taskId, failures, nextDispatchAt, lastError, this.now],
    );
    return { taskId, failures, nextDispatchAt, lastError };
  }

  /** Forgets a task's backoff; false (nothing written) when it had none. */
  clear(taskId: string): boolean {
    return this.deleteRowOfTask(DISPATCH_TABLE, taskId);
  }

  /** The earliest backoff end in the future of a queued task (the scheduler's next timer), if any. */
  nextEnd(): number | undefined {
    const value = this.db.scalar(
      `SELECT MIN(b.next_dispatch_at) FROM ${DISPATCH_TABLE} b JOIN ${TASKS_TABLE} t ON t.off_peak_task_id = b.task_id
       WHERE b.next_dispatch_at > ? AND t.status = 'queued'`,
      [this.now],
    );
    return value === null || value === undefined ? undefined : Number(value);
  }
}
