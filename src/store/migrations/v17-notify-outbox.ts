/**
 * v17: the away notifications' outbox (`off_peak_notify_outbox`, read and written by
 * src/store/repos/notify-repo.ts; docs/flows.md#away-notifications) and its `notify` change topic.
 */
import { tablesStep } from './migration-step';
import { NOTIFY_OUTBOX_TABLE } from './tables';

export const SCHEMA_V17_SQL = `
CREATE TABLE IF NOT EXISTS ${NOTIFY_OUTBOX_TABLE} (
  event_key       TEXT PRIMARY KEY,
  event           TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  state           TEXT NOT NULL DEFAULT 'pending',
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  held_until      INTEGER,
  done_at         INTEGER,
  done_by         TEXT,
  last_error      TEXT
);
CREATE INDEX IF NOT EXISTS ${NOTIFY_OUTBOX_TABLE}_pending ON ${NOTIFY_OUTBOX_TABLE} (state, next_attempt_at);
`;

export const v17 = tablesStep(
  17,
  "the away notifications' outbox (docs/flows.md#away-notifications) and its `notify` change topic",
  SCHEMA_V17_SQL,
);
