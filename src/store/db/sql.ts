/**
 * A thin typed layer over a sql.js Database. Statements are prepared, used and freed in one call,
 * except the few fixed ones every write runs (`cachedAll`, `writeStamp`): those are prepared once
 * per Database. sql.js (>= 1.17) exports through SQLite's backup API, which leaves the database
 * and its statements open; a reload makes a new Database (and SqlDb), and close() frees them.
 */
import type { Database, SqlValue, Statement } from 'sql.js';

export type SqlParam = string | number | null | Uint8Array;
export type SqlRow = Record<string, SqlValue>;

const WRITE_STAMP_SQL =
  'SELECT total_changes(), (SELECT schema_version FROM pragma_schema_version), (SELECT user_version FROM pragma_user_version)';

export class SqlDb {
  /** Fixed SQL of the write path, prepared once for this Database. */
  private readonly prepared = new Map<string, Statement>();

  constructor(readonly raw: Database) {}

  /**
   * `all` for a fixed, parameterless statement run on every write: prepared once and reused. A
   * statement that fails (e.g. its table is gone) is dropped from the cache and the error thrown.
   */
  cachedAll(sql: string): SqlValue[][] {
    let stmt = this.prepared.get(sql);
    if (!stmt) {
      stmt = this.raw.prepare(sql);
      this.prepared.set(sql, stmt);
    }
    const rows: SqlValue[][] = [];
    try {
      while (stmt.step()) rows.push(stmt.get());
    } catch (err) {
      this.prepared.delete(sql);
      stmt.free();
      throw err;
    }
    stmt.reset();
    return rows;
  }

  /** Runs a statement; returns the number of rows it changed. */
  run(sql: string, params: readonly SqlParam[] = []): number {
    const stmt = this.raw.prepare(sql);
    try {
      stmt.run(params as SqlParam[]);
    } finally {
      stmt.free();
    }
    return this.raw.getRowsModified();
  }

  /** First row of a query, or undefined. */
  get(sql: string, params: readonly SqlParam[] = []): SqlRow | undefined {
    const stmt = this.raw.prepare(sql);
    try {
      stmt.bind(params as SqlParam[]);
      return stmt.step() ? stmt.getAsObject() : undefined;
    } finally {
      stmt.free();
    }
  }

  all(sql: string, params: readonly SqlParam[] = []): SqlRow[] {
    const stmt = this.raw.prepare(sql);
    const rows: SqlRow[] = [];
    try {
      stmt.bind(params as SqlParam[]);
      // getAsObject() re-reads the column names for every row; read them once.
      const names = stmt.getColumnNames();
      while (stmt.step()) {
        const values = stmt.get();
        const row: SqlRow = {};
        for (let i = 0; i < names.length; i++) row[names[i]] = values[i];
        rows.push(row);
      }
    } finally {
      stmt.free();
    }
    return rows;
  }

  /** One column of the first row. */
  scalar(sql: string, params: readonly SqlParam[] = []): SqlValue | undefined {
    const stmt = this.raw.prepare(sql);
    try {
      stmt.bind(params as SqlParam[]);
      return stmt.step() ? stmt.get()[0] : undefined;
    } finally {
      stmt.free();
    }
  }

  exec(sql: string): void {
    this.raw.exec(sql);
  }

  /** SQLite's count of rows changed since the connection opened. */
  totalChanges(): number {
    return Number(this.scalar('SELECT total_changes()'));
  }

  /**
   * Changes whenever a transaction wrote anything: rows (total_changes), the schema (DDL bumps
   * schema_version) or user_version. Row counts alone would miss a DDL-only migration.
   */
  writeStamp(): string {
    return this.cachedAll(WRITE_STAMP_SQL)[0].join(':');
  }
}

export function tableExists(db: SqlDb, name: string): boolean {
  return db.get("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?", [name]) !== undefined;
}

/** `?, ?, ?` for an IN list. */
export function placeholders(n: number): string {
  return new Array(n).fill('?').join(', ');
}

/**
 * `column = ?` assignments for the fields of a partial update that are given; a field left
 * undefined keeps its column as it is (null is a value: it clears the column).
 */
export function assignmentsOf<P extends object>(
  patch: P,
  columns: { readonly [K in keyof P]?: string },
): { sets: string[]; params: SqlParam[] } {
  const sets: string[] = [];
  const params: SqlParam[] = [];
  for (const field of Object.keys(columns) as (keyof P)[]) {
    const value = patch[field];
    if (value === undefined) continue;
    sets.push(`${columns[field]} = ?`);
    params.push(value as SqlParam);
  }
  return { sets, params };
}

/** A list query: `SELECT *` with the given conditions (ANDed), order and optional limit. */
export function listQuery(
  table: string,
  where: readonly string[],
  params: readonly SqlParam[],
  orderBy: string,
  limit?: number,
): [string, SqlParam[]] {
  let sql = `SELECT * FROM ${table}`;
  if (where.length > 0) sql += ` WHERE ${where.join(' AND ')}`;
  sql += ` ORDER BY ${orderBy}`;
  if (limit === undefined) return [sql, [...params]];
  return [`${sql} LIMIT ?`, [...params, Math.max(0, Math.floor(limit))]];
}
