/**
 * The task store: one sql.js database file shared by every VS Code window (DESIGN §5).
 *
 * Each window keeps an in-memory sql.js copy. A mutation:
 *   file lock -> reload from disk if the generation changed -> ONE transaction -> export()
 *   -> stamp the next generation -> temp file + fsync -> re-check lock ownership -> rename
 *   + fsync dir -> release.
 * Reads check the generation (a 28-byte read) and reload if another window wrote. A directory
 * watcher plus a slow poll notice other windows' writes and fire `onDidChange`.
 * Mutation functions are synchronous and may be re-run once if the lock was lost before the
 * persist, so they must only touch the database they are given.
 */
import * as fs from 'node:fs';
import path from 'node:path';
import type { Database, SqlJsStatic } from 'sql.js';
import { systemClock, type Clock } from '../core/clock';
import { StoreError, type StoreNotice } from './errors';
import { counterOfBytes, generationOfBytes, MISSING, moveAside, readGeneration, stampGeneration, sweepTempFiles, writeFileAtomic, type Generation } from './db-file';
import { FileLock, type FileLockOptions, type LockHandle } from './file-lock';
import { LeaseRepo, type LeaseResult } from './lease-repo';
import { migrate, NewerSchemaError, type MigrationReport } from './schema';
import { SqlDb } from './sql';
import { loadSqlJs } from './sqljs';
import { TaskRepo } from './task-repo';
import { TicketRepo } from './ticket-repo';

export const DB_FILE_NAME = 'tasks-index.sqlite';

export interface TaskStoreOptions {
  /** Where tasks-index.sqlite lives (the extension passes its globalStorage path). Created if missing. */
  directory: string;
  /** Defaults to tasks-index.sqlite. */
  fileName?: string;
  /** Time source for created_at/updated_at, transitions and leases. */
  clock?: Clock;
  /** Path of sql-wasm.wasm; see sqljs.ts for the default. */
  wasmPath?: string;
  lock?: Omit<FileLockOptions, 'onNotice'>;
  /** fsync file and directory on every persist. Default true. */
  durable?: boolean;
  /** Watch the file for other processes' writes (default true; pollMs default 1000). */
  watch?: boolean | { pollMs?: number };
  /** Called for every notice (corrupt file moved aside, lock taken over...). */
  onNotice?: (notice: StoreNotice) => void;
}

/** What a mutation function gets: typed repositories bound to one transaction and its time. */
export interface StoreTx {
  readonly now: number;
  readonly tasks: TaskRepo;
  readonly tickets: TicketRepo;
  readonly lease: LeaseRepo;
  /** Raw SQL for queries the repositories do not cover yet (e.g. scheduler claim scans). */
  readonly db: SqlDb;
}

/** What a read function gets: the read-only half of the repositories. */
export interface StoreReadTx {
  readonly now: number;
  readonly tasks: Pick<TaskRepo, 'get' | 'list' | 'count'>;
  readonly tickets: Pick<TicketRepo, 'get' | 'list' | 'forTask' | 'pendingSettles' | 'live'>;
  readonly lease: Pick<LeaseRepo, 'get'>;
  readonly db: SqlDb;
}

export interface StoreChange {
  /** local: this store persisted; external: another process (window) did. */
  origin: 'local' | 'external';
  generation: Generation;
}

export interface Disposable {
  dispose(): void;
}

/** Counters for tests and diagnostics. */
export interface StoreStats {
  persists: number;
  reloads: number;
  mutations: number;
  lockRetries: number;
}

const PRAGMAS = 'PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY;';

const errCode = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

export class TaskStore {
  readonly filePath: string;
  readonly directory: string;
  /** Notices raised so far (including during open), oldest first. */
  readonly notices: StoreNotice[] = [];
  /** What open() did to the schema. */
  migration: MigrationReport | undefined;
  readonly stats: StoreStats = { persists: 0, reloads: 0, mutations: 0, lockRetries: 0 };

