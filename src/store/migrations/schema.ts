/**
 * Schema and migrations of tasks-index.sqlite, versioned with PRAGMA user_version.
 *
 * What each version adds is listed in src/store/README.md (Schema versions) and in each step's
 * `description` below.
 *
 * Every step is idempotent (IF NOT EXISTS, INSERT OR IGNORE) so a crash between a step and its
 * persist, or two processes racing to upgrade, cannot break the file.
 */
import type { SqlDb } from '../db/sql';
import type { SqlValue } from 'sql.js';
import { newerFileRefusal, writeSchemaMark } from '../db/schema-mark';
import { NOTIFY_OUTBOX_TABLE, SCHEMA_V17_SQL } from '../repos/notify-repo';
import { CHECKS_TABLE, schemaV18Sql } from './check-schema';
import { SCHEDULE_RUNS_TABLE, SCHEDULES_TABLE, SCHEMA_V20_SQL } from './schedule-schema';

export const TASKS_TABLE = 'off_peak_tasks';
export const TICKETS_TABLE = 'off_peak_tickets';
export const LEASES_TABLE = 'off_peak_leases';
export const WINDOWS_TABLE = 'off_peak_windows';
export const HANDOFF_TABLE = 'off_peak_dispatch_requests';
export const DISPATCH_TABLE = 'off_peak_dispatch_backoff';
export const RUNTIME_TABLE = 'off_peak_task_runtime';
export const CHANGES_TABLE = 'off_peak_change_counters';
export const OUTCOMES_TABLE = 'off_peak_task_outcomes';
export const ASKS_TABLE = 'off_peak_pending_asks';
export const QUESTIONS_TABLE = 'off_peak_task_questions';
export const FOLLOW_UPS_TABLE = 'off_peak_follow_ups';
export const ISOLATION_TABLE = 'off_peak_task_isolation';
export const LATEST_SCHEMA_VERSION = 20;

/** What a change event names: each topic is one or more tables, counted by triggers (v3+). */
export type StoreTopic = 'tasks' | 'tickets' | 'windows' | 'dispatch' | 'runtime' | 'outcomes' | 'asks' | 'questions' | 'notify';
export const TOPIC_TABLES: Readonly<Record<StoreTopic, readonly string[]>> = {
  tasks: [TASKS_TABLE, FOLLOW_UPS_TABLE, ISOLATION_TABLE, CHECKS_TABLE, SCHEDULES_TABLE, SCHEDULE_RUNS_TABLE],
  tickets: [TICKETS_TABLE],
  windows: [WINDOWS_TABLE],
  dispatch: [HANDOFF_TABLE, DISPATCH_TABLE],
  runtime: [RUNTIME_TABLE],
  outcomes: [OUTCOMES_TABLE],
  asks: [ASKS_TABLE],
  questions: [QUESTIONS_TABLE],
  notify: [NOTIFY_OUTBOX_TABLE],
};
export const STORE_TOPICS = Object.keys(TOPIC_TABLES) as StoreTopic[];

