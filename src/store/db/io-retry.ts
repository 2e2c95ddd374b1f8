/**
 * A failed system call (EBUSY, EIO, EMFILE, ENOSPC...) is a passing fault, never corruption: the
 * attempt is retried with a short backoff, then reported as StoreError 'IO' with one notice.
 */
import path from 'node:path';
import type { Clock } from '../../core/clock';
import { isIoError } from './db-file';
import { StoreError, type StoreNotice } from '../errors';
import type { StoreStats } from '../store-types';

/** An I/O failure notice is repeated at most this often (a failing disk must not flood the user). */
const IO_NOTICE_INTERVAL_MS = 60_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface IoRetryOptions {
  /** Attempts in all (default 6). */
  attempts?: number;
  /** Wait before the second attempt, doubled for each further one (default 10 ms). */
  baseDelayMs?: number;
}

export class IoRetry {
  private readonly attempts: number;
  private readonly baseDelayMs: number;
  private lastNoticeAt = -Infinity;

  constructor(
    options: IoRetryOptions,
    private readonly file: string,
    private readonly clock: Clock,
    private readonly stats: Pick<StoreStats, 'ioRetries' | 'ioFailures'>,
    private readonly notify: (notice: StoreNotice) => void,
  ) {
    this.attempts = Math.max(1, options.attempts ?? 6);
    this.baseDelayMs = Math.max(0, options.baseDelayMs ?? 10);
  }

  /** Runs one attempt; a failed system call is retried with backoff, then reported as StoreError 'IO'. */
  async run<T>(what: string, attempt: () => Promise<T>): Promise<T> {
    for (let n = 1; ; n++) {
      try {
        return await attempt();
      } catch (err) {
        if (!isIoError(err)) throw err;
        if (n >= this.attempts) {
          this.stats.ioFailures += 1;
          const message = `${what} failed: ${err.code} on ${err.syscall}${err.path ? ` ${path.basename(err.path)}` : ''} (tried ${n} times). Nothing was lost; the change was not saved.`;
          const now = this.clock.now();
          if (now - this.lastNoticeAt >= IO_NOTICE_INTERVAL_MS) {
            this.lastNoticeAt = now;
            this.notify({
              kind: 'io-error',
              file: this.file,
              code: err.code ?? 'EIO',
              at: now,
              message: `The off-peak task database could not be accessed: ${message}`,
            });
          }
          throw new StoreError('IO', message, { cause: err });
        }
        this.stats.ioRetries += 1;
        await sleep(this.baseDelayMs * 2 ** (n - 1));
      }
    }
  }
}
