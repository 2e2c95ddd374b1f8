/** v1: the task aggregate, `off_peak_tasks` (one row per task: form, workspace, session, status, ticket snapshot, claim, settle). */
import type { MigrationStep } from './migration-step';

/** The 30 columns of off_peak_tasks in their v1 order (8 groups). */
export const TASK_COLUMNS = [
  // identity and form
  'off_peak_task_id',
  'title',
  'prompt',
  'permission_mode',
  'model',
  'thought_level',
  // workspace
  'workspace_key',
  'workspace_path',
  'workspace_identity',
  // session binding
  'conversation_id',
  'session_id',
  // local execution
  'status',
  'queued_at',
  'started_at',
  'ended_at',
  'failure_reason',
  'files_changed',
  // server snapshot
  'server_ticket_id',
  'registered_at',
  'schedulable',
  'queue_position',
  'next_poll_at',
  // lease and diagnostics
  'claim_running',
  'claimed_at',
  'attempt_count',
  'last_error',
  // settle and History
  'settled_at',
  'history_deleted_at',
  // audit
  'created_at',
  'updated_at',
] as const;

export const SCHEMA_V1_SQL = `
CREATE TABLE IF NOT EXISTS off_peak_tasks (
  off_peak_task_id   TEXT PRIMARY KEY,
  title              TEXT NOT NULL,
  prompt             TEXT NOT NULL,
  permission_mode    TEXT NOT NULL,
  model              TEXT,
  thought_level      TEXT,
  workspace_key      TEXT NOT NULL,
  workspace_path     TEXT NOT NULL,
  workspace_identity TEXT,
  conversation_id    TEXT,
  session_id         TEXT,
  status             TEXT NOT NULL,
  queued_at          INTEGER NOT NULL,
  started_at         INTEGER,
  ended_at           INTEGER,
  failure_reason     TEXT,
  files_changed      INTEGER,
  server_ticket_id   TEXT,
  registered_at      INTEGER,
  schedulable        INTEGER DEFAULT 0,
  queue_position     INTEGER,
  next_poll_at       INTEGER,
  claim_running      INTEGER DEFAULT 0,
  claimed_at         INTEGER,
  attempt_count      INTEGER DEFAULT 0,
  last_error         TEXT,
  settled_at         INTEGER,
  history_deleted_at INTEGER,
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_off_peak_tasks_status ON off_peak_tasks(status, queued_at);
CREATE INDEX IF NOT EXISTS idx_off_peak_tasks_workspace ON off_peak_tasks(workspace_key);
`;

export const v01: MigrationStep = { version: 1, description: 'off_peak_tasks aggregate', up: (db) => db.exec(SCHEMA_V1_SQL) };
