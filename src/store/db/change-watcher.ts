/**
 * Notices other processes' writes to the DB file: a watch on its directory, backed up by a slow
 * poll because fs.watch is not reliable everywhere (network drives, some containers). The poll is
 * slow, and put off by every other look at the file (`lookedAt()`), because each wake-up of an
 * idle window costs about a millisecond of CPU; reads check the file's generation anyway.
 */
import * as fs from 'node:fs';
import path from 'node:path';

/** How often a window looks at the DB file itself, with and without a working directory watcher. */
export const WATCHED_POLL_MS = 60_000;
const UNWATCHED_POLL_MS = 1000;
/** Watch events come in bursts (temp file, rename): one check this long after the burst. */
const BURST_SETTLE_MS = 15;

export interface ChangeWatcherOptions {
  /** The DB file; its directory is watched. */
  filePath: string;
  /** Looks at the file (and loads another process's write). Must not throw. */
  check: () => void;
  /** Poll period; defaults to WATCHED_POLL_MS, or UNWATCHED_POLL_MS when the watch could not start. */
  pollMs?: number;
  /** The directory could not be watched: changes are picked up by polling only. */
  onWatchFailed: (err: Error) => void;
}

export class ChangeWatcher {
  private watcher: fs.FSWatcher | undefined;
  private readonly pollTimer: NodeJS.Timeout;
  private checkTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: ChangeWatcherOptions) {
    const directory = path.dirname(options.filePath);
    const base = path.basename(options.filePath);
    try {
      this.watcher = fs.watch(directory, { persistent: false }, (_event, name) => {
        if (name === null || name === base) this.checkAfterBurst();
      });
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch (err) {
      options.onWatchFailed(err as Error);
    }
    // The poll checks at once (no second wake-up through checkAfterBurst).
    this.pollTimer = setInterval(options.check, options.pollMs ?? (this.watcher ? WATCHED_POLL_MS : UNWATCHED_POLL_MS));
    this.pollTimer.unref?.();
  }

  /** The file was just looked at (a read, a mutation): the poll need not, for another full period. */
  lookedAt(): void {
    this.pollTimer.refresh();
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    this.watcher = undefined;
    clearInterval(this.pollTimer);
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.checkTimer = undefined;
  }

  private checkAfterBurst(): void {
    if (this.closed || this.checkTimer) return;
    this.checkTimer = setTimeout(() => {
      this.checkTimer = undefined;
      this.options.check();
    }, BURST_SETTLE_MS);
    this.checkTimer.unref?.();
  }
}