  private db: SqlDb;
  /** Generation of the file our in-memory copy equals; undefined = unknown, reload before use. */
  private knownGeneration: Generation | undefined;
  private counter = 0;
  private readonly clock: Clock;
  private readonly durable: boolean;
  private readonly lock: FileLock;
  private tail: Promise<unknown> = Promise.resolve();
  private busy = false;
  private closed = false;
  private readonly changeListeners = new Set<(change: StoreChange) => void>();
  private readonly noticeListeners = new Set<(notice: StoreNotice) => void>();
  private watcher: fs.FSWatcher | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private checkTimer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly SQL: SqlJsStatic,
    private readonly options: TaskStoreOptions,
  ) {
    this.directory = path.resolve(options.directory);
    this.filePath = path.join(this.directory, options.fileName ?? DB_FILE_NAME);
    this.clock = options.clock ?? systemClock;
    this.durable = options.durable ?? true;
    if (options.onNotice) this.noticeListeners.add(options.onNotice);
    this.lock = new FileLock(`${this.filePath}.lock`, { ...options.lock, onNotice: (n) => this.notify(n) });
    this.db = this.freshDb();
  }

  /** Opens (creating, migrating or repairing) the store in `options.directory`. */
  static async open(options: TaskStoreOptions): Promise<TaskStore> {
    const SQL = await loadSqlJs(options.wasmPath);
    fs.mkdirSync(options.directory, { recursive: true });
    const store = new TaskStore(SQL, options);
    await store.initialise();
    if (options.watch !== false) store.startWatching(typeof options.watch === 'object' ? options.watch.pollMs : undefined);
    return store;
  }

  // ---------------------------------------------------------------- public API

  /**
   * Runs `fn` in ONE transaction under the file lock and persists once (nothing is written when
   * `fn` changed no row). If `fn` throws, the transaction is rolled back and the error rethrown.
   * Put many changes in one call to make them one transaction and one persist.
   */
  mutate<T>(fn: (tx: StoreTx) => T): Promise<T> {
    return this.enqueue(() => this.runMutation(fn));
  }

  /** `mutate` over a list of changes: one transaction, one persist, results in order. */
  batch<T>(changes: ReadonlyArray<(tx: StoreTx) => T>): Promise<T[]> {
    return this.mutate((tx) => changes.map((change) => change(tx)));
  }

  /** Synchronous read of the current state (reloads first if another window wrote). */
  read<T>(fn: (tx: StoreReadTx) => T): T {
    this.assertOpen();
    // Emits too: whoever notices another window's write first (read, watcher, mutation) tells listeners.
    if (!this.busy) this.refreshFromDisk();
    return fn(this.makeTx(this.clock.now()));
  }

  /** Fires after this store persisted (local) or noticed another process's write (external). */
  onDidChange(listener: (change: StoreChange) => void): Disposable {
    this.changeListeners.add(listener);
    return { dispose: () => this.changeListeners.delete(listener) };
  }

  onNotice(listener: (notice: StoreNotice) => void): Disposable {
    this.noticeListeners.add(listener);
    return { dispose: () => this.noticeListeners.delete(listener) };
  }

  /** Leader lease helpers (each one mutation). */
  acquireLease(name: string, holder: string, ttlMs: number): Promise<LeaseResult> {
    return this.mutate((tx) => tx.lease.acquire(name, holder, ttlMs));
  }

  renewLease(name: string, token: string, ttlMs: number): Promise<LeaseResult> {
    return this.mutate((tx) => tx.lease.renew(name, token, ttlMs));
  }

  releaseLease(name: string, token: string): Promise<boolean> {
    return this.mutate((tx) => tx.lease.release(name, token));
  }

  /** Checks now for another process's write (what the watcher does); true if one was loaded. */
  checkForExternalChange(): boolean {
    this.assertOpen();
    if (this.busy) return false;
    return this.refreshFromDisk();
  }

  /** Stops watching and closes the database after pending mutations finish. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.stopWatching();
    await this.tail.catch(() => undefined);
    this.closed = true;
    this.db.raw.close();
  }

  // ---------------------------------------------------------------- internals

  private assertOpen(): void {
    if (this.closed) throw new StoreError('CLOSED', `the task store at ${this.filePath} is closed`);
  }

  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new StoreError('CLOSED', `the task store at ${this.filePath} is closed`));
    const run = this.tail.then(job, job);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private freshDb(): SqlDb {
    const db = new SqlDb(new this.SQL.Database());
    db.exec(PRAGMAS);
    return db;
  }

  private makeTx(now: number): StoreTx {
    return {
      now,
      tasks: new TaskRepo(this.db, now),
      tickets: new TicketRepo(this.db, now),
      lease: new LeaseRepo(this.db, now),
      db: this.db,
    };
  }

  private notify(notice: StoreNotice): void {
    this.notices.push(notice);
    // Keep the first notices (open-time ones matter most) and the latest; never grow without bound.
    if (this.notices.length > 100) this.notices.splice(20, this.notices.length - 100);
    for (const listener of this.noticeListeners) {
      try {
        listener(notice);
      } catch {
        // a listener's failure must not break the store
      }
    }
  }

  private emitChange(change: StoreChange): void {
    // Deferred so listeners never run in the middle of a mutation.
    queueMicrotask(() => {
      for (const listener of this.changeListeners) {
        try {
          listener(change);
        } catch {
          // a listener's failure must not break the store
        }
      }
    });
  }

  private replaceDb(next: Database): void {
    const old = this.db;
    this.db = new SqlDb(next);
    this.db.exec(PRAGMAS);
    try {
      old.raw.close();
    } catch {
      // already closed
    }
  }

  /** Parses bytes as SQLite; throws if they are not a readable database. */
  private parse(bytes: Uint8Array, thorough: boolean): Database {
    const db = new this.SQL.Database(bytes);
    try {
      if (thorough) {
        const result = db.exec('PRAGMA quick_check');
        const verdict = String(result[0]?.values[0]?.[0] ?? '');
        if (verdict !== 'ok') throw new Error(`integrity check failed: ${verdict}`);
      } else {
        db.exec('SELECT COUNT(*) FROM sqlite_master');
      }
      return db;
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /**
   * Reloads the in-memory copy when the file's generation differs from ours, and tells listeners.
   * Without the lock (reads, watcher) a bad file is left for the next locked mutation to repair.
   * Returns true when it loaded another process's write.
   */
  private refreshFromDisk(): boolean {
    let generation: Generation;
    try {
      generation = readGeneration(this.filePath);
    } catch {
      return false;
    }
    if (generation === this.knownGeneration || generation === MISSING) return false;
    let bytes: Uint8Array;
    try {
      bytes = fs.readFileSync(this.filePath);
      this.replaceDb(this.parse(bytes, false));
    } catch {
      return false; // keep serving the last good copy; the next mutation repairs the file
    }
    this.knownGeneration = generationOfBytes(bytes);
    this.counter = counterOfBytes(bytes);
    this.stats.reloads += 1;
    this.emitChange({ origin: 'external', generation: this.knownGeneration });
    return true;
  }

  /**
   * Under the lock: make the in-memory copy equal the file. A missing file keeps the current
   * copy (a fresh DB at open). An unreadable or corrupt file is moved aside and reported; we go
   * on with our last good copy (or a fresh DB at open), which the caller then persists.
   * Returns true when the file must be (re)written even without row changes.
   */
  private syncWithDiskLocked(atOpen: boolean): boolean {
    let generation: Generation;
    try {
      generation = readGeneration(this.filePath);
    } catch (err) {
      return this.handleBadFile(err, atOpen);
    }
    if (generation === MISSING) {
      this.knownGeneration = MISSING;
      return true;
    }
    if (generation === this.knownGeneration) return false;
    let bytes: Uint8Array;
    try {
      bytes = fs.readFileSync(this.filePath);
    } catch (err) {
      return this.handleBadFile(err, atOpen);
    }
    if (bytes.length === 0) {
      // An empty file is an empty database (e.g. created by touch): not corruption.
      if (atOpen) this.replaceDb(new this.SQL.Database());
      this.knownGeneration = generationOfBytes(bytes);
      return true;
    }
    try {
      this.replaceDb(this.parse(bytes, atOpen));
    } catch (err) {
      return this.handleBadFile(err, atOpen);
    }
    const wasKnown = this.knownGeneration !== undefined && this.knownGeneration !== MISSING;
    this.knownGeneration = generationOfBytes(bytes);
    this.counter = counterOfBytes(bytes);
    if (!atOpen) {
      this.stats.reloads += 1;
      if (wasKnown) this.emitChange({ origin: 'external', generation: this.knownGeneration });
    }
    return false;
  }

  private handleBadFile(err: unknown, atOpen: boolean): boolean {
    const reason = err instanceof Error ? err.message : String(err);
    let movedTo: string;
    try {
      movedTo = moveAside(this.filePath, this.clock.now());
    } catch (moveErr) {
      if (errCode(moveErr) === 'ENOENT') {
        this.knownGeneration = MISSING;
        return true;
      }
      throw new StoreError('UNREADABLE', `cannot read ${this.filePath} (${reason}) and cannot move it aside: ${(moveErr as Error).message}`, { cause: err });
    }
    if (atOpen) this.replaceDb(new this.SQL.Database());
    this.knownGeneration = MISSING;
    this.notify({
      kind: 'corrupt-moved-aside',
      file: this.filePath,
      movedTo,
      reason,
      at: this.clock.now(),
      message: atOpen
        ? `The off-peak task database could not be read (${reason}). It was kept as ${path.basename(movedTo)} and a new, empty database is used.`
        : `The off-peak task database was damaged on disk (${reason}). It was kept as ${path.basename(movedTo)}; the last good copy held by this window was written back.`,
    });
    return true;
  }

  private async initialise(): Promise<void> {
    await this.enqueue(async () => {
      const lock = await this.lock.acquire();
      try {
        const mustWrite = this.syncWithDiskLocked(true);
        let report: MigrationReport | undefined;
        const changed = this.transaction(() => {
          report = migrate(this.db, this.clock.now());
        });
        this.migration = report;
        if (mustWrite || changed) this.persistLocked(lock);
        this.lock.sweepLeftovers();
        sweepTempFiles(this.filePath, this.lock.staleMs);
      } catch (err) {
        if (err instanceof NewerSchemaError) throw new StoreError('NEWER_SCHEMA', err.message, { cause: err });
        throw err;
      } finally {
        lock.release();
      }
    });
  }

  /** Runs fn in BEGIN..COMMIT; returns whether it wrote anything. Rolls back and rethrows on error. */
  private transaction(fn: () => void): boolean {
    const before = this.db.writeStamp();
    this.db.exec('BEGIN IMMEDIATE');
    try {
      fn();
      this.db.exec('COMMIT');
    } catch (err) {
      try {
        this.db.exec('ROLLBACK');
      } catch {
        // SQLite may have rolled back already
      }
      throw err;
    }
    return this.db.writeStamp() !== before;
  }

  private async runMutation<T>(fn: (tx: StoreTx) => T): Promise<T> {
    this.assertOpen();
    for (let attempt = 0; ; attempt++) {
      const lock = await this.lock.acquire();
      this.busy = true;
      let committed = false;
      try {
        const mustWrite = this.syncWithDiskLocked(false);
        let result!: T;
        const changed = this.transaction(() => {
          result = fn(this.makeTx(this.clock.now()));
          if (result instanceof Promise) {
            result.catch(() => undefined);
            throw new StoreError('ASYNC_MUTATION', 'store mutations must be synchronous functions (no await inside a transaction)');
          }
        });
        committed = changed;
        this.stats.mutations += 1;
        if (changed || mustWrite) {
          if (!this.persistLocked(lock)) {
            // Our lock was broken while we worked: the file may hold someone else's newer write.
            this.knownGeneration = undefined;
            this.notify({
              kind: 'lock-compromised',
              file: this.filePath,
              at: this.clock.now(),
              message: 'Another window took over the task database lock during a write; the write is being retried.',
            });
            if (attempt >= 2) throw new StoreError('LOCK_LOST', `lost the lock on ${this.filePath} three times in a row; nothing was written`);
            this.stats.lockRetries += 1;
            continue;
          }
        }
        return result;
      } catch (err) {
        // Memory may hold a commit that never reached the disk: reload before the next use.
        if (committed) this.knownGeneration = undefined;
        throw err;
      } finally {
        this.busy = false;
        lock.release();
      }
    }
  }

  /** export() outside any transaction, stamp the next generation, atomic write. */
  private persistLocked(lock: LockHandle): boolean {
    const bytes = this.db.raw.export();
    // Older sql.js builds reopen the database in export(): pragmas must be re-applied.
    this.db.exec(PRAGMAS);
    const nextCounter = (this.counter + 1) >>> 0 || 1;
    const generation = stampGeneration(bytes, nextCounter);
    const written = writeFileAtomic(this.filePath, bytes, { durable: this.durable, beforeRename: () => lock.isHeld() });
    if (!written) return false;
    this.counter = nextCounter;
    this.knownGeneration = generation;
    this.stats.persists += 1;
    this.emitChange({ origin: 'local', generation });
    return true;
  }

  private startWatching(pollMs = 1000): void {
    const schedule = () => {
      if (this.closed || this.checkTimer) return;
      this.checkTimer = setTimeout(() => {
        this.checkTimer = undefined;
        if (this.closed || this.busy) return;
        try {
          this.refreshFromDisk();
        } catch {
          // never throw out of a timer
        }
      }, 15);
      this.checkTimer.unref?.();
    };
    try {
      const base = path.basename(this.filePath);
      this.watcher = fs.watch(this.directory, { persistent: false }, (_event, name) => {
        if (name === null || name === base) schedule();
      });
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch (err) {
      this.notify({
        kind: 'watch-failed',
        file: this.filePath,
        at: this.clock.now(),
        message: `Cannot watch ${this.directory} (${(err as Error).message}); other windows' changes are picked up by polling.`,
      });
    }
    // fs.watch is not reliable everywhere (network drives, some containers): a slow poll backs it up.
    this.pollTimer = setInterval(schedule, pollMs);
    this.pollTimer.unref?.();
  }

  private stopWatching(): void {
    this.watcher?.close();
    this.watcher = undefined;
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.pollTimer = undefined;
    this.checkTimer = undefined;
  }
}
