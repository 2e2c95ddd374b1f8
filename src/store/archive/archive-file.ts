/**
 * The history archive file, `tasks-archive.sqlite`, beside the task DB (docs/flows.md#archive): a
 * sql.js database holding finished tasks moved out of the task DB with every per-task row of
 * theirs. Unlike the task DB it is not loaded at start: it is read when someone asks (History
 * beyond the live rows, a filter, an action on an archived task) and written when archiving (by
 * the lease holder) or when an archived task leaves it (restored, deleted).
 *
 * Writes: its own file lock (`tasks-archive.sqlite.lock`), reload when another process wrote,
 * ONE transaction, export, the next generation stamped, temp file + fdatasync (both without
 * holding the event loop) + rename + directory fsync.
 * Its tables mirror the task DB's per-task tables (archive-rows.ts): a column the task DB gained
 * is added before rows are written. Its own version is PRAGMA user_version (ARCHIVE_SCHEMA_VERSION).
 * A file that does not read as SQLite is left as it is and refused (`UNREADABLE`): nothing more
 * is archived until it is looked at, and the task DB keeps every task.
 */
import * as fs from 'node:fs';
import path from 'node:path';
import type { Database, SqlJsStatic } from 'sql.js';
import { deleteTaskRows, perTaskTables, readTaskRows, writeTaskRows, type PerTaskTable, type TaskRows } from './archive-rows';
import { counterOfBytes, generationOfBytes, MISSING, readGeneration, stampGeneration, type Generation, type StoreFs } from '../db/db-file';
import { fsyncDirectory, renameReplacing, tempPathFor } from '../../files/file-replace';
import { StoreError } from '../errors';
import { FileLock, type FileLockOptions } from '../db/file-lock';
import { loadSqlJs } from '../db/sqljs';
import { SqlDb } from '../db/sql';

export const ARCHIVE_FILE_NAME = 'tasks-archive.sqlite';
/** v1: archive_meta (key/value) and the mirrored per-task tables. */
export const ARCHIVE_SCHEMA_VERSION = 1;
const META_TABLE = 'archive_meta';

export interface ArchiveFileOptions {
  /** The task DB's directory: the archive lives beside it. */
  directory: string;
  wasmPath?: string;
  /** fsync file and directory on every write (default true). */
  durable?: boolean;
  fs?: StoreFs;
  lock?: Omit<FileLockOptions, 'onNotice'>;
}

const PRAGMAS = 'PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY;';

export class ArchiveFile {
  readonly filePath: string;
  private readonly fsys: StoreFs;
  private readonly durable: boolean;
  private readonly lock: FileLock;
  private db: SqlDb | undefined;
  private generation: Generation | undefined;
  private counter = 0;
  private tail: Promise<unknown> = Promise.resolve();
  /** Archive writes so far (tests and the bench count them). */
  writes = 0;

  private constructor(
    private readonly SQL: SqlJsStatic,
    options: ArchiveFileOptions,
  ) {
    this.filePath = path.join(path.resolve(options.directory), ARCHIVE_FILE_NAME);
    this.fsys = options.fs ?? fs;
    this.durable = options.durable ?? true;
    this.lock = new FileLock(`${this.filePath}.lock`, options.lock ?? {});
  }

  /** Prepares the archive of the task DB in `directory`; reads nothing yet. */
  static async open(options: ArchiveFileOptions): Promise<ArchiveFile> {
    return new ArchiveFile(await loadSqlJs(options.wasmPath), options);
  }

  /** Whether the file is there (nothing was ever archived when not). */
  exists(): boolean {
    try {
      return readGeneration(this.filePath, this.fsys) !== MISSING;
    } catch {
      return true; // there, but unreadable just now
    }
  }

  /** When the archive was last written (its mtime), or undefined when there is none. */
  lastWrittenAt(): number | undefined {
    try {
      return this.fsys.statSync(this.filePath).mtimeMs;
    } catch {
      return undefined;
    }
  }

  /**
   * Runs `fn` on the archive as the file holds it now (loaded on first use, reloaded when another
   * process wrote); undefined when there is no archive yet.
   */
  read<T>(fn: (db: SqlDb, tables: PerTaskTable[]) => T): T | undefined {
    const db = this.load();
    return db ? fn(db, perTaskTables(db)) : undefined;
  }

  /** The archived rows of these tasks. */
  rowsOf(taskIds: readonly string[]): Map<string, TaskRows> {
    return this.read((db, tables) => readTaskRows(db, tables, taskIds)) ?? new Map();
  }

  /**
   * Writes these tasks' rows (replacing what the archive held for them: writing a batch twice
   * leaves one copy), mirroring `schema` (the task DB's per-task tables) first. One transaction,
   * one durable write.
   */
  put(schema: readonly PerTaskTable[], copies: ReadonlyMap<string, TaskRows>, meta: Record<string, string> = {}): Promise<void> {
    return this.write((db) => {
      mirror(db, schema);
      const tables = perTaskTables(db);
      for (const [taskId, rows] of copies) writeTaskRows(db, tables, taskId, rows);
      for (const [key, value] of Object.entries(meta))
        db.run(`INSERT OR REPLACE INTO ${META_TABLE} (key, value) VALUES (?, ?)`, [key, value]);
    });
  }

  /** Deletes these tasks' rows from the archive; returns how many tasks were there (nothing is written when none was). */
  async remove(taskIds: readonly string[]): Promise<number> {
    if (!this.exists() || this.rowsOf(taskIds).size === 0) return 0;
    return this.write((db) => deleteTaskRows(db, perTaskTables(db), taskIds));
  }

  /** A value of the archive's bookkeeping (e.g. `last_run_at`). */
  meta(key: string): string | undefined {
    return this.read((db) => db.get(`SELECT value FROM ${META_TABLE} WHERE key = ?`, [key])?.value as string | undefined);
  }

