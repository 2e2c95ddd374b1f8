/**
 * What the runtime remembers per task beyond the seed's aggregate: which agent runs the session
 * (a Claude Code session cannot be resumed by another agent) and the git commit recorded when
 * the task first started (the base of files_changed). A runtime-private table created on first
 * use; the aggregate's 30 columns stay the seed's.
 */
import type { SqlDb } from '../store';
import type { AgentKind } from './adapters';

export const RUNTIME_TABLE = 'off_peak_task_runtime';

export interface TaskRuntimeRecord {
  taskId: string;
  agent: AgentKind;
  baseCommit: string | null;
  createdAt: number;
}

export function ensureRuntimeTable(db: SqlDb): void {
  db.exec(`CREATE TABLE IF NOT EXISTS ${RUNTIME_TABLE} (
    task_id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    base_commit TEXT,
    created_at INTEGER NOT NULL
  )`);
}

export function readRuntimeRecord(db: SqlDb, taskId: string): TaskRuntimeRecord | undefined {
  if (!db.get(`SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?`, [RUNTIME_TABLE])) return undefined;
  const row = db.get(`SELECT * FROM ${RUNTIME_TABLE} WHERE task_id = ?`, [taskId]);
  if (!row) return undefined;
  return { taskId, agent: row.agent as AgentKind, baseCommit: (row.base_commit as string | null) ?? null, createdAt: Number(row.created_at) };
}

/** First segment only: later calls keep the first record (first writer wins). */
export function recordFirstStart(db: SqlDb, record: TaskRuntimeRecord): void {
  ensureRuntimeTable(db);
  db.run(`INSERT OR IGNORE INTO ${RUNTIME_TABLE} (task_id, agent, base_commit, created_at) VALUES (?, ?, ?, ?)`, [
    record.taskId,
    record.agent,
    record.baseCommit,
    record.createdAt,
  ]);
}
