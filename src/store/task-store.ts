/**
 * The task store: one sql.js database file shared by every VS Code window.
 *
 * Each window keeps an in-memory sql.js copy. A mutation:
 *   file lock -> reload from disk if the generation changed -> ONE transaction -> export()
 *   -> stamp the next generation -> temp file + fsync -> re-check lock ownership -> rename
 *   + fsync dir -> release.
 * Reads check the generation (a 28-byte read) and reload if another window wrote. A directory
 * watcher plus a slow poll (change-watcher.ts) notice other windows' writes and fire
 * `onDidChange` with the topics that changed. The leader lease lives in its own file
 * (store-leases.ts, lease-file.ts): renewing it never touches the DB file. The in-memory copy and
 * its transactions are memory-copy.ts; retrying failed system calls is io-retry.ts.
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
import { isProcessAlive } from '../core/process-alive';
import { ChangeWatcher } from './db/change-watcher';
import { counterOfBytes, generationOfBytes, MISSING, moveAside, readGeneration, readGenerationMarker, stampGeneration, sweepTempFiles, writeGenerationMarker, type Generation, type StoreFs } from './db/db-file';
import { writeFileAtomicAsync } from '../files/file-replace';
import { StoreError, type StoreNotice } from './errors';
import { FileLock, type LockHandle } from './db/file-lock';
import { IoRetry } from './db/io-retry';
import { leaseFileFor, type LeaseHolding, type LeaseResult } from './db/lease-file';
import { MemoryCopy } from './db/memory-copy';
import { changeCounters, changedTopics, zeroCounters, type StoreTopic } from './migrations/change-counters';
import { migrate, NewerSchemaError, type MigrationReport } from './migrations/migrate';
import { loadSqlJs } from './db/sqljs';
import { StoreLeases } from './db/store-leases';
import { Emitter, type Event } from '../core/event';
import type { StoreChange, StoreReadTx, StoreStats, StoreTx, TaskStoreOptions } from './store-types';

export { changeConcerns, type StoreChange, type StoreReadTx, type StoreStats, type StoreTx, type TaskStoreOptions } from './store-types';

export const DB_FILE_NAME = 'tasks-index.sqlite';

const errCode = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

export class TaskStore {
  readonly filePath: string;
  readonly directory: string;
  /** Notices raised so far (including during open), oldest first. */
  readonly notices: StoreNotice[] = [];
  /** What open() did to the schema. */
  migration: MigrationReport | undefined;
  readonly stats: StoreStats = { persists: 0, reloads: 0, mutations: 0, lockRetries: 0, ioRetries: 0, ioFailures: 0, leaseWrites: 0, leaseRenewals: 0, renameWaits: 0, renameWaitMaxMs: 0 };
  /** The leader lease file beside the DB (tasks-index.lease). */
  readonly leasePath: string;

  private readonly copy: MemoryCopy;
  /** The change counters of the in-memory copy (kept so each write or reload queries them once). */
  private counters = zeroCounters();
  private readonly fsys: StoreFs;
  private readonly leases: StoreLeases;
  private readonly ioRetry: IoRetry;
  /** Generation of the file our in-memory copy equals; undefined = unknown, reload before use. */
  private knownGeneration: Generation | undefined;
  private counter = 0;
  private readonly clock: Clock;
  private readonly durable: boolean;
  private readonly lock: FileLock;
  private tail: Promise<unknown> = Promise.resolve();
  private busy = false;
  private closed = false;
  // A listener's failure must not break the store: the emitters drop it.
  private readonly changes = new Emitter<StoreChange>();
  private readonly noticesOut = new Emitter<StoreNotice>();
  private watcher: ChangeWatcher | undefined;

  private constructor(SQL: SqlJsStatic, options: TaskStoreOptions) {
    this.directory = path.resolve(options.directory);
    this.filePath = path.join(this.directory, options.fileName ?? DB_FILE_NAME);
    this.leasePath = leaseFileFor(this.filePath, 'leader');
    this.clock = options.clock ?? systemClock;
    this.durable = options.durable ?? true;
    this.fsys = options.fs ?? fs;
    this.ioRetry = new IoRetry(options.ioRetry ?? {}, this.filePath, this.clock, this.stats, (n) => this.notify(n));
    if (options.onNotice) this.noticesOut.event(options.onNotice);
    this.lock = new FileLock(`${this.filePath}.lock`, { ...options.lock, onNotice: (n) => this.notify(n) });
    this.copy = new MemoryCopy(SQL);
    this.leases = new StoreLeases({
      dbFile: this.filePath,
      fsys: this.fsys,
      clock: this.clock,
      isProcessAlive: options.lock?.isProcessAlive ?? isProcessAlive,
      stats: this.stats,
      assertOpen: () => this.assertOpen(),
      underLock: (what, fn) => this.underLock(what, fn),
      inTurn: (what, fn) => this.enqueue(() => this.ioRetry.run(what, async () => fn())),
    });
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
    return fn(this.copy.tx(this.clock.now()));
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
  readonly onDidChange: Event<StoreChange> = this.changes.event;

  readonly onNotice: Event<StoreNotice> = this.noticesOut.event;

  /** The lease as its file says now (no lock); undefined when there is none or it cannot be read now. */
  readLease(name: string): LeaseHolding | undefined {
    this.assertOpen();
    return this.leases.read(name);
  }

  /**
   * Takes the lease if free or expired, or extends it for its holder. A lease held by someone
   * else is answered from a lockless read, and the holder's extension only sets the lease file's
   * mtime: neither takes the lock or writes data. Taking a free or expired lease writes a new
   * lease file under the lock.
   */
  acquireLease(name: string, holder: string, ttlMs: number): Promise<LeaseResult> {
    return this.leases.acquire(name, holder, ttlMs);
  }

  /** Extends the holding `token` by setting the lease file's mtime (no lock, no data written). */
  renewLease(name: string, token: string, ttlMs: number): Promise<LeaseResult> {
    return this.leases.renew(name, token, ttlMs);
  }

  /** Gives the lease up (clean shutdown) so another window need not wait for expiry. */
  releaseLease(name: string, token: string): Promise<boolean> {
    return this.leases.release(name, token);
  }

  /** VACUUM, then one durable write: drops the free pages that rows moved out left (docs/flows.md#archive). */
  compact(): Promise<void> {
    return this.underLock('compacting the task database', async (lock) => {
      this.syncWithDiskLocked(false);
      this.copy.db.exec('VACUUM');
      await this.persistLocked(lock, new Set());
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
    this.copy.close();
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

  /** Runs `fn` under the DB's file lock (serialised with this window's mutations), I/O errors retried. */
  private underLock<T>(what: string, fn: (lock: LockHandle) => T | Promise<T>): Promise<T> {
    return this.enqueue(() =>
      this.ioRetry.run(what, async () => {
        const lock = await this.lock.acquire();
        this.busy = true;
        try {
          const result = await fn(lock);
          if (!lock.isHeld()) throw new StoreError('LOCK_LOST', `lost the lock on ${this.filePath} while ${what}; nothing was written`);
          return result;
        } finally {
          this.busy = false;
          lock.release();
        }
      }),
    );
  }

  private notify(notice: StoreNotice): void {
    this.notices.push(notice);
    // Keep the first notices (open-time ones matter most) and the latest; never grow without bound.
    if (this.notices.length > 100) this.notices.splice(20, this.notices.length - 100);
    this.noticesOut.fire(notice);
  }

  private emitChange(change: StoreChange): void {
    if (change.topics.size === 0) return; // nothing anyone shows or schedules changed
    // Deferred so listeners never run in the middle of a mutation.
    queueMicrotask(() => this.changes.fire(change));
  }

  /** Loads `bytes` (already checked) as our copy; returns the topics that differ from the old copy. */
  private adopt(next: Database, bytes: Uint8Array): Set<StoreTopic> {
    const before = this.counters;
    this.copy.replace(next);
    this.copy.lastGoodBytes = bytes;
    this.knownGeneration = generationOfBytes(bytes);
    this.counter = counterOfBytes(bytes);
    this.counters = changeCounters(this.copy.db);
    return changedTopics(before, this.counters);
  }

  /**
   * Reloads the in-memory copy when the file's generation differs from ours, and tells listeners.
   * Without the lock (reads, watcher) a bad or unreadable file is left for the next locked
   * mutation: we keep serving the last good copy. Returns true when it loaded another process's write.
   * Reads look at the generation marker, not the DB file (on Windows a reader holding the DB open
   * makes a writer's rename wait); the watcher, woken by a rename of the DB file itself or by its
   * slow poll, looks at the DB header, so a write that left no marker (an older version, a crash
   * before the marker) is still noticed.
   */
  private refreshFromDisk(by: 'read' | 'watch' = 'read'): boolean {
    this.watcher?.lookedAt();
    let bytes: Uint8Array;
    let next: Database;
    try {
      if (by === 'read') {
        const marked = readGenerationMarker(this.filePath, this.fsys);
        if (marked !== undefined && marked === this.knownGeneration) return false;
      }
      const generation = readGeneration(this.filePath, this.fsys);
      if (generation === this.knownGeneration || generation === MISSING) return false;
      bytes = this.fsys.readFileSync(this.filePath);
      next = this.copy.parse(bytes);
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
    this.watcher?.lookedAt();
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
    // A writer that crashed between its rename and the marker (or an older version, which writes no marker) left it stale.
    if (readGenerationMarker(this.filePath, this.fsys) !== generation) writeGenerationMarker(this.filePath, generation, this.fsys);
    if (generation === this.knownGeneration) return false;
    const bytes = this.fsys.readFileSync(this.filePath);
    if (bytes.length === 0) {
      // An empty file is an empty database (e.g. created by touch): not corruption.
      if (atOpen) this.copy.replace();
      this.knownGeneration = generationOfBytes(bytes);
      return true;
    }
    let next: Database;
    try {
      next = this.copy.parse(bytes);
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
    if (atOpen) this.copy.replace();
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
      this.ioRetry.run('opening the task database', async () => {
        const lock = await this.lock.acquire();
        try {
          const mustWrite = this.syncWithDiskLocked(true);
          let report: MigrationReport | undefined;
          const changed = this.copy.transaction(() => {
            report = migrate(this.copy.db, this.clock.now());
          });
          this.migration = report;
          this.counters = changeCounters(this.copy.db);
          if (mustWrite || changed) await this.persistLocked(lock, new Set());
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

  private runMutation<T>(fn: (tx: StoreTx) => T): Promise<T> {
    this.assertOpen();
    return this.ioRetry.run('saving a change to the task database', () => this.mutationAttempt(fn));
  }

  private async mutationAttempt<T>(fn: (tx: StoreTx) => T): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const lock = await this.lock.acquire();
      this.busy = true;
      try {
        const mustWrite = this.syncWithDiskLocked(false);
        let result!: T;
        let countersAfter: ReturnType<typeof changeCounters> | undefined;
        const changed = this.copy.transaction(
          () => {
            result = fn(this.copy.tx(this.clock.now()));
            if (result instanceof Promise) {
              result.catch(() => undefined);
              throw new StoreError('ASYNC_MUTATION', 'store mutations must be synchronous functions (no await inside a transaction)');
            }
          },
          () => (countersAfter = changeCounters(this.copy.db)),
        );
        this.stats.mutations += 1;
        if (changed || mustWrite) {
          countersAfter ??= changeCounters(this.copy.db);
          const topics = changedTopics(this.counters, countersAfter);
          if (await this.persistLocked(lock, topics)) {
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
  private async persistLocked(lock: LockHandle, topics: Set<StoreTopic>): Promise<boolean> {
    let written = false;
    try {
      const bytes = this.copy.export();
      const nextCounter = (this.counter + 1) >>> 0 || 1;
      const generation = stampGeneration(bytes, nextCounter);
      written = await writeFileAtomicAsync(this.filePath, bytes, {
        durable: this.durable,
        beforeRename: () => lock.isHeld(),
        fs: this.fsys,
        onRenameWaited: (ms) => {
          this.stats.renameWaits += 1;
          this.stats.renameWaitMaxMs = Math.max(this.stats.renameWaitMaxMs, ms);
        },
      });
      if (!written) return false;
      writeGenerationMarker(this.filePath, generation, this.fsys);
      this.counter = nextCounter;
      this.knownGeneration = generation;
      this.copy.lastGoodBytes = bytes;
      this.stats.persists += 1;
      this.emitChange({ origin: 'local', generation, topics });
      return true;
    } finally {
      if (!written) this.copy.restoreLastGood();
    }
  }

  private startWatching(pollMs?: number): void {
    this.watcher = new ChangeWatcher({
      filePath: this.filePath,
      pollMs,
      check: () => {
        if (this.closed || this.busy) return;
        try {
          this.refreshFromDisk('watch');
        } catch {
          // never throw out of a timer
        }
      },
      onWatchFailed: (err) =>
        this.notify({
          kind: 'watch-failed',
          file: this.filePath,
          at: this.clock.now(),
          message: `Cannot watch ${this.directory} (${err.message}); other windows' changes are picked up by polling.`,
        }),
    });
  }

  private stopWatching(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }

}
