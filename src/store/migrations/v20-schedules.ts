/**
 * v20: the repeating schedules and their runs (src/store/repos/schedule-repo.ts,
 * docs/flows.md#schedules-and-chains), one run row per occurrence key; both count as the `tasks` topic.
 */
import { tablesStep } from './migration-step';
import { SCHEDULE_RUNS_TABLE, SCHEDULES_TABLE } from './tables';

export const SCHEMA_V20_SQL = `
CREATE TABLE IF NOT EXISTS ${SCHEDULES_TABLE} (
  schedule_id        TEXT PRIMARY KEY,
  title              TEXT NOT NULL,
  prompt             TEXT NOT NULL,
  workspace_path     TEXT NOT NULL,
  workspace_identity TEXT,
  permission_mode    TEXT NOT NULL,
  model              TEXT,
  thought_level      TEXT,
  isolation          TEXT,
  check_command      TEXT,
  rule_json          TEXT NOT NULL,
  zone               TEXT NOT NULL,
  paused             INTEGER NOT NULL DEFAULT 0,
  handled_through    INTEGER NOT NULL,
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL,
  deleted_at         INTEGER
);
CREATE TABLE IF NOT EXISTS ${SCHEDULE_RUNS_TABLE} (
  occurrence_key TEXT PRIMARY KEY,
  schedule_id    TEXT NOT NULL,
  due_at         INTEGER NOT NULL,
  fired_at       INTEGER NOT NULL,
  task_id        TEXT,
  outcome        TEXT NOT NULL,
  catch_up       INTEGER NOT NULL DEFAULT 0,
  missed_count   INTEGER NOT NULL DEFAULT 0,
  note           TEXT
);
CREATE INDEX IF NOT EXISTS ${SCHEDULE_RUNS_TABLE}_schedule ON ${SCHEDULE_RUNS_TABLE} (schedule_id, due_at);
CREATE INDEX IF NOT EXISTS ${SCHEDULE_RUNS_TABLE}_task ON ${SCHEDULE_RUNS_TABLE} (task_id);
`;

export const v20 = tablesStep(
  20,
  'repeating schedules and their runs, one row per occurrence key (docs/flows.md#schedules-and-chains)',
  SCHEMA_V20_SQL,
);
