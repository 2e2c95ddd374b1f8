/**
 * v2: the ticket ledger and settle outbox (`off_peak_tickets`, no cascade from tasks), backfilled
 * from each task's current ticket; and `off_peak_leases`, which v3 drops again.
 */
import type { MigrationStep } from './migration-step';

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

export const v02: MigrationStep = {
  version: 2,
  description: 'off_peak_tickets ledger + off_peak_leases; backfill current tickets as legacy rows',
  up: (db, now) => {
    db.exec(SCHEMA_V2_SQL);
    db.run(BACKFILL_V2_SQL, [now, now, now]);
  },
};
