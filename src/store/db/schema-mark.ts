/**
 * The "readable by" mark of tasks-index.sqlite (docs/flows.md#task-database-versions): besides its
 * schema version (PRAGMA user_version), the file says the oldest schema version whose builds still
 * read and write it correctly, and the first release of the extension with that version. A build
 * opens a file of a newer version when the mark says it is readable by its own (every change since
 * was additive: new tables, new nullable columns) and refuses it, naming that release, otherwise.
 */
import type { SqlDb } from './sql';

export const SCHEMA_MARK_TABLE = 'off_peak_schema_mark';

/**
 * What this build's schema needs of a reader. Raise both together only for a breaking change (a
 * column renamed, dropped or given new meaning, a row an older build would misread); an additive
 * step keeps them.
 */
export const READABLE_BY: Readonly<{ version: number; release: string }> = { version: 13, release: '0.1.0' };

export const SCHEMA_MARK_SQL = `
CREATE TABLE IF NOT EXISTS ${SCHEMA_MARK_TABLE} (
  id                  INTEGER PRIMARY KEY CHECK (id = 1),
  readable_by         INTEGER NOT NULL,
  readable_by_release TEXT NOT NULL
);
`;

export interface SchemaMark {
  readableBy: number;
  release: string;
}

/** The file's mark; undefined for a file written before marks (v13 and older) or by a build that wrote none. */
export function readSchemaMark(db: SqlDb): SchemaMark | undefined {
  const exists = db.get("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?", [SCHEMA_MARK_TABLE]);
  if (!exists) return undefined;
  const row = db.get(`SELECT readable_by, readable_by_release FROM ${SCHEMA_MARK_TABLE} WHERE id = 1`);
  if (!row) return undefined;
  return { readableBy: Number(row.readable_by), release: String(row.readable_by_release) };
}

/** Writes this build's mark (it migrated the file to its own version, or found it unmarked at it). */
export function writeSchemaMark(db: SqlDb): void {
  db.exec(SCHEMA_MARK_SQL);
  const current = readSchemaMark(db);
  if (current?.readableBy === READABLE_BY.version && current.release === READABLE_BY.release) return;
  db.run(`INSERT OR REPLACE INTO ${SCHEMA_MARK_TABLE} (id, readable_by, readable_by_release) VALUES (1, ?, ?)`, [
    READABLE_BY.version,
    READABLE_BY.release,
  ]);
}

/**
 * Whether a build of schema `ownVersion` may use a file of schema `fileVersion` > ownVersion: the
 * refusal's words when not (undefined: it may).
 */
export function newerFileRefusal(db: SqlDb, fileVersion: number, ownVersion: number): string | undefined {
  const mark = readSchemaMark(db);
  if (mark && mark.readableBy <= ownVersion) return undefined;
  const needs = mark ? `it needs Off-Peak Tasks ${mark.release} or later (schema ${mark.readableBy})` : 'it needs a newer Off-Peak Tasks';
  return `tasks-index.sqlite has schema version ${fileVersion}, newer than this build understands (${ownVersion}): ${needs}; update the extension`;
}
