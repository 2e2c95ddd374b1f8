/**
 * The history archive (docs/flows.md#archive): finished tasks beyond `offPeak.history.keepDays`
 * and `offPeak.history.keepCount` move, with every per-task row of theirs, from the task DB into
 * `tasks-archive.sqlite` beside it, so a durable write of the task DB costs the same with a year
 * of history as with a week.
 *
 * A run (the lease holder, at most once a day, in the background) moves batches. Each batch:
 * 1. read the due tasks' rows from the task DB;
 * 2. write them into the archive (one transaction; INSERT OR REPLACE by key: a batch written
 *    twice leaves one copy);
 * 3. delete them from the task DB (one transaction), each only if its rows still equal the copy.
 * A crash after 2 leaves a task in both files: readers take the task DB's copy, and the next run
 * writes it again (replacing) and finishes 3. A crash in 2 leaves the archive as it was.
 *
 * An archived task comes back to the task DB when the user acts on it (Open session, Review,
 * Follow up, Delete): written into the task DB first, then taken out of the archive, so the same
 * crash rule holds the other way round.
 */
import * as fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../core/clock';
import { deriveHistoryRow, matchesHistoryFilter, type HistoryFilter, type HistoryRow } from '../core/history';
import { SingleFlight } from '../core/single-flight';
import { ArchiveFile, ARCHIVE_FILE_NAME, type StoreFs, type StoreReadTx, type TaskStore } from '../store';
import { archivedEntries, archivedHistoryIds, type ArchivedEntry } from '../store/archive/archive-history';
import { groupIn } from '../store/archive/archive-groups';
import { outcomeFactsOf } from './outcome-facts';

const DAY_MS = 24 * 60 * 60 * 1000;
const IDLE_UNLOAD_MS = 5 * 60 * 1000;
/** The task DB is compacted (VACUUM) once more than this share of its pages is free. */
const COMPACT_AT_FREE_SHARE = 0.25;

/** The machine settings `offPeak.history.*`. */
export interface HistoryKeep {
  keepDays: number;
  keepCount: number;
}
export const DEFAULT_HISTORY_KEEP: HistoryKeep = { keepDays: 90, keepCount: 500 };

export interface HistoryArchiveOptions {
  store: TaskStore;
  clock: Clock;
  keep?: () => HistoryKeep;
  wasmPath?: string;
  /** fsync the archive file on each write (default: true). */
  durable?: boolean;
  /** File operations on the archive file (tests inject faults). */
  fs?: StoreFs;
  /** Tasks moved per batch (default 200). */
  batchSize?: number;
  /** A run starts at most this often (default one day, measured from the archive file's last write). */
  minIntervalMs?: number;
  log?: (line: string) => void;
}

export interface ArchiveRunReport {
  moved: number;
  batches: number;
  /** Tasks left in the task DB because they changed while their batch was written (the next run takes them). */
  changedMeanwhile: number;
}

/** One History row with where it came from: the task DB (`entry` absent) or the archive. */
export interface HistoryPageRow {
  row: HistoryRow;
  archived?: ArchivedEntry;
}

export interface HistoryPage {
  rows: HistoryPageRow[];
  /** Rows matching in all (the task DB's and the archive's). */
  total: number;
}

