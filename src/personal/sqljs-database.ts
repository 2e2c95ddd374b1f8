// The part of better-sqlite3's API the gateway's SQLite ticket store uses (prepare/run/get/all,
// exec, pragma, transaction), over sql.js and one file on disk. The extension ships sql.js (no
// native module), so the local authority of personal mode (docs/architecture.md#personal-mode)
// keeps the reference gateway's own SQLite store and schema on it. sql.js works in memory: every
// committed write (a statement outside a transaction, or a COMMIT) exports the database and
// replaces the file atomically (temp file, fsync, rename), so a window that takes the authority
// over reads every ticket the previous one wrote. One process at a time uses the file: the
// authority's lock file decides which.
import fs from 'node:fs';
import type { Database as SqlJsDatabase, SqlValue } from 'sql.js';
import { writeFileAtomic } from '../files/file-replace';
import { loadSqlJs } from '../store/db/sqljs';

type Param = string | number | bigint | null | boolean | Buffer | Uint8Array;

function bindable(params: readonly Param[]): SqlValue[] {
  return params.map((p) => (typeof p === 'bigint' ? Number(p) : typeof p === 'boolean' ? (p ? 1 : 0) : (p as SqlValue)));
}

/** One SQL text; prepared at each call (sql.js frees every prepared statement when it exports). */
export class SqlJsStatement {
  constructor(
    private readonly owner: SqlJsFileDatabase,
    readonly source: string,
  ) {}

  run(...params: Param[]): { changes: number; lastInsertRowid: number } {
    return this.owner.runStatement(this.source, bindable(params));
  }

  get(...params: Param[]): unknown {
    return this.owner.rows(this.source, bindable(params), 1)[0];
  }

  all(...params: Param[]): unknown[] {
    return this.owner.rows(this.source, bindable(params), Infinity);
  }
}

export interface SqlJsFileDatabaseOptions {
  /** fsync each write (default true; tests and benches may trade it for speed). */
  durable?: boolean;
  wasmPath?: string;
}

export class SqlJsFileDatabase {
  private closed = false;
  private transactionDepth = 0;
  private dirty = false;

  private constructor(
    private readonly db: SqlJsDatabase,
    readonly file: string,
    private readonly durable: boolean,
  ) {}

  /** Opens (or creates) `file`. A file that is not a database is an error, never overwritten. */
  static async open(file: string, options: SqlJsFileDatabaseOptions = {}): Promise<SqlJsFileDatabase> {
    const SQL = await loadSqlJs(options.wasmPath);
    let bytes: Uint8Array | undefined;
    try {
      bytes = fs.readFileSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const db = bytes && bytes.length > 0 ? new SQL.Database(bytes) : new SQL.Database();
    db.exec('SELECT count(*) FROM sqlite_master'); // a file that is not SQLite fails here, untouched
    return new SqlJsFileDatabase(db, file, options.durable ?? true);
  }

  get open(): boolean {
    return !this.closed;
  }

  get inTransaction(): boolean {
    return this.transactionDepth > 0;
  }

  prepare(source: string): SqlJsStatement {
    return new SqlJsStatement(this, source);
  }

  /** Runs SQL text (several statements allowed); BEGIN, COMMIT and ROLLBACK are followed. */
  exec(source: string): this {
    const verb = /^\s*(BEGIN|COMMIT|END|ROLLBACK)\b/i.exec(source)?.[1]?.toUpperCase();
    this.db.exec(source);
    if (verb === 'BEGIN') {
      this.transactionDepth = 1;
      return this;
    }
    if (verb === 'ROLLBACK') {
      this.transactionDepth = 0;
      this.dirty = false;
      return this;
    }
    if (verb === 'COMMIT' || verb === 'END') this.transactionDepth = 0;
    this.dirty = true;
    this.persistIfCommitted();
    return this;
  }

  /** `pragma('user_version', { simple: true })` reads one value; other pragmas run (sql.js keeps no WAL or lock modes). */
  pragma(source: string, options: { simple?: boolean } = {}): unknown {
    if (/=/.test(source)) {
      if (/^\s*user_version\s*=/i.test(source)) this.exec(`PRAGMA ${source}`);
      return undefined;
    }
    const rows = this.rows(`PRAGMA ${source}`, [], Infinity) as Record<string, unknown>[];
    return options.simple ? (rows[0] ? Object.values(rows[0])[0] : undefined) : rows;
  }

  /** better-sqlite3's `transaction(fn)`: the returned function runs `fn` in BEGIN … COMMIT. */
  transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
    return (...args: A) => {
      this.exec('BEGIN');
      try {
        const result = fn(...args);
        this.exec('COMMIT');
        return result;
      } catch (error) {
        if (this.inTransaction) this.exec('ROLLBACK');
        throw error;
      }
    };
  }

  runStatement(source: string, params: SqlValue[]): { changes: number; lastInsertRowid: number } {
    const statement = this.db.prepare(source);
    try {
      statement.run(params);
    } finally {
      statement.free();
    }
    const changes = this.db.getRowsModified();
    const rowid = this.db.exec('SELECT last_insert_rowid()')[0]?.values[0]?.[0];
    if (changes > 0) {
      this.dirty = true;
      this.persistIfCommitted();
    }
    return { changes, lastInsertRowid: Number(rowid ?? 0) };
  }

  rows(source: string, params: SqlValue[], limit: number): unknown[] {
    const statement = this.db.prepare(source);
    const out: unknown[] = [];
    try {
      statement.bind(params);
      while (out.length < limit && statement.step()) out.push(statement.getAsObject());
    } finally {
      statement.free();
    }
    return out;
  }

  private persistIfCommitted(): void {
    if (this.transactionDepth > 0 || !this.dirty) return;
    this.dirty = false;
    writeFileAtomic(this.file, this.db.export(), { durable: this.durable });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }
}
