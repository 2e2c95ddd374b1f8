/**
 * v3: the window registry, hand-off requests, dispatch backoff, runtime records and the change
 * counters with their triggers; the lease table is dropped (the lease is a file beside the DB).
 */
import { tablesStep } from './migration-step';
import { CHANGES_TABLE, DISPATCH_TABLE, HANDOFF_TABLE, LEASES_TABLE, RUNTIME_TABLE, WINDOWS_TABLE } from './tables';

export const SCHEMA_V3_SQL = `
CREATE TABLE IF NOT EXISTS ${WINDOWS_TABLE} (
  window_id      TEXT PRIMARY KEY,
  workspace_keys TEXT NOT NULL,
  pid            INTEGER NOT NULL,
  host           TEXT NOT NULL,
  registered_at  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS ${HANDOFF_TABLE} (
  task_id      TEXT PRIMARY KEY,
  window_id    TEXT NOT NULL,
  requested_at INTEGER NOT NULL,
  result       TEXT
);
CREATE TABLE IF NOT EXISTS ${DISPATCH_TABLE} (
  task_id          TEXT PRIMARY KEY,
  failures         INTEGER NOT NULL,
  next_dispatch_at INTEGER NOT NULL,
  last_error       TEXT,
  updated_at       INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS ${RUNTIME_TABLE} (
  task_id     TEXT PRIMARY KEY,
  agent       TEXT NOT NULL,
  base_commit TEXT,
  created_at  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS ${CHANGES_TABLE} (
  topic   TEXT PRIMARY KEY,
  counter INTEGER NOT NULL DEFAULT 0
);
DROP TABLE IF EXISTS ${LEASES_TABLE};
`;

export const v03 = tablesStep(
  3,
  'window registry, hand-off requests, dispatch backoff, runtime records, change counters; lease leaves the DB',
  SCHEMA_V3_SQL,
);