  /** Whether a copy of the archive is in memory now. */
  get loaded(): boolean {
    return this.db !== undefined;
  }

  /** Drops the in-memory copy (it is read again when next asked). */
  unload(): void {
    this.db?.raw.close();
    this.db = undefined;
    this.generation = undefined;
  }

  async close(): Promise<void> {
    await this.tail.catch(() => undefined);
    this.unload();
  }

  private load(): SqlDb | undefined {
    const generation = readGeneration(this.filePath, this.fsys);
    if (generation === MISSING) {
      this.unload();
      return undefined;
    }
    if (this.db && generation === this.generation) return this.db;
    const bytes = this.fsys.readFileSync(this.filePath);
    const db = this.parse(bytes);
    this.unload();
    this.db = db;
    this.generation = generationOfBytes(bytes);
    this.counter = counterOfBytes(bytes);
    return db;
  }

  private parse(bytes: Uint8Array): SqlDb {
    let raw: Database;
    try {
      raw = new this.SQL.Database(Uint8Array.prototype.slice.call(bytes));
      const verdict = String(raw.exec('PRAGMA quick_check')[0]?.values[0]?.[0] ?? '');
      if (verdict !== 'ok') throw new Error(`integrity check failed: ${verdict}`);
    } catch (err) {
      throw new StoreError(
        'UNREADABLE',
        `the history archive ${this.filePath} cannot be read (${(err as Error).message}); it was left as it is`,
        { cause: err },
      );
    }
    const db = new SqlDb(raw);
    db.exec(PRAGMAS);
    const version = Number(db.scalar('PRAGMA user_version') ?? 0);
    if (version > ARCHIVE_SCHEMA_VERSION) {
      raw.close();
      throw new StoreError(
        'NEWER_SCHEMA',
        `the history archive ${this.filePath} has version ${version}, newer than this build understands (${ARCHIVE_SCHEMA_VERSION})`,
      );
    }
    return db;
  }

  private write<T>(fn: (db: SqlDb) => T): Promise<T> {
    const run = this.tail.then(() => this.writeNow(fn));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async writeNow<T>(fn: (db: SqlDb) => T): Promise<T> {
    const lock = await this.lock.acquire();
    try {
      const db = this.load() ?? this.fresh();
      let result!: T;
      db.exec('BEGIN IMMEDIATE');
      try {
        db.exec(`CREATE TABLE IF NOT EXISTS ${META_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
        if (Number(db.scalar('PRAGMA user_version')) !== ARCHIVE_SCHEMA_VERSION) db.exec(`PRAGMA user_version = ${ARCHIVE_SCHEMA_VERSION}`);
        result = fn(db);
        db.exec('COMMIT');
      } catch (err) {
        try {
          db.exec('ROLLBACK');
        } catch {
          // rolled back already
        }
        this.unload(); // the file is the truth: read it again next time
        throw err;
      }
      const bytes = db.raw.export();
      const counter = (this.counter + 1) >>> 0 || 1;
      const generation = stampGeneration(bytes, counter);
      let written = false;
      try {
        written = await this.replaceFile(bytes, () => lock.isHeld());
      } finally {
        if (!written) this.unload();
      }
      if (!written) throw new StoreError('LOCK_LOST', `lost the lock on ${this.filePath}; the archive was not written`);
      this.generation = generation;
      this.counter = counter;
      this.writes += 1;
      return result;
    } finally {
      lock.release();
    }
  }

  /**
   * Temp file + fdatasync + rename + directory fsync, as db-file.ts's writeFileAtomic, except that
   * the write and its fdatasync (of a file that may hold years of history) do not hold the event
   * loop: the panel and the scheduler run meanwhile, also while the rename waits.
   */
  private async replaceFile(bytes: Uint8Array, beforeRename: () => boolean): Promise<boolean> {
    const temp = tempPathFor(this.filePath);
    let renamed = false;
    try {
      const handle = await fs.promises.open(temp, 'w', 0o600);
      try {
        await handle.writeFile(bytes);
        if (this.durable) await handle.datasync();
      } finally {
        await handle.close();
      }
      // Waits while another handle holds the archive (a reader in another window, a scanner: Windows).
      if (!(await renameReplacing(this.fsys, temp, this.filePath, { beforeRename }))) return false;
      renamed = true;
    } finally {
      if (!renamed) fs.rmSync(temp, { force: true });
    }
    if (this.durable) fsyncDirectory(path.dirname(this.filePath), this.fsys);
    return true;
  }

  private fresh(): SqlDb {
    const db = new SqlDb(new this.SQL.Database());
    db.exec(PRAGMAS);
    this.db = db;
    this.generation = MISSING;
    this.counter = 0;
    return db;
  }
}

/** Creates the task DB's per-task tables in the archive, and adds the columns it gained since. */
function mirror(db: SqlDb, schema: readonly PerTaskTable[]): void {
  for (const { table, taskColumn, columns } of schema) {
    const pk = columns
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name);
    const defs = columns.map((c) => `${c.name} ${c.type}`.trim());
    db.exec(`CREATE TABLE IF NOT EXISTS ${table} (${defs.join(', ')}${pk.length > 0 ? `, PRIMARY KEY (${pk.join(', ')})` : ''})`);
    db.exec(`CREATE INDEX IF NOT EXISTS ${table}_archive_task ON ${table} (${taskColumn})`);
    const have = new Set(db.all(`PRAGMA table_info(${table})`).map((c) => String(c.name)));
    for (const c of columns) if (!have.has(c.name)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${c.name} ${c.type}`);
  }
  db.exec('CREATE INDEX IF NOT EXISTS off_peak_tasks_archive_history ON off_peak_tasks (started_at)');
}