export function clampKeep(keep: HistoryKeep): HistoryKeep {
  return {
    keepDays: Math.max(1, Math.floor(keep.keepDays) || DEFAULT_HISTORY_KEEP.keepDays),
    keepCount: Math.max(0, Math.floor(keep.keepCount) || 0),
  };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class HistoryArchive {
  private file: ArchiveFile | undefined;
  private opening: Promise<ArchiveFile> | undefined;
  private readonly runs = new SingleFlight<ArchiveRunReport>();
  private lastRunAt: number | undefined;
  /** When History or an action last read the archive (its copy goes after IDLE_UNLOAD_MS unused). */
  private lastReadAt = 0;
  /** A run is moving batches (its archive copy stays loaded between them). */
  private running = false;

  constructor(private readonly options: HistoryArchiveOptions) {}

  /** The archive file (prepared on first use; nothing is read until asked). */
  archiveFile(): Promise<ArchiveFile> {
    if (this.file) return Promise.resolve(this.file);
    this.opening ??= ArchiveFile.open({
      directory: this.options.store.directory,
      wasmPath: this.options.wasmPath,
      durable: this.options.durable,
      fs: this.options.fs,
    }).then((f) => (this.file = f));
    return this.opening;
  }

  /**
   * The lease holder's tick: starts a run in the background when the last one (this process's,
   * or the archive file's last write) is at least `minIntervalMs` ago. Never blocks the caller
   * (the promise, for tests, settles when the run did; it never rejects).
   */
  runIfDue(): Promise<ArchiveRunReport | undefined> {
    const now = this.options.clock.now();
    const interval = this.options.minIntervalMs ?? DAY_MS;
    if (this.lastRunAt !== undefined && now - this.lastRunAt < interval) return Promise.resolve(undefined);
    this.lastRunAt = now;
    return this.archiveFile()
      .then((file) => {
        const written = file.lastWrittenAt();
        if (written !== undefined && now - written < interval) {
          this.lastRunAt = written;
          return;
        }
        return this.run();
      })
      .catch((e: unknown) => {
        this.options.log?.(`history archive: ${e instanceof Error ? e.message : String(e)}`);
        return undefined;
      });
  }

  /** Moves every due task now, batch by batch (one run at a time). */
  run(): Promise<ArchiveRunReport> {
    return this.runs.run(async () => {
      this.running = true;
      try {
        return await this.runNow();
      } finally {
        this.running = false;
      }
    });
  }

  private async runNow(): Promise<ArchiveRunReport> {
    const { store, clock } = this.options;
    const file = await this.archiveFile();
    const keep = clampKeep(this.options.keep?.() ?? DEFAULT_HISTORY_KEEP);
    const report: ArchiveRunReport = { moved: 0, batches: 0, changedMeanwhile: 0 };
    const now = clock.now();
    const rule = { keepCount: keep.keepCount, keepSince: now - keep.keepDays * DAY_MS };
    // One look at the whole DB plans the run; each batch is checked again just before it moves.
    const plan = store.read((tx) => tx.archive.duePlan(rule));
    const planned = new Set(plan.flat());
    const size = Math.max(1, this.options.batchSize ?? 200);
    for (let next = 0; next < plan.length;) {
      const batch: string[] = [];
      while (next < plan.length && (batch.length === 0 || batch.length + plan[next].length <= size)) batch.push(...plan[next++]);
      const { schema, copies } = store.read((tx) => ({
        schema: tx.archive.schema(),
        copies: tx.archive.rowsOf(tx.archive.stillMovable(batch, planned)),
      }));
      if (copies.size === 0) continue;
      await file.put(schema, copies, { last_run_at: String(now) });
      // A task that changed meanwhile stays (its change kept): the next run copies it again.
      const removed = await store.mutate((tx) => tx.archive.removeArchived(copies));
      report.moved += removed.length;
      report.batches += 1;
      report.changedMeanwhile += copies.size - removed.length;
      // Deleted rows leave free pages that every later write would still rewrite: drop them.
      if (store.read((tx) => tx.archive.freeShare()) > COMPACT_AT_FREE_SHARE) await store.compact();
      await nextTurn(); // the panel and the scheduler get their turn between batches
    }
    if (report.moved > 0) this.options.log?.(`history archive: moved ${report.moved} finished task(s) in ${report.batches} batch(es)`);
    return report;
  }

  /** Every window's lease tick: an archive copy nobody read for IDLE_UNLOAD_MS leaves memory. */
  unloadIfIdle(): void {
    if (this.file && !this.running && this.options.clock.now() - this.lastReadAt > IDLE_UNLOAD_MS) this.file.unload();
  }

  /** Whether an archive file exists (one stat; nothing is read). */
  hasArchive(): boolean {
    return (this.options.fs ?? fs).existsSync(path.join(this.options.store.directory, ARCHIVE_FILE_NAME));
  }

  /** Whether the task is in the archive and not in the task DB. */
  async isArchived(taskId: string): Promise<boolean> {
    if (this.options.store.read((tx) => tx.tasks.get(taskId))) return false;
    const file = await this.archiveFile();
    return file.exists() && file.rowsOf([taskId]).has(taskId);
  }

  /**
   * Brings an archived task back into the task DB, with the archived tasks sharing its session or
   * worktree (their rows written there first, then taken out of the archive). True when the task
   * is in the task DB afterwards.
   */
  async restore(taskId: string): Promise<boolean> {
    const { store } = this.options;
    if (store.read((tx) => tx.tasks.get(taskId))) return true;
    const file = await this.archiveFile();
    this.lastReadAt = this.options.clock.now();
    if (!file.exists()) return false;
    const group = file.read((db) => groupIn(db, taskId)) ?? [];
    const copies = file.rowsOf(group);
    if (!copies.has(taskId)) return false;
    await store.mutate((tx) => {
      for (const [id, rows] of copies) if (!tx.tasks.get(id)) tx.archive.restore(id, rows);
    });
    await file.remove([...copies.keys()]);
    return true;
  }

  /** Removes the task's archived copy, if any (after a Delete: a copy left by a crash must not come back). */
  async forget(taskId: string): Promise<number> {
    const file = await this.archiveFile();
    return file.exists() ? file.remove([taskId]) : 0;
  }

  /**
   * One page of History (newest first): the task DB's rows (`live`, already newest first), then
   * the archive's, both matching `filter`. The archive is read only when the page reaches past
   * the task DB's rows, or to count them.
   */
  async page(
    live: readonly HistoryRow[],
    query: { offset: number; limit: number; filter?: HistoryFilter; countArchived?: boolean },
  ): Promise<HistoryPage> {
    const liveRows = live.filter((r) => matchesHistoryFilter(r, query.filter));
    const end = query.offset + query.limit;
    const rows: HistoryPageRow[] = liveRows.slice(query.offset, end).map((row) => ({ row }));
    let total = liveRows.length;
    if (end > liveRows.length || query.countArchived || query.filter) {
      const file = await this.archiveFile();
      this.lastReadAt = this.options.clock.now();
      if (file.exists()) {
        const now = this.options.clock.now();
        const liveIds = new Set(this.options.store.read((tx) => tx.archive.allTaskIds()));
        const found = file.read((db) => {
          const ids = archivedHistoryIds(db, query.filter).filter((id) => !liveIds.has(id));
          const from = Math.max(0, query.offset - liveRows.length);
          const want = Math.max(0, end - Math.max(query.offset, liveRows.length));
          return { count: ids.length, entries: want > 0 ? archivedEntries(db, ids.slice(from, from + want), now) : [] };
        });
        if (found) {
          total += found.count;
          for (const entry of found.entries) {
            const row = deriveHistoryRow(entry.task, now, { check: entry.check, broughtHome: entry.isolation?.broughtHome?.kind });
            if (row) rows.push({ row, archived: entry });
          }
        }
      }
    }
    return { rows, total };
  }

  async close(): Promise<void> {
    await this.runs.idle();
    await this.file?.close();
  }
}

/**
 * The task DB's History, newest first: derived from the task rows, never stored; 0 or 1 row per task,
 * each with what it came to (its check and its branch's fate count: src/core/outcome.ts).
 */
export function historyRowsOf(tx: Pick<StoreReadTx, 'tasks' | 'checks' | 'isolation' | 'pullRequests'>, now: number): HistoryRow[] {
  const checks = tx.checks.all();
  const fates = outcomeFactsOf(tx);
  return tx.tasks
    .list({ historyVisible: true })
    .flatMap((t) => deriveHistoryRow(t, now, { check: checks.get(t.id), ...fates.get(t.id) }) ?? [])
    .sort((a, b) => b.triggeredAt - a.triggeredAt);
}