/** The 30 columns of off_peak_tasks in their v1 order (8 groups). */
export const TASK_COLUMNS = [
  // identity and form
  'off_peak_task_id', 'title', 'prompt', 'permission_mode', 'model', 'thought_level',
  // workspace
  'workspace_key', 'workspace_path', 'workspace_identity',
  // session binding
  'conversation_id', 'session_id',
  // local execution
  'status', 'queued_at', 'started_at', 'ended_at', 'failure_reason', 'files_changed',
  // server snapshot
  'server_ticket_id', 'registered_at', 'schedulable', 'queue_position', 'next_poll_at',
  // lease and diagnostics
  'claim_running', 'claimed_at', 'attempt_count', 'last_error',
  // settle and History
  'settled_at', 'history_deleted_at',
  // audit
  'created_at', 'updated_at',
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

export const SCHEMA_V2_SQL = `
CREATE TABLE IF NOT EXISTS off_peak_tickets (
  ticket_id          TEXT PRIMARY KEY,
  task_id            TEXT NOT NULL,
  ordinal            INTEGER NOT NULL,
  origin             TEXT NOT NULL DEFAULT 'take',
  server_state       TEXT NOT NULL,
  queue_position     INTEGER,
  taken_at           INTEGER NOT NULL,
  ready_at           INTEGER,
  ready_deadline     INTEGER,
  active_at          INTEGER,
  expires_at         INTEGER,
  last_status_at     INTEGER,
  next_poll_at       INTEGER,
  segment_started_at INTEGER,
  segment_ended_at   INTEGER,
  end_reason         TEXT,
  last_error         TEXT,
  settle_state       TEXT NOT NULL DEFAULT 'none',
  settle_reason      TEXT,
  settle_attempts    INTEGER NOT NULL DEFAULT 0,
  next_settle_at     INTEGER,
  settled_at         INTEGER,
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_off_peak_tickets_task ON off_peak_tickets(task_id, ordinal);
-- queue order for list(): without it every listing sorts whole rows (prompts included) in a temp b-tree
CREATE INDEX IF NOT EXISTS idx_off_peak_tasks_queue ON off_peak_tasks(queued_at, off_peak_task_id);
CREATE INDEX IF NOT EXISTS idx_off_peak_tickets_settle ON off_peak_tickets(settle_state, next_settle_at);
CREATE TABLE IF NOT EXISTS off_peak_leases (
  name        TEXT PRIMARY KEY,
  holder      TEXT NOT NULL,
  token       TEXT NOT NULL,
  acquired_at INTEGER NOT NULL,
  renewed_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
);
`;

/**
 * Backfill (docs/flows.md#ticket-ledger): at most one row per task, its current server_ticket_id, marked
 * origin='legacy' and ordinal 0. Tickets overwritten before the upgrade cannot be recovered.
 * A terminal task whose settle was never acknowledged becomes a pending settle (the outbox);
 * an acknowledged one is settled; a live one stays 'none'. The server state is the best guess
 * the aggregate allows (a started task's ticket was last seen active); the next poll corrects it.
 */
const BACKFILL_V2_SQL = `
INSERT OR IGNORE INTO off_peak_tickets (
  ticket_id, task_id, ordinal, origin, server_state, queue_position, taken_at, next_poll_at,
  segment_started_at, segment_ended_at, end_reason, settle_state, settle_reason, next_settle_at,
  settled_at, created_at, updated_at)
SELECT
  server_ticket_id, off_peak_task_id, 0, 'legacy',
  CASE
    WHEN settled_at IS NOT NULL THEN 'settled'
    WHEN status IN ('running', 'awaiting') THEN 'active'
    WHEN status IN ('completed', 'failed', 'cancelled') AND started_at IS NOT NULL THEN 'active'
    WHEN schedulable = 1 THEN 'ready'
    ELSE 'queued'
  END,
  queue_position, COALESCE(registered_at, queued_at, created_at), next_poll_at,
  CASE WHEN status IN ('running', 'awaiting', 'completed', 'failed', 'cancelled') THEN started_at END,
  CASE WHEN status IN ('completed', 'failed', 'cancelled') THEN ended_at END,
  CASE WHEN status IN ('completed', 'failed', 'cancelled') THEN status END,
  CASE
    WHEN status NOT IN ('completed', 'failed', 'cancelled') THEN 'none'
    WHEN settled_at IS NOT NULL THEN 'settled'
    ELSE 'pending'
  END,
  CASE WHEN status IN ('completed', 'failed', 'cancelled') THEN status END,
  CASE WHEN status IN ('completed', 'failed', 'cancelled') AND settled_at IS NULL THEN ? END,
  settled_at, ?, ?
FROM off_peak_tasks
WHERE server_ticket_id IS NOT NULL AND server_ticket_id <> ''
`;

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

export const SCHEMA_V4_SQL = `
CREATE TABLE IF NOT EXISTS ${OUTCOMES_TABLE} (
  task_id     TEXT PRIMARY KEY,
  outcome     TEXT NOT NULL,
  notified_by TEXT,
  notified_at INTEGER,
  seen_at     INTEGER
);
-- A deleted task takes its outcome row along (the repositories of tasks need not know it).
CREATE TRIGGER IF NOT EXISTS ${OUTCOMES_TABLE}_follow_task_delete AFTER DELETE ON ${TASKS_TABLE}
  BEGIN DELETE FROM ${OUTCOMES_TABLE} WHERE task_id = OLD.off_peak_task_id; END;
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
CREATE TRIGGER IF NOT EXISTS ${ASKS_TABLE}_follow_task_delete AFTER DELETE ON ${TASKS_TABLE}
  BEGIN DELETE FROM ${ASKS_TABLE} WHERE task_id = OLD.off_peak_task_id; END;
`;

/**
 * v7: every permission question a task's agent asked, with its answer, who or what gave it and
 * when (the decision record, docs/flows.md#questions-park-the-task). `parked_at`: the task parked on
 * it; `input` is the tool call's whole input as shown, and `call_digest` names the call (tool and
 * input) so the resumed session's identical call is answered
 * from the stored decision (`used_at`, once); `stated_at`: the continuation prompt told the agent.
 */
export const SCHEMA_V7_SQL = `
CREATE TABLE IF NOT EXISTS ${QUESTIONS_TABLE} (
  ask_id       TEXT PRIMARY KEY,
  task_id      TEXT NOT NULL,
  tool         TEXT NOT NULL,
  summary      TEXT NOT NULL,
  input        TEXT NOT NULL DEFAULT '',
  call_digest  TEXT,
  asked_at     INTEGER NOT NULL,
  parked_at    INTEGER,
  decision     TEXT,
  answered_by  TEXT,
  answered_at  INTEGER,
  used_at      INTEGER,
  stated_at    INTEGER
);
CREATE INDEX IF NOT EXISTS idx_${QUESTIONS_TABLE}_task ON ${QUESTIONS_TABLE}(task_id, asked_at);
CREATE TRIGGER IF NOT EXISTS ${QUESTIONS_TABLE}_follow_task_delete AFTER DELETE ON ${TASKS_TABLE}
  BEGIN DELETE FROM ${QUESTIONS_TABLE} WHERE task_id = OLD.off_peak_task_id; END;
`;

export const SCHEMA_V8_SQL = `
CREATE TABLE IF NOT EXISTS ${FOLLOW_UPS_TABLE} (
  task_id      TEXT PRIMARY KEY,
  follow_up_of TEXT NOT NULL,
  of_title     TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  agent        TEXT NOT NULL,
  created_at   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS ${FOLLOW_UPS_TABLE}_session ON ${FOLLOW_UPS_TABLE} (session_id);
CREATE TRIGGER IF NOT EXISTS ${FOLLOW_UPS_TABLE}_follow_task_delete AFTER DELETE ON ${TASKS_TABLE}
  BEGIN DELETE FROM ${FOLLOW_UPS_TABLE} WHERE task_id = OLD.off_peak_task_id; END;
`;

/**
 * A question shows its whole input in every window, and an answer left for the asking window
 * names the input it was given for (docs/flows.md#what-a-question-shows). A row written before
 * has no input: an answer to it names the empty text and the asking window refuses it.
 */
export const SCHEMA_V6_COLUMNS: readonly [name: string, definition: string][] = [
  ['input', "TEXT NOT NULL DEFAULT ''"],
  ['answer_digest', 'TEXT'],
];
export const SCHEMA_V9_SQL = `
CREATE TABLE IF NOT EXISTS ${ISOLATION_TABLE} (
  task_id       TEXT PRIMARY KEY,
  mode          TEXT NOT NULL,
  repo_path     TEXT NOT NULL,
  worktree_path TEXT,
  branch        TEXT,
  base_commit   TEXT,
  note          TEXT,
  changes_json  TEXT,
  missing_at    INTEGER,
  brought_home    TEXT,
  brought_home_at INTEGER,
  created_at    INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS ${ISOLATION_TABLE}_worktree ON ${ISOLATION_TABLE} (worktree_path);
`;

/** Results that finished before v4 were seen by whoever ran them: no late toast, no badge. */
const BACKFILL_V4_SQL = `
INSERT OR IGNORE INTO ${OUTCOMES_TABLE} (task_id, outcome, notified_by, notified_at, seen_at)
SELECT off_peak_task_id, status, 'before-v4', ?, ? FROM ${TASKS_TABLE} WHERE status IN ('completed', 'failed')
`;

/** v5: columns added to the ledger (name, SQL type). */
const LEDGER_COLUMNS_V5: readonly (readonly [string, string])[] = [
  ['gateway_unreachable_since', 'INTEGER'],
  ['usage_model', 'TEXT'],
  ['usage_input_tokens', 'INTEGER'],
  ['usage_output_tokens', 'INTEGER'],
  ['usage_cache_read_tokens', 'INTEGER'],
  ['usage_cache_write_tokens', 'INTEGER'],
  ['usage_requests', 'INTEGER'],
];

/** ALTER TABLE … ADD COLUMN has no IF NOT EXISTS: add only the columns the table lacks (idempotent). */
function addMissingColumns(db: SqlDb, table: string, columns: readonly (readonly [string, string])[]): void {
  const have = new Set(db.all(`PRAGMA table_info(${table})`).map((row) => String(row.name)));
  for (const [name, type] of columns) if (!have.has(name)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${type}`);
}

/**
 * One counter bump per statement kind and table: a reload compares counters to say what changed.
 * Only tables that exist get triggers: a step runs this again once it has created its tables.
 */
/** Counting triggers for the topic tables that exist now: call it after the step's tables are made. */
function changeTriggersSql(db: SqlDb): string {
  const parts: string[] = [];
  for (const topic of STORE_TOPICS) {
    parts.push(`INSERT OR IGNORE INTO ${CHANGES_TABLE} (topic, counter) VALUES ('${topic}', 0);`);
    for (const table of TOPIC_TABLES[topic]) {
      if (!tableExists(db, table)) continue;
      for (const op of ['INSERT', 'UPDATE', 'DELETE']) {
        parts.push(`CREATE TRIGGER IF NOT EXISTS ${table}_${op.toLowerCase()}_counts AFTER ${op} ON ${table}
          BEGIN UPDATE ${CHANGES_TABLE} SET counter = counter + 1 WHERE topic = '${topic}'; END;`);
      }
    }
  }
  return parts.join('\n');
}

export interface MigrationStep {
  version: number;
  description: string;
  up(db: SqlDb, now: number): void;
}

export const MIGRATIONS: readonly MigrationStep[] = [
  { version: 1, description: 'off_peak_tasks aggregate', up: (db) => db.exec(SCHEMA_V1_SQL) },
  {
    version: 2,
    description: 'off_peak_tickets ledger + off_peak_leases; backfill current tickets as legacy rows',
    up: (db, now) => {
      db.exec(SCHEMA_V2_SQL);
      db.run(BACKFILL_V2_SQL, [now, now, now]);
    },
  },
  {
    version: 3,
    description: 'window registry, hand-off requests, dispatch backoff, runtime records, change counters; lease leaves the DB',
    up: (db) => {
      db.exec(SCHEMA_V3_SQL);
      db.exec(changeTriggersSql(db));
    },
  },
  {
    version: 4,
    description: 'task outcomes (notification claimed once across windows, seen by the panel); pending asks shared by all windows',
    up: (db, now) => {
      db.exec(SCHEMA_V4_SQL);
      db.exec(changeTriggersSql(db));
      db.run(BACKFILL_V4_SQL, [now, now]);
    },
  },
  { version: 5, description: 'ledger: since when the segment cannot reach the gateway; the tokens its model answers used', up: (db) => addMissingColumns(db, TICKETS_TABLE, LEDGER_COLUMNS_V5) },
  { version: 6, description: "pending asks carry the tool call's whole input and the digest of the input an answer was given for", up: (db) => addMissingColumns(db, ASKS_TABLE, SCHEMA_V6_COLUMNS) },
  {
    version: 7,
    description: 'the decision record: every permission question of a task with its answer, who answered and when; a parked question waits here',
    up: (db) => {
      db.exec(SCHEMA_V7_SQL);
      db.exec(changeTriggersSql(db));
    },
  },
  { version: 8, description: 'follow-up tasks: the finished task each continues and the session it resumes', up: (db) => void [db.exec(SCHEMA_V8_SQL), db.exec(changeTriggersSql(db))] },
  { version: 9, description: 'task isolation: own branch in a git worktree or in place; worktree path, branch, base commit, changed files', up: (db) => void [db.exec(SCHEMA_V9_SQL), db.exec(changeTriggersSql(db))] },
  { version: 12, description: "ledger: until when the account's usage limit holds the segment (docs/flows.md#usage-limits)", up: (db) => addMissingColumns(db, TICKETS_TABLE, [['usage_limit_reset_at', 'INTEGER']]) },
  // Before v13 a deleted task's tickets stayed for good; now they go once settled (docs/flows.md#ticket-ledger).
  { version: 13, description: 'ledger: the settled tickets of tasks deleted before', up: (db) => void db.run(`DELETE FROM ${TICKETS_TABLE} WHERE settle_state IN ('settled', 'abandoned') AND task_id NOT IN (SELECT off_peak_task_id FROM ${TASKS_TABLE})`) },
  { version: 14, description: 'the "readable by" mark: the oldest schema version whose builds still use this file (src/store/db/schema-mark.ts)', up: writeSchemaMark },
  { version: 15, description: 'conversation_id: the session id the Session entry opens, for tasks that started before it was written', up: (db) => void db.run(`UPDATE ${TASKS_TABLE} SET conversation_id = session_id WHERE conversation_id IS NULL AND session_id IS NOT NULL`) },
  { version: 16, description: 'not before: the time a task takes its ticket at, no earlier (docs/flows.md#schedules-and-chains)', up: (db) => addMissingColumns(db, TASKS_TABLE, [['not_before', 'INTEGER']]) },
  { version: 17, description: 'the away notifications\' outbox (docs/flows.md#away-notifications) and its `notify` change topic', up: (db) => {
    db.exec(SCHEMA_V17_SQL);
    db.exec(changeTriggersSql(db));
  } },
  { version: 18, description: 'checks: the command the user typed for a task, its rounds and last output; the last command used per folder', up: (db) => void [db.exec(schemaV18Sql(TASKS_TABLE)), db.exec(changeTriggersSql(db))] },
  { version: 19, description: 'after <task>: the task a task waits for, its title then, and whether it continues in its branch (docs/flows.md#schedules-and-chains)', up: (db) => addMissingColumns(db, TASKS_TABLE, [['after_task_id', 'TEXT'], ['after_title', 'TEXT'], ['continue_in_branch', 'INTEGER']]) },
  { version: 20, description: 'repeating schedules and their runs, one row per occurrence key (docs/flows.md#schedules-and-chains)', up: (db) => void [db.exec(SCHEMA_V20_SQL), db.exec(changeTriggersSql(db))] },
];

/** The change counters of a DB (all zero before v3). */
export function zeroCounters(): Record<StoreTopic, number> {
  return Object.fromEntries(STORE_TOPICS.map((t) => [t, 0])) as Record<StoreTopic, number>;
}

export function changeCounters(db: SqlDb): Record<StoreTopic, number> {
  const counters = zeroCounters();
  let rows: SqlValue[][];
  try {
    // Run on every write: one statement prepared once (a missing table is the rare case).
    rows = db.cachedAll(`SELECT topic, counter FROM ${CHANGES_TABLE}`);
  } catch (err) {
    if (!tableExists(db, CHANGES_TABLE)) return counters;
    throw err;
  }
  for (const [topic, counter] of rows) {
    if (String(topic) in counters) counters[topic as StoreTopic] = Number(counter);
  }
  return counters;
}

/** Topics whose counter differs between two readings. */
export function changedTopics(before: Record<StoreTopic, number>, after: Record<StoreTopic, number>): Set<StoreTopic> {
  return new Set(STORE_TOPICS.filter((t) => before[t] !== after[t]));
}

export function tableExists(db: SqlDb, name: string): boolean {
  return db.get("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?", [name]) !== undefined;
}

/** The schema version of a DB; an unversioned file that has the aggregate counts as v1. */
export function schemaVersionOf(db: SqlDb): number {
  const v = Number(db.scalar('PRAGMA user_version') ?? 0);
  if (v === 0 && tableExists(db, TASKS_TABLE)) return 1;
  return v;
}

export interface MigrationReport {
  fromVersion: number;
  toVersion: number;
  /** Rows whose legacy `awaiting` status was rewritten to `running`. */
  awaitingMigrated: number;
  /** Ledger rows created by the v1->v2 backfill. */
  ticketsBackfilled: number;
}

export class NewerSchemaError extends Error {
  constructor(readonly found: number, message: string) {
    super(message);
    this.name = 'NewerSchemaError';
  }
}

/**
 * Brings a DB to LATEST_SCHEMA_VERSION (a newer one this build may read stays as it is) and
 * applies open-time data fixes. Runs inside the caller's transaction (lock, one persist).
 */
export function migrate(db: SqlDb, now: number): MigrationReport {
  const fromVersion = schemaVersionOf(db);
  // A newer file is used as it is when its mark says this build reads it; it is never migrated down.
  const refusal = fromVersion > LATEST_SCHEMA_VERSION ? newerFileRefusal(db, fromVersion, LATEST_SCHEMA_VERSION) : undefined;
  if (refusal) throw new NewerSchemaError(fromVersion, refusal);
  const toVersion = Math.max(fromVersion, LATEST_SCHEMA_VERSION);
  let ticketsBackfilled = 0;
  for (const step of MIGRATIONS) {
    if (step.version <= fromVersion) continue;
    step.up(db, now);
    if (step.version === 2) ticketsBackfilled = Number(db.scalar(`SELECT COUNT(*) FROM ${TICKETS_TABLE} WHERE origin = 'legacy'`));
  }
  if (Number(db.scalar('PRAGMA user_version')) !== toVersion) db.exec(`PRAGMA user_version = ${toVersion}`);
  // `awaiting` is a reserved legacy value; such rows are running tasks (docs/flows.md#task-states).
  const awaitingMigrated = db.run(`UPDATE ${TASKS_TABLE} SET status = 'running', updated_at = ? WHERE status = 'awaiting'`, [now]);
  return { fromVersion, toVersion, awaitingMigrated, ticketsBackfilled };
}
