/**
 * Keeps the window's in-memory copy (memory-copy.ts) and the DB file equal: reloads another
 * window's write (without the lock for reads and the watcher, under it before a write), moves a
 * file SQLite finds damaged aside, and persists a transaction as the next generation of the file.
 * TaskStore (src/store/task-store.ts) decides when; this holds what the copy was loaded from.
 */
import path from 'node:path';
import type { Database } from 'sql.js';
import type { Clock } from '../../core/clock';
import { writeFileAtomicAsync } from '../../files/file-replace';
import type { StoreNotice } from '../errors';
import { changeCounters, changedTopics, zeroCounters, type StoreTopic } from '../migrations/change-counters';
import type { StoreChange, StoreStats } from '../store-types';
import {
  counterOfBytes,
  generationOfBytes,
  MISSING,
  moveAside,
  readGeneration,
  readGenerationMarker,
  stampGeneration,
  writeGenerationMarker,
  type Generation,
  type StoreFs,
} from './db-file';
import type { LockHandle } from './file-lock';
import type { MemoryCopy } from './memory-copy';

const errCode = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

export interface DiskSyncDeps {
  filePath: string;
  fsys: StoreFs;
  clock: Clock;
  /** fsync the file and its directory on each persist. */
  durable: boolean;
  stats: StoreStats;
  notify(notice: StoreNotice): void;
  emitChange(change: StoreChange): void;
  /** Each look at the file puts the watcher's backup poll off (change-watcher.ts). */
  lookedAt(): void;
}

export class DiskSync {
  /** Generation of the file our in-memory copy equals; undefined = unknown, reload before use. */
  generation: Generation | undefined;
  /** The change counters of the in-memory copy (kept so each write or reload queries them once). */
  counters = zeroCounters();
  private counter = 0;

  constructor(
    readonly copy: MemoryCopy,
    private readonly deps: DiskSyncDeps,
  ) {}

  /** Loads `bytes` (already checked) as our copy; returns the topics that differ from the old copy. */
  private adopt(next: Database, bytes: Uint8Array): Set<StoreTopic> {
    const before = this.counters;
    this.copy.replace(next);
    this.copy.lastGoodBytes = bytes;
    this.generation = generationOfBytes(bytes);
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
  refresh(by: 'read' | 'watch' = 'read'): boolean {
    this.deps.lookedAt();
    let bytes: Uint8Array;
    let next: Database;
    try {
      if (by === 'read') {
        const marked = readGenerationMarker(this.deps.filePath, this.deps.fsys);
        if (marked !== undefined && marked === this.generation) return false;
      }
      const generation = readGeneration(this.deps.filePath, this.deps.fsys);
      if (generation === this.generation || generation === MISSING) return false;
      bytes = this.deps.fsys.readFileSync(this.deps.filePath);
      next = this.copy.parse(bytes);
    } catch {
      return false;
    }
    const topics = this.adopt(next, bytes);
    this.deps.stats.reloads += 1;
    this.deps.emitChange({ origin: 'external', generation: this.generation!, topics });
    return true;
  }

  /**
   * Under the lock: make the in-memory copy equal the file. A missing file keeps the current
   * copy (a fresh DB at open). A file that reads whole but fails the integrity check is moved
   * aside and reported; we go on with our last good copy (or a fresh DB at open), which the
   * caller then persists. A failed system call is thrown (the caller retries, then reports).
   * Returns true when the file must be (re)written even without row changes.
   */
  syncLocked(atOpen: boolean): boolean {
    this.deps.lookedAt();
    let generation: Generation;
    try {
      generation = readGeneration(this.deps.filePath, this.deps.fsys);
    } catch (err) {
      // A directory where the file should be is not a passing fault: it can never be read.
      if (errCode(err) === 'EISDIR') return this.moveBadFileAside(err, atOpen);
      throw err;
    }
    if (generation === MISSING) {
      this.generation = MISSING;
      return true;
    }
    // A writer that crashed between its rename and the marker (or an older version, which writes no marker) left it stale.
    if (readGenerationMarker(this.deps.filePath, this.deps.fsys) !== generation)
      writeGenerationMarker(this.deps.filePath, generation, this.deps.fsys);
    if (generation === this.generation) return false;
    const bytes = this.deps.fsys.readFileSync(this.deps.filePath);
    if (bytes.length === 0) {
      // An empty file is an empty database (e.g. created by touch): not corruption.
      if (atOpen) this.copy.replace();
      this.generation = generationOfBytes(bytes);
      return true;
    }
    let next: Database;
    try {
      next = this.copy.parse(bytes);
    } catch (err) {
      return this.moveBadFileAside(err, atOpen);
    }
    const wasKnown = this.generation !== undefined && this.generation !== MISSING;
    const topics = this.adopt(next, bytes);
    if (!atOpen) {
      this.deps.stats.reloads += 1;
      if (wasKnown) this.deps.emitChange({ origin: 'external', generation: this.generation!, topics });
    }
    return false;
  }

  private moveBadFileAside(err: unknown, atOpen: boolean): boolean {
    const reason = err instanceof Error ? err.message : String(err);
    let movedTo: string;
    try {
      movedTo = moveAside(this.deps.filePath, this.deps.clock.now(), this.deps.fsys);
    } catch (moveErr) {
      if (errCode(moveErr) === 'ENOENT') {
        this.generation = MISSING;
        return true;
      }
      throw moveErr; // a failed rename is an I/O error like any other: retried, then reported
    }
    if (atOpen) this.copy.replace();
    this.generation = MISSING;
    this.deps.notify({
      kind: 'corrupt-moved-aside',
      file: this.deps.filePath,
      movedTo,
      reason,
      at: this.deps.clock.now(),
      message: atOpen
        ? `The off-peak task database could not be read (${reason}). It was kept as ${path.basename(movedTo)} and a new, empty database is used.`
        : `The off-peak task database was damaged on disk (${reason}). It was kept as ${path.basename(movedTo)}; the last good copy held by this window was written back.`,
    });
    return true;
  }

  /**
   * export() outside any transaction, stamp the next generation, atomic write. Returns false when
   * the lock was lost before the rename. Unless the file was written, the in-memory copy goes
   * back to the last good version: memory never holds a change the file does not.
   */
  async persistLocked(lock: LockHandle, topics: Set<StoreTopic>): Promise<boolean> {
    let written = false;
    try {
      const bytes = this.copy.export();
      const nextCounter = (this.counter + 1) >>> 0 || 1;
      const generation = stampGeneration(bytes, nextCounter);
      written = await writeFileAtomicAsync(this.deps.filePath, bytes, {
        durable: this.deps.durable,
        beforeRename: () => lock.isHeld(),
        fs: this.deps.fsys,
        onRenameWaited: (ms) => {
          this.deps.stats.renameWaits += 1;
          this.deps.stats.renameWaitMaxMs = Math.max(this.deps.stats.renameWaitMaxMs, ms);
        },
      });
      if (!written) return false;
      writeGenerationMarker(this.deps.filePath, generation, this.deps.fsys);
      this.counter = nextCounter;
      this.generation = generation;
      this.copy.lastGoodBytes = bytes;
      this.deps.stats.persists += 1;
      this.deps.emitChange({ origin: 'local', generation, topics });
      return true;
    } finally {
      if (!written) this.copy.restoreLastGood();
    }
  }
}
