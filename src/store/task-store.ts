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
 * its transactions are memory-copy.ts; keeping it equal to the file (reload, a damaged file moved
 * aside, persist) is disk-sync.ts; retrying failed system calls is io-retry.ts. This file holds the
 * open, the queue of this window's writes under the lock, and the events.
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
import type { SqlJsStatic } from 'sql.js';
import { systemClock, type Clock } from '../core/clock';
import { isProcessAlive } from '../core/process-alive';
import { ChangeWatcher } from './db/change-watcher';
import { sweepTempFiles, type Generation, type StoreFs } from './db/db-file';
import { DiskSync } from './db/disk-sync';
import { StoreError, type StoreNotice } from './errors';
import { FileLock, type LockHandle } from './db/file-lock';
import { IoRetry } from './db/io-retry';
import { leaseFileFor, type LeaseHolding, type LeaseResult } from './db/lease-file';
import { MemoryCopy } from './db/memory-copy';
import { changeCounters, changedTopics } from './migrations/change-counters';
import { migrate, NewerSchemaError, type MigrationReport } from './migrations/migrate';
import { loadSqlJs } from './db/sqljs';
import { StoreLeases } from './db/store-leases';
import { Emitter, type Event } from '../core/event';
import type { StoreChange, StoreReadTx, StoreStats, StoreTx, TaskStoreOptions } from './store-types';

export { changeConcerns, type StoreChange, type StoreReadTx, type StoreStats, type StoreTx, type TaskStoreOptions } from './store-types';

export const DB_FILE_NAME = 'tasks-index.sqlite';

export class TaskStore {
  readonly filePath: string;
  readonly directory: string;
  /** Notices raised so far (including during open), oldest first. */
  readonly notices: StoreNotice[] = [];
  /** What open() did to the schema. */
  migration: MigrationReport | undefined;
  readonly stats: StoreStats = {
    persists: 0,
    reloads: 0,
    mutations: 0,
    lockRetries: 0,
    ioRetries: 0,
    ioFailures: 0,
    leaseWrites: 0,
    leaseRenewals: 0,
    renameWaits: 0,
    renameWaitMaxMs: 0,
  };
  /** The leader lease file beside the DB (tasks-index.lease). */
  readonly leasePath: string;

  private readonly copy: MemoryCopy;
  /** The in-memory copy kept equal to the file: reloads, the damaged file moved aside, persists. */
  private readonly disk: DiskSync;
  private readonly fsys: StoreFs;
  private readonly leases: StoreLeases;
  private readonly ioRetry: IoRetry;
  private readonly clock: Clock;
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
    this.fsys = options.fs ?? fs;
    this.ioRetry = new IoRetry(options.ioRetry ?? {}, this.filePath, this.clock, this.stats, (n) => this.notify(n));
    if (options.onNotice) this.noticesOut.event(options.onNotice);
    this.lock = new FileLock(`${this.filePath}.lock`, { ...options.lock, onNotice: (n) => this.notify(n) });
    this.copy = new MemoryCopy(SQL);
    this.disk = new DiskSync(this.copy, {
      filePath: this.filePath,
      fsys: this.fsys,
      clock: this.clock,
      durable: options.durable ?? true,
      stats: this.stats,
      notify: (n) => this.notify(n),
      emitChange: (change) => this.emitChange(change),
      lookedAt: () => this.watcher?.lookedAt(),
    });
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
    if (!this.busy) this.disk.refresh();
    return fn(this.copy.tx(this.clock.now()));
  }

  /**
   * The version of the data in memory (the DB file's generation it was loaded from or written as):
   * unchanged means no row changed, here or in another window, since it was last looked at.
   * Call `checkForExternalChange()` first to take in another window's write.
   */
  get generation(): Generation | undefined {
    return this.disk.generation;
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
      this.disk.syncLocked(false);
      this.copy.db.exec('VACUUM');
      await this.disk.persistLocked(lock, new Set());
    });
  }

  /** Checks now for another process's write (what the watcher does); true if one was loaded. */
  checkForExternalChange(): boolean {
    this.assertOpen();
    if (this.busy) return false;
    return this.disk.refresh();
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

  private async initialise(): Promise<void> {
    await this.enqueue(() =>
      this.ioRetry.run('opening the task database', async () => {
        const lock = await this.lock.acquire();
        try {
          const mustWrite = this.disk.syncLocked(true);
          let report: MigrationReport | undefined;
          const changed = this.copy.transaction(() => {
            report = migrate(this.copy.db, this.clock.now());
          });
          this.migration = report;
          this.disk.counters = changeCounters(this.copy.db);
          if (mustWrite || changed) await this.disk.persistLocked(lock, new Set());
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
        const mustWrite = this.disk.syncLocked(false);
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
          const topics = changedTopics(this.disk.counters, countersAfter);
          if (await this.disk.persistLocked(lock, topics)) {
            this.disk.counters = countersAfter;
          } else {
            // Our lock was broken while we worked: the file may hold someone else's newer write.
            this.notify({
              kind: 'lock-compromised',
              file: this.filePath,
              at: this.clock.now(),
              message: 'Another window took over the task database lock during a write; the write is being retried.',
            });
            if (attempt >= 2)
              throw new StoreError('LOCK_LOST', `lost the lock on ${this.filePath} three times in a row; nothing was written`);
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

  private startWatching(pollMs?: number): void {
    this.watcher = new ChangeWatcher({
      filePath: this.filePath,
      pollMs,
      check: () => {
        if (this.closed || this.busy) return;
        try {
          this.disk.refresh('watch');
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
