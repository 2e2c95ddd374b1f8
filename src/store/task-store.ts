/**
 * The task store: one sql.js database file shared by every VS Code window.
 *
 * Each window keeps an in-memory sql.js copy. A mutation:
 *   file lock -> reload from disk if the generation changed -> ONE transaction -> export()
 *   -> stamp the next generation -> temp file + fsync -> re-check lock ownership -> rename
 *   + fsync dir -> release.
 * Reads check the generation (a 28-byte read) and reload if another window wrote. A directory
 * watcher plus a slow poll notice other windows' writes and fire `onDidChange` with the topics
 * that changed. The leader lease lives in its own file (lease-file.ts): renewing it never
 * touches the DB file.
 * Mutation functions are synchronous and may be re-run (lock lost, I/O error retried), so they
 * must only touch the repositories they are given.
 *
 * A failed system call (EBUSY, EIO, EMFILE, ENOSPC...) is never taken for corruption: the
 * attempt is retried with a short backoff, then the mutation fails with StoreError 'IO', the
 * in-memory copy goes back to the last good version, and the file is left as it is. Only bytes
 * that were read whole and fail SQLite's integrity check are moved aside.
 */
import * as fs from 'node:fs';
import path from 'node:path';
import type { Database, SqlJsStatic } from 'sql.js';
import { systemClock, type Clock } from '../core/clock';
import type { DisposableLike } from '../core/disposable';
import { StoreError, type StoreNotice } from './errors';
import { counterOfBytes, generationOfBytes, isIoError, MISSING, moveAside, readGeneration, stampGeneration, sweepTempFiles, writeFileAtomic, type Generation, type StoreFs } from './db-file';
import { DispatchRepo } from './dispatch-repo';
import { FileLock, type FileLockOptions, type LockHandle } from './file-lock';
import { acquireDecision, checkTtl, leaseFileFor, newLeaseContent, readLeaseFile, touchLease, writeLeaseFile, type LeaseHolding, type LeaseResult } from './lease-file';
import { RuntimeRepo } from './runtime-repo';
import { changeCounters, changedTopics, migrate, zeroCounters, NewerSchemaError, type MigrationReport, type StoreTopic } from './schema';
import { SqlDb } from './sql';
import { loadSqlJs } from './sqljs';
import { TaskRepo } from './task-repo';
import { TicketRepo } from './ticket-repo';
import { WindowRepo } from './window-repo';
import { isProcessAlive } from '../core/process-alive';

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
  /**
   * Watch the file for other processes' writes (default true). A slow poll backs the watcher up:
   * pollMs defaults to 15000 while the directory watcher runs, 1000 when it could not start.
   */
  watch?: boolean | { pollMs?: number };
  /** Called for every notice (corrupt file moved aside, lock taken over...). */
  onNotice?: (notice: StoreNotice) => void;
  /** File operations on the DB and lease files (default node:fs). */
  fs?: StoreFs;
  /** Failed system calls are retried `attempts` times in all, waiting baseDelayMs, 2x, 4x... Default 6 x 10 ms. */
  ioRetry?: { attempts?: number; baseDelayMs?: number };
}

/** A holder renews without the lock only while more than this share of its ttl remains. */
const LOCKLESS_RENEW_MARGIN = 0.1;
/**
 * acquireLease by the holder touches the lease file only once this share of the ttl has passed
 * since the last renewal: a holder checking every few seconds renews a few times per ttl.
 */
const RENEW_AFTER_SHARE = 1 / 3;

/** What a mutation function gets: typed repositories bound to one transaction and its time. */
export interface StoreTx {
  readonly now: number;
  readonly tasks: TaskRepo;
  readonly tickets: TicketRepo;
  readonly windows: WindowRepo;
  readonly dispatch: DispatchRepo;
  readonly runtime: RuntimeRepo;
}

/** What a read function gets: the read-only half of the repositories. */
export interface StoreReadTx {
  readonly now: number;
  readonly tasks: Pick<TaskRepo, 'get' | 'list' | 'count' | 'dueForDispatch' | 'countZombieClaims' | 'oldestClaimAt'>;
  readonly tickets: Pick<TicketRepo, 'get' | 'list' | 'forTask' | 'pendingSettles' | 'live'>;
  readonly windows: Pick<WindowRepo, 'get' | 'list' | 'handOffAnswer' | 'pendingHandOffs'>;
  readonly dispatch: Pick<DispatchRepo, 'get' | 'nextEnd'>;
  readonly runtime: Pick<RuntimeRepo, 'get'>;
}

