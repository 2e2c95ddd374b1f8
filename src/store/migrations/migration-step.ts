/** What one schema version's file exports, and the builders and helpers the steps share. */
import type { SqlDb } from '../db/sql';
import { changeTriggersSql } from './change-counters';
import { TASKS_TABLE } from './tables';

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

/**
 * A version that creates tables: its DDL, then the change triggers again, so that the new tables
 * bump their change topics. `after`: what it does once they exist (a backfill).
 */
export function tablesStep(version: number, description: string, sql: string, after?: (db: SqlDb, now: number) => void): MigrationStep {
  return {
    version,
    description,
    up: (db, now) => {
      db.exec(sql);
      db.exec(changeTriggersSql(db));
      after?.(db, now);
    },
  };
}

/** A version that only adds columns to one table (name, SQL type). */
export function columnsStep(
  version: number,
  description: string,
  table: string,
  columns: readonly (readonly [string, string])[],
): MigrationStep {
  return { version, description, up: (db) => addMissingColumns(db, table, columns) };
}

/** ALTER TABLE … ADD COLUMN has no IF NOT EXISTS: add only the columns the table lacks (idempotent). */
export function addMissingColumns(db: SqlDb, table: string, columns: readonly (readonly [string, string])[]): void {
  const have = new Set(db.all(`PRAGMA table_info(${table})`).map((row) => String(row.name)));
  for (const [name, type] of columns) if (!have.has(name)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${type}`);
}

/**
 * The trigger that deletes a per-task table's rows with their task (the repositories of tasks need
 * not know it). `name`: the trigger's name, part of the schema (v18's differs).
 */
export function followTaskDeleteSql(table: string, name = `${table}_follow_task_delete`): string {
  return `CREATE TRIGGER IF NOT EXISTS ${name} AFTER DELETE ON ${TASKS_TABLE}
  BEGIN DELETE FROM ${table} WHERE task_id = OLD.off_peak_task_id; END;`;
}
