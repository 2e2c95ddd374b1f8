/** What one schema version's file exports, and the helpers the steps share. */
import type { SqlDb } from '../db/sql';

/**
 * One schema version: `up` brings a DB of the version before to this one. Every step is idempotent
 * (IF NOT EXISTS, INSERT OR IGNORE, only the missing columns) so a crash between a step and its
 * persist, or two processes racing to upgrade, cannot break the file.
 */
export interface MigrationStep {
  version: number;
  description: string;
  up(db: SqlDb, now: number): void;
}

/** ALTER TABLE … ADD COLUMN has no IF NOT EXISTS: add only the columns the table lacks (idempotent). */
export function addMissingColumns(db: SqlDb, table: string, columns: readonly (readonly [string, string])[]): void {
  const have = new Set(db.all(`PRAGMA table_info(${table})`).map((row) => String(row.name)));
  for (const [name, type] of columns) if (!have.has(name)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${type}`);
}

export function tableExists(db: SqlDb, name: string): boolean {
  return db.get("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?", [name]) !== undefined;
}
