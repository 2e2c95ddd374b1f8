/**
 * Per-task dispatch backoff (seed 07 branch 05: no window / dispatch failed -> stay queued,
 * 30 s doubling to 15 min), persisted in the shared DB so a restart does not hammer a window
 * that keeps failing. A scheduler-private table, created on first use (additive, no migration:
 * the aggregate's 30 columns stay exactly the seed's).
 */
import type { SqlDb } from '../store';

export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 30_000, maxMs: 15 * 60_000 };

export interface DispatchBackoff {
  taskId: string;
  failures: number;
  nextDispatchAt: number;
  lastError: string | null;
}

export const DISPATCH_TABLE = 'off_peak_dispatch_backoff';

export function ensureDispatchTable(db: SqlDb): void {
  db.exec(`CREATE TABLE IF NOT EXISTS ${DISPATCH_TABLE} (
    task_id TEXT PRIMARY KEY,
    failures INTEGER NOT NULL,
    next_dispatch_at INTEGER NOT NULL,
    last_error TEXT,
    updated_at INTEGER NOT NULL
  )`);
}

export function backoffDelay(policy: BackoffPolicy, failures: number): number {
  return Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
}

/** Records one more failed dispatch; returns when the task may be tried again. */
export function recordDispatchFailure(db: SqlDb, policy: BackoffPolicy, taskId: string, error: string, now: number): DispatchBackoff {
  ensureDispatchTable(db);
  const row = db.get(`SELECT failures FROM ${DISPATCH_TABLE} WHERE task_id = ?`, [taskId]);
  const failures = Number(row?.failures ?? 0) + 1;
  const nextDispatchAt = now + backoffDelay(policy, failures);
  db.run(
    `INSERT INTO ${DISPATCH_TABLE} (task_id, failures, next_dispatch_at, last_error, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(task_id) DO UPDATE SET failures = excluded.failures, next_dispatch_at = excluded.next_dispatch_at,
       last_error = excluded.last_error, updated_at = excluded.updated_at`,
    [taskId, failures, nextDispatchAt, error.slice(0, 1000), now],
  );
  return { taskId, failures, nextDispatchAt, lastError: error };
}

export function clearDispatchBackoff(db: SqlDb, taskId: string): boolean {
  ensureDispatchTable(db);
  return db.run(`DELETE FROM ${DISPATCH_TABLE} WHERE task_id = ?`, [taskId]) === 1;
}

export function readDispatchBackoff(db: SqlDb, taskId: string): DispatchBackoff | undefined {
  if (!hasTable(db)) return undefined;
  const row = db.get(`SELECT * FROM ${DISPATCH_TABLE} WHERE task_id = ?`, [taskId]);
  if (!row) return undefined;
  return { taskId, failures: Number(row.failures), nextDispatchAt: Number(row.next_dispatch_at), lastError: (row.last_error as string | null) ?? null };
}

/** The earliest backoff end in the future (for the scheduler's next timer), if any. */
export function nextBackoffEnd(db: SqlDb, now: number): number | undefined {
  if (!hasTable(db)) return undefined;
  const value = db.scalar(
    `SELECT MIN(b.next_dispatch_at) FROM ${DISPATCH_TABLE} b JOIN off_peak_tasks t ON t.off_peak_task_id = b.task_id
     WHERE b.next_dispatch_at > ? AND t.status = 'queued'`,
    [now],
  );
  return value === null || value === undefined ? undefined : Number(value);
}

export function hasTable(db: SqlDb): boolean {
  return db.get(`SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?`, [DISPATCH_TABLE]) !== undefined;
}
