/**
 * The schema versions of tasks-index.sqlite (PRAGMA user_version) in order, and the runner that
 * brings a file to the latest one. Each version is one file, `vNN-<what>.ts`, exporting its step;
 * what each adds is listed in src/store/README.md (Schema versions) and in its `description`.
 * A new version is a new file and one more entry in MIGRATIONS.
 */
import { tableExists, type SqlDb } from '../db/sql';
import { newerFileRefusal } from '../db/schema-mark';
import type { MigrationStep } from './migration-step';
import { TASKS_TABLE, TICKETS_TABLE } from './tables';
import { v01 } from './v01-tasks';
import { v02 } from './v02-tickets';
import { v03 } from './v03-windows-and-counters';
import { v04 } from './v04-outcomes-and-asks';
import { v05 } from './v05-ledger-usage';
import { v06 } from './v06-ask-input';
import { v07 } from './v07-questions';
import { v08 } from './v08-follow-ups';
import { v09 } from './v09-isolation';
import { v12 } from './v12-usage-limit';
import { v13 } from './v13-prune-tickets';
import { v14 } from './v14-schema-mark';
import { v15 } from './v15-conversation-id';
import { v16 } from './v16-not-before';
import { v17 } from './v17-notify-outbox';
import { v18 } from './v18-checks';
import { v19 } from './v19-after-task';
import { v20 } from './v20-schedules';
import { v21 } from './v21-check-flag';
import { v22 } from './v22-pull-requests';
import { v23 } from './v23-spend';
import { v24 } from './v24-pull-request-wait';

export type { MigrationStep } from './migration-step';

/** Every step in version order (there are no versions 10 and 11: v12-usage-limit.ts says why). */
export const MIGRATIONS: readonly MigrationStep[] = [
  v01,
  v02,
  v03,
  v04,
  v05,
  v06,
  v07,
  v08,
  v09,
  v12,
  v13,
  v14,
  v15,
  v16,
  v17,
  v18,
  v19,
  v20,
  v21,
  v22,
  v23,
  v24,
];

/** The version this build writes: the last step's. */
export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

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
  constructor(
    readonly found: number,
    message: string,
  ) {
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
