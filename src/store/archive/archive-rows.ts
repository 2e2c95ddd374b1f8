/**
 * A task's rows in every per-task table, read, written and deleted as one unit: what the history
 * archive moves between the task DB and the archive file (docs/flows.md#archive). The per-task
 * tables are found from the schema itself (the task table, and every table with a `task_id`
 * column), so a table a later migration adds moves along without a change here.
 */
import { CHANGES_TABLE, TASKS_TABLE } from '../migrations/tables';
import { placeholders, type SqlDb, type SqlParam, type SqlRow } from '../db/sql';

/** One per-task table: its name, the column naming the task, and its columns (name, declared type, primary key order). */
export interface PerTaskTable {
  table: string;
  taskColumn: string;
  columns: { name: string; type: string; pk: number }[];
}

/** A task's rows, by table (tables where it has none are absent). */
export type TaskRows = Record<string, SqlRow[]>;

/** The per-task tables of a DB, the task table first. */
export function perTaskTables(db: SqlDb): PerTaskTable[] {
  const names = db
    .all("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .map((r) => String(r.name))
    .filter((name) => name !== CHANGES_TABLE);
  const tables: PerTaskTable[] = [];
  for (const table of names) {
    const columns = db
      .all(`PRAGMA table_info(${table})`)
      .map((c) => ({ name: String(c.name), type: String(c.type ?? ''), pk: Number(c.pk ?? 0) }));
    const taskColumn = table === TASKS_TABLE ? 'off_peak_task_id' : columns.some((c) => c.name === 'task_id') ? 'task_id' : undefined;
    if (taskColumn) tables.push({ table, taskColumn, columns });
  }
  return tables.sort((a, b) => (a.table === TASKS_TABLE ? -1 : b.table === TASKS_TABLE ? 1 : 0));
}

const CHUNK = 500;

function chunks<T>(list: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += CHUNK) out.push(list.slice(i, i + CHUNK));
  return out;
}

/** The rows of each task in `taskIds` (a task with no row anywhere is absent), in a stable order. */
export function readTaskRows(db: SqlDb, tables: readonly PerTaskTable[], taskIds: readonly string[]): Map<string, TaskRows> {
  const byTask = new Map<string, TaskRows>();
  for (const { table, taskColumn } of tables) {
    for (const ids of chunks(taskIds)) {
      const rows = db.all(`SELECT * FROM ${table} WHERE ${taskColumn} IN (${placeholders(ids.length)}) ORDER BY rowid`, ids);
      for (const row of rows) {
        const id = String(row[taskColumn]);
        const rowsOf = byTask.get(id) ?? {};
        (rowsOf[table] ??= []).push(row);
        byTask.set(id, rowsOf);
      }
    }
  }
  return byTask;
}

/**
 * Writes a task's rows (INSERT OR REPLACE: writing the same rows twice leaves one copy), after
 * deleting what the DB held for it, so the copy equals `rows` exactly. Only the columns both sides
 * have are written; a table `db` lacks is skipped (`tables` are `db`'s own).
 */
export function writeTaskRows(db: SqlDb, tables: readonly PerTaskTable[], taskId: string, rows: TaskRows): void {
  deleteTaskRows(db, tables, [taskId]);
  for (const { table, columns } of tables) {
    const list = rows[table];
    if (!list || list.length === 0) continue;
    const have = new Set(columns.map((c) => c.name));
    const names = Object.keys(list[0]).filter((n) => have.has(n));
    const sql = `INSERT OR REPLACE INTO ${table} (${names.join(', ')}) VALUES (${placeholders(names.length)})`;
    for (const row of list)
      db.run(
        sql,
        names.map((n) => (row[n] ?? null) as SqlParam),
      );
  }
}

/** Deletes every row of these tasks from every per-task table; returns how many task rows went. */
export function deleteTaskRows(db: SqlDb, tables: readonly PerTaskTable[], taskIds: readonly string[]): number {
  let tasks = 0;
  for (const { table, taskColumn } of tables) {
    for (const ids of chunks(taskIds)) {
      const n = db.run(`DELETE FROM ${table} WHERE ${taskColumn} IN (${placeholders(ids.length)})`, ids);
      if (table === TASKS_TABLE) tasks += n;
    }
  }
  return tasks;
}

/** Same rows, same values (what a copy is compared by before the other copy goes). */
export function sameRows(a: TaskRows | undefined, b: TaskRows | undefined): boolean {
  return JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});
}
