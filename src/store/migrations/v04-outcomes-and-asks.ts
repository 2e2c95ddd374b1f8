/**
 * v4: the task outcomes (a notification claimed once across windows, the panel's unseen mark) and
 * the pending asks shared by every window; both are deleted with their task by a trigger.
 */
import { followTaskDeleteSql, tablesStep } from './migration-step';
import { ASKS_TABLE, OUTCOMES_TABLE, TASKS_TABLE } from './tables';

export const SCHEMA_V4_SQL = `
CREATE TABLE IF NOT EXISTS ${OUTCOMES_TABLE} (
  task_id     TEXT PRIMARY KEY,
  outcome     TEXT NOT NULL,
  notified_by TEXT,
  notified_at INTEGER,
  seen_at     INTEGER
);
-- A deleted task takes its outcome row along (the repositories of tasks need not know it).
${followTaskDeleteSql(OUTCOMES_TABLE)}
CREATE TABLE IF NOT EXISTS ${ASKS_TABLE} (
  ask_id      TEXT PRIMARY KEY,
  task_id     TEXT NOT NULL,
  window_id   TEXT NOT NULL,
  tool        TEXT NOT NULL,
  summary     TEXT NOT NULL,
  asked_at    INTEGER NOT NULL,
  deadline_at INTEGER NOT NULL,
  answer      TEXT,
  answered_at INTEGER
);
${followTaskDeleteSql(ASKS_TABLE)}
`;

/** Results that finished before v4 were seen by whoever ran them: no late toast, no badge. */
const BACKFILL_V4_SQL = `
INSERT OR IGNORE INTO ${OUTCOMES_TABLE} (task_id, outcome, notified_by, notified_at, seen_at)
SELECT off_peak_task_id, status, 'before-v4', ?, ? FROM ${TASKS_TABLE} WHERE status IN ('completed', 'failed')
`;

export const v04 = tablesStep(
  4,
  'task outcomes (notification claimed once across windows, seen by the panel); pending asks shared by all windows',
  SCHEMA_V4_SQL,
  (db, now) => db.run(BACKFILL_V4_SQL, [now, now]),
);