export interface StoreChange {
  /** local: this store persisted; external: another process (window) did. */
  origin: 'local' | 'external';
  generation: Generation;
  /** What changed (never empty: a write or reload that changed no topic fires no event). */
  topics: ReadonlySet<StoreTopic>;
}

/** True when a change touched any of `topics`. */
export function changeConcerns(change: StoreChange, ...topics: StoreTopic[]): boolean {
  return topics.some((topic) => change.topics.has(topic));
}

/** Counters for tests and diagnostics. */
export interface StoreStats {
  persists: number;
  reloads: number;
  mutations: number;
  lockRetries: number;
  /** Attempts repeated after a failed system call. */
  ioRetries: number;
  /** Mutations (or lease changes) that failed with 'IO' after their retries. */
  ioFailures: number;
  /** Lease files written or removed under the lock (a new holding, a release). */
  leaseWrites: number;
  /** Lockless renewals (the lease file's mtime set, no data written). */
  leaseRenewals: number;
}

/** An I/O failure notice is repeated at most this often (a failing disk must not flood the user). */
const IO_NOTICE_INTERVAL_MS = 60_000;

const PRAGMAS = 'PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY;';

const errCode = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;
/** How often a window looks at the DB file itself, with and without a working directory watcher. */
const WATCHED_POLL_MS = 15_000;
const UNWATCHED_POLL_MS = 1000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class TaskStore {
  readonly filePath: string;
  readonly directory: string;
  /** Notices raised so far (including during open), oldest first. */
  readonly notices: StoreNotice[] = [];
  /** What open() did to the schema. */
  migration: MigrationReport | undefined;
  readonly stats: StoreStats = { persists: 0, reloads: 0, mutations: 0, lockRetries: 0, ioRetries: 0, ioFailures: 0, leaseWrites: 0, leaseRenewals: 0 };
  /** The leader lease file beside the DB (tasks-index.lease). */
  readonly leasePath: string;

  private db: SqlDb;
  /** The bytes our in-memory copy was last loaded from or saved as: restored when a persist fails. */
  private lastGoodBytes: Uint8Array | undefined;
  /** The change counters of the in-memory copy (kept so each write or reload queries them once). */
  private counters = zeroCounters();
  private readonly fsys: StoreFs;
  private readonly isProcessAlive: (pid: number) => boolean;
  private readonly ioAttempts: number;
  private readonly ioBaseDelayMs: number;
  private lastIoNoticeAt = -Infinity;
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
    this.leasePath = leaseFileFor(this.filePath, 'leader');
    this.clock = options.clock ?? systemClock;
    this.durable = options.durable ?? true;
    this.fsys = options.fs ?? fs;
    this.isProcessAlive = options.lock?.isProcessAlive ?? isProcessAlive;
    this.ioAttempts = Math.max(1, options.ioRetry?.attempts ?? 6);
    this.ioBaseDelayMs = Math.max(0, options.ioRetry?.baseDelayMs ?? 10);
    if (options.onNotice) this.noticeListeners.add(options.onNotice);
    this.lock = new FileLock(`${this.filePath}.lock`, { ...options.lock, onNotice: (n) => this.notify(n) });
    this.db = this.freshDb();
  }

  /** Opens (creating, migrating or repairing) the store in `options.directory`. */
  static async open(options: TaskStoreOptions): Promise<TaskStore> {
    const SQL = await loadSqlJs(options.wasmPath);
    // Private to the user: task prompts and session ids live here.
    fs.mkdirSync(options.directory, { recursive: true, mode: 0o700 });
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

  /**
   * The version of the data in memory (the DB file's generation it was loaded from or written as):
   * unchanged means no row changed, here or in another window, since it was last looked at.
   * Call `checkForExternalChange()` first to take in another window's write.
   */
  get generation(): Generation | undefined {
    return this.knownGeneration;
  }

  /** Fires after this store persisted (local) or noticed another process's write (external). */
  onDidChange(listener: (change: StoreChange) => void): DisposableLike {
    this.changeListeners.add(listener);
    return { dispose: () => this.changeListeners.delete(listener) };
  }

  onNotice(listener: (notice: StoreNotice) => void): DisposableLike {
    this.noticeListeners.add(listener);
    return { dispose: () => this.noticeListeners.delete(listener) };
  }

  /**
   * The lease as its file says now (no lock). Undefined when there is none or the file cannot
   * be read at the moment.
   */
  readLease(name: string): LeaseHolding | undefined {
    this.assertOpen();
    try {
      return readLeaseFile(this.fsys, leaseFileFor(this.filePath, name), name);
    } catch {
      return undefined;
    }
  }

  /**
   * Takes the lease if free or expired, or extends it for its holder. A lease held by someone
   * else is answered from a lockless read, and the holder's extension only sets the lease file's
   * mtime: neither takes the lock or writes data. Taking a free or expired lease writes a new
   * lease file under the lock.
   */
  async acquireLease(name: string, holder: string, ttlMs: number): Promise<LeaseResult> {
    checkTtl(ttlMs);
    if (!holder) throw new StoreError('INVALID_INPUT', 'lease holder must not be empty');
    const file = leaseFileFor(this.filePath, name);
    const current = this.readLease(name);
    const now = this.clock.now();
    const decision = acquireDecision(current, holder, now, this.isProcessAlive);
    if (current && decision === 'refuse') return { held: false, current };
    if (current && decision === 'extend') {
      if (now - current.renewedAt < ttlMs * RENEW_AFTER_SHARE) return { held: true, lease: current, acquired: false };
      const renewed = await this.renewLease(name, current.token, ttlMs).catch(() => undefined);
      if (renewed?.held) return renewed;
    }
    return this.underLock('taking the leader lease', () => {
      const now2 = this.clock.now();
      const latest = readLeaseFile(this.fsys, file, name);
      const decision = acquireDecision(latest, holder, now2, this.isProcessAlive);
      if (decision === 'refuse') return { held: false, current: latest };
      if (decision === 'extend' && latest) {
        // Under the lock no takeover can race: extend however close to expiry (a new ttl: new holding).
        const extended = touchLease(this.fsys, file, name, latest.token, ttlMs, now2, 0);
        if (extended.held) return extended;
      }
      const content = newLeaseContent(holder, ttlMs, now2);
      this.writeLeaseLocked(file, content, now2);
      return { held: true, lease: { name, holder, token: content.token, acquiredAt: now2, renewedAt: now2, expiresAt: now2 + ttlMs }, acquired: true };
    });
  }

  /** Extends the holding `token` by setting the lease file's mtime (no lock, no data written). */
  renewLease(name: string, token: string, ttlMs: number): Promise<LeaseResult> {
    return this.enqueue(() =>
      this.withIoRetry('renewing the leader lease', async () => {
        checkTtl(ttlMs);
        const result = touchLease(this.fsys, leaseFileFor(this.filePath, name), name, token, ttlMs, this.clock.now(), ttlMs * LOCKLESS_RENEW_MARGIN);
        if (result.held) this.stats.leaseRenewals += 1;
        return result;
      }),
    );
  }

  /** Gives the lease up (clean shutdown) so another window need not wait for expiry. */
  releaseLease(name: string, token: string): Promise<boolean> {
    const file = leaseFileFor(this.filePath, name);
    return this.underLock('releasing the leader lease', () => {
      if (readLeaseFile(this.fsys, file, name)?.token !== token) return false;
      this.fsys.rmSync(file, { force: true });
      this.stats.leaseWrites += 1;
      return true;
    });
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
      windows: new WindowRepo(this.db, now),
      dispatch: new DispatchRepo(this.db, now),
      runtime: new RuntimeRepo(this.db, now),
    };
  }

  /** Runs one attempt; a failed system call is retried with backoff, then reported as StoreError 'IO'. */
  private async withIoRetry<T>(what: string, attempt: () => Promise<T>): Promise<T> {
    for (let n = 1; ; n++) {
      try {
        return await attempt();
      } catch (err) {
        if (!isIoError(err)) throw err;
        if (n >= this.ioAttempts) {
          this.stats.ioFailures += 1;
          const message = `${what} failed: ${err.code} on ${err.syscall}${err.path ? ` ${path.basename(err.path)}` : ''} (tried ${n} times). Nothing was lost; the change was not saved.`;
          const now = this.clock.now();
          if (now - this.lastIoNoticeAt >= IO_NOTICE_INTERVAL_MS) {
            this.lastIoNoticeAt = now;
            this.notify({ kind: 'io-error', file: this.filePath, code: err.code ?? 'EIO', at: now, message: `The off-peak task database could not be accessed: ${message}` });
          }
          throw new StoreError('IO', message, { cause: err });
        }
        this.stats.ioRetries += 1;
        await sleep(this.ioBaseDelayMs * 2 ** (n - 1));
      }
    }
  }

  /** Runs `fn` under the DB's file lock (serialised with this window's mutations), I/O errors retried. */
  private underLock<T>(what: string, fn: () => T): Promise<T> {
    return this.enqueue(() =>
      this.withIoRetry(what, async () => {
        const lock = await this.lock.acquire();
        this.busy = true;
        try {
          const result = fn();
          if (!lock.isHeld()) throw new StoreError('LOCK_LOST', `lost the lock on ${this.filePath} while ${what}; nothing was written`);
          return result;
        } finally {
          this.busy = false;
          lock.release();
        }
      }),
    );
  }

  private writeLeaseLocked(file: string, content: Parameters<typeof writeLeaseFile>[2], now: number): void {
    if (!writeLeaseFile(this.fsys, file, content, now, () => true)) return;
    this.stats.leaseWrites += 1;
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
    if (change.topics.size === 0) return; // nothing anyone shows or schedules changed
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

  /** Back to the last version read from or written to the file (a persist failed). No I/O. */
  private restoreLastGood(): void {
    this.replaceDb(this.lastGoodBytes ? this.openBytes(this.lastGoodBytes) : new this.SQL.Database());
  }

  /**
   * A database on a private copy of `bytes`. sql.js keeps a Node Buffer it is given as its file
   * (Buffer.slice shares memory), so later transactions would rewrite `bytes` in place: the last
   * good version we may have to go back to.
   */
  private openBytes(bytes: Uint8Array): Database {
    return new this.SQL.Database(Uint8Array.prototype.slice.call(bytes));
  }

  /**
   * Parses bytes read whole from the file and runs SQLite's integrity check (at open and on
   * every reload alike: a file damaged beyond page 1 is caught, not loaded). Throws if the bytes
   * are not a sound database; that, and only that, is corruption.
   */
  private parse(bytes: Uint8Array): Database {
    const db = this.openBytes(bytes);
    try {
      const result = db.exec('PRAGMA quick_check');
      const verdict = String(result[0]?.values[0]?.[0] ?? '');
      if (verdict !== 'ok') throw new Error(`integrity check failed: ${verdict}`);
      return db;
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /** Loads `bytes` (already checked) as our copy; returns the topics that differ from the old copy. */
  private adopt(next: Database, bytes: Uint8Array): Set<StoreTopic> {
    const before = this.counters;
    this.replaceDb(next);
    this.lastGoodBytes = bytes;
    this.knownGeneration = generationOfBytes(bytes);
    this.counter = counterOfBytes(bytes);
    this.counters = changeCounters(this.db);
    return changedTopics(before, this.counters);
  }

  /**
   * Reloads the in-memory copy when the file's generation differs from ours, and tells listeners.
   * Without the lock (reads, watcher) a bad or unreadable file is left for the next locked
   * mutation: we keep serving the last good copy. Returns true when it loaded another process's write.
   */
  private refreshFromDisk(): boolean {
    let bytes: Uint8Array;
    let next: Database;
    try {
      const generation = readGeneration(this.filePath, this.fsys);
      if (generation === this.knownGeneration || generation === MISSING) return false;
      bytes = this.fsys.readFileSync(this.filePath);
      next = this.parse(bytes);
    } catch {
      return false;
    }
    const topics = this.adopt(next, bytes);
    this.stats.reloads += 1;
    this.emitChange({ origin: 'external', generation: this.knownGeneration!, topics });
    return true;
  }

  /**
   * Under the lock: make the in-memory copy equal the file. A missing file keeps the current
   * copy (a fresh DB at open). A file that reads whole but fails the integrity check is moved
   * aside and reported; we go on with our last good copy (or a fresh DB at open), which the
   * caller then persists. A failed system call is thrown (the caller retries, then reports).
   * Returns true when the file must be (re)written even without row changes.
   */
  private syncWithDiskLocked(atOpen: boolean): boolean {
    let generation: Generation;
    try {
      generation = readGeneration(this.filePath, this.fsys);
    } catch (err) {
      // A directory where the file should be is not a passing fault: it can never be read.
      if (errCode(err) === 'EISDIR') return this.moveBadFileAside(err, atOpen);
      throw err;
    }
    if (generation === MISSING) {
      this.knownGeneration = MISSING;
      return true;
    }
    if (generation === this.knownGeneration) return false;
    const bytes = this.fsys.readFileSync(this.filePath);
    if (bytes.length === 0) {
      // An empty file is an empty database (e.g. created by touch): not corruption.
      if (atOpen) this.replaceDb(new this.SQL.Database());
      this.knownGeneration = generationOfBytes(bytes);
      return true;
    }
    let next: Database;
    try {
      next = this.parse(bytes);
    } catch (err) {
      return this.moveBadFileAside(err, atOpen);
    }
    const wasKnown = this.knownGeneration !== undefined && this.knownGeneration !== MISSING;
    const topics = this.adopt(next, bytes);
    if (!atOpen) {
      this.stats.reloads += 1;
      if (wasKnown) this.emitChange({ origin: 'external', generation: this.knownGeneration!, topics });
    }
    return false;
  }

  private moveBadFileAside(err: unknown, atOpen: boolean): boolean {
    const reason = err instanceof Error ? err.message : String(err);
    let movedTo: string;
    try {
      movedTo = moveAside(this.filePath, this.clock.now(), this.fsys);
    } catch (moveErr) {
      if (errCode(moveErr) === 'ENOENT') {
        this.knownGeneration = MISSING;
        return true;
      }
      throw moveErr; // a failed rename is an I/O error like any other: retried, then reported
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
    await this.enqueue(() =>
      this.withIoRetry('opening the task database', async () => {
        const lock = await this.lock.acquire();
        try {
          const mustWrite = this.syncWithDiskLocked(true);
          let report: MigrationReport | undefined;
          const changed = this.transaction(() => {
            report = migrate(this.db, this.clock.now());
          });
          this.migration = report;
          this.counters = changeCounters(this.db);
          if (mustWrite || changed) this.persistLocked(lock, new Set());
          this.lock.sweepLeftovers();
          sweepTempFiles(this.filePath, this.lock.staleMs);
          sweepTempFiles(this.leasePath, this.lock.staleMs);
        } catch (err) {
          if (err instanceof NewerSchemaError) throw new StoreError('NEWER_SCHEMA', err.message, { cause: err });
          throw err;
        } finally {
          lock.release();
        }
      }),
    );
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

  private runMutation<T>(fn: (tx: StoreTx) => T): Promise<T> {
    this.assertOpen();
    return this.withIoRetry('saving a change to the task database', () => this.mutationAttempt(fn));
  }

  private async mutationAttempt<T>(fn: (tx: StoreTx) => T): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const lock = await this.lock.acquire();
      this.busy = true;
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
        this.stats.mutations += 1;
        if (changed || mustWrite) {
          const countersAfter = changeCounters(this.db);
          const topics = changedTopics(this.counters, countersAfter);
          if (this.persistLocked(lock, topics)) {
            this.counters = countersAfter;
          } else {
            // Our lock was broken while we worked: the file may hold someone else's newer write.
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
      } finally {
        this.busy = false;
        lock.release();
      }
    }
  }

  /**
   * export() outside any transaction, stamp the next generation, atomic write. Returns false when
   * the lock was lost before the rename. Unless the file was written, the in-memory copy goes
   * back to the last good version: memory never holds a change the file does not.
   */
  private persistLocked(lock: LockHandle, topics: Set<StoreTopic>): boolean {
    let written = false;
    try {
      const bytes = this.db.raw.export();
      // Older sql.js builds reopen the database in export(): pragmas must be re-applied.
      this.db.exec(PRAGMAS);
      const nextCounter = (this.counter + 1) >>> 0 || 1;
      const generation = stampGeneration(bytes, nextCounter);
      written = writeFileAtomic(this.filePath, bytes, { durable: this.durable, beforeRename: () => lock.isHeld(), fs: this.fsys });
      if (!written) return false;
      this.counter = nextCounter;
      this.knownGeneration = generation;
      this.lastGoodBytes = bytes;
      this.stats.persists += 1;
      this.emitChange({ origin: 'local', generation, topics });
      return true;
    } finally {
      if (!written) this.restoreLastGood();
    }
  }

  private startWatching(pollMs?: number): void {
    const check = () => {
      if (this.closed || this.busy) return;
      try {
        this.refreshFromDisk();
      } catch {
        // never throw out of a timer
      }
    };
    // Watch events come in bursts (temp file, rename): one check shortly after the burst.
    const schedule = () => {
      if (this.closed || this.checkTimer) return;
      this.checkTimer = setTimeout(() => {
        this.checkTimer = undefined;
        check();
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
    // fs.watch is not reliable everywhere (network drives, some containers): a slow poll backs it
    // up. Slow, because each wake-up of an idle window costs about a millisecond of CPU; reads
    // check the generation anyway. The poll checks at once (no second wake-up through `schedule`).
    this.pollTimer = setInterval(check, pollMs ?? (this.watcher ? WATCHED_POLL_MS : UNWATCHED_POLL_MS));
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
