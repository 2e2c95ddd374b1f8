/**
 * A cross-process exclusive lock for one file, usable by every VS Code window on the machine.
 *
 * The lock is a file `<file>.lock` created with O_EXCL ('wx') holding the owner as JSON
 * {token, pid, hostname, acquiredAt}. It is stale when its owner process is gone (same host, pid
 * not alive: detected at once, e.g. after SIGKILL), when its heartbeat (the file's mtime) is older
 * than `staleMs` (other hosts, frozen processes), or when it has no readable owner for longer than
 * a short grace (a crash between create and write).
 *
 * Breaking a stale lock can, in a rare race, take a lock from a live owner that only looked
 * stale; the owner finds out through `isHeld()`, which the store checks right before it renames
 * its new file into place, and then persists nothing. Nothing here throws out of a timer: a
 * heartbeat that finds the lock gone marks the handle compromised and reports a notice.
 * (A lock file rather than a lock directory: one create and one unlink per mutation, measurably
 * cheaper on a busy disk; see bench/store.bench.ts.)
 */
import { hostname as osHostname } from 'node:os';
import * as fs from 'node:fs';
import path from 'node:path';
import { newToken } from '../../core/ids';
import { sweepSiblings } from './db-file';
import { StoreError, type StoreNotice } from '../errors';
import { isProcessAlive } from '../../core/process-alive';

export interface FileLockOptions {
  /** Age of an un-heartbeaten lock after which it is taken over. Default 10 s. */
  staleMs?: number;
  /** How often a held lock refreshes its heartbeat. Default staleMs / 4. */
  heartbeatMs?: number;
  /** Give up waiting after this long (LOCK_TIMEOUT). Default 30 s. */
  acquireTimeoutMs?: number;
  /** Upper bound of the randomised wait between attempts. Default 12 ms. */
  maxRetryDelayMs?: number;
  onNotice?: (notice: StoreNotice) => void;
  /** Injectable for tests; defaults to `process.kill(pid, 0)`. */
  isProcessAlive?: (pid: number) => boolean;
}

interface OwnerInfo {
  token: string;
  pid: number;
  hostname: string;
  acquiredAt: number;
}

export interface LockHandle {
  readonly token: string;
  /** Re-reads the lock's owner: true while this handle still owns it. Never throws. */
  isHeld(): boolean;
  /** True once a heartbeat found the lock taken over. */
  readonly compromised: boolean;
  /** Releases the lock if still ours. Idempotent; never throws. */
  release(): void;
}

/** A lock file with no readable owner is judged by age after this long at most. */
const OWNERLESS_GRACE_MS = 2000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class FileLock {
  readonly staleMs: number;
  private readonly heartbeatMs: number;
  private readonly acquireTimeoutMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly isProcessAlive: (pid: number) => boolean;
  private readonly host = osHostname();

  constructor(
    /** The lock file, e.g. `<dir>/tasks-index.sqlite.lock`. */
    readonly lockPath: string,
    private readonly options: FileLockOptions = {},
  ) {
    this.staleMs = options.staleMs ?? 10_000;
    this.heartbeatMs = options.heartbeatMs ?? Math.max(50, Math.floor(this.staleMs / 4));
    this.acquireTimeoutMs = options.acquireTimeoutMs ?? 30_000;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 12;
    this.isProcessAlive = options.isProcessAlive ?? isProcessAlive;
  }

  /** Waits for the lock (randomised polling) up to acquireTimeoutMs. */
  async acquire(): Promise<LockHandle> {
    const deadline = Date.now() + this.acquireTimeoutMs;
    let delay = 1;
    for (;;) {
      const handle = this.tryAcquire();
      if (handle) return handle;
      if (Date.now() >= deadline) {
        throw new StoreError(
          'LOCK_TIMEOUT',
          `timed out after ${this.acquireTimeoutMs} ms waiting for ${this.lockPath} (held by ${this.describeOwner()})`,
        );
      }
      await sleep(1 + Math.random() * delay);
      delay = Math.min(this.maxRetryDelayMs, delay * 2);
    }
  }

  /** One attempt: the lock, or undefined if someone else holds it (stale locks are broken here). */
  tryAcquire(): LockHandle | undefined {
    const token = newToken();
    const owner: OwnerInfo = { token, pid: process.pid, hostname: this.host, acquiredAt: Date.now() };
    let fd: number;
    try {
      fd = fs.openSync(this.lockPath, 'wx', 0o600);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        // The directory vanished (deleted by hand, storage reset): recreate it and try again.
        fs.mkdirSync(path.dirname(this.lockPath), { recursive: true });
        return undefined;
      }
      if (code !== 'EEXIST' && code !== 'EPERM' && code !== 'EACCES' && code !== 'EBUSY') throw err;
      this.breakIfStale();
      return undefined;
    }
    try {
      fs.writeSync(fd, JSON.stringify(owner));
    } finally {
      fs.closeSync(fd);
    }
    return this.makeHandle(token);
  }

  private readOwner(file = this.lockPath): OwnerInfo | undefined {
    try {
      const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as OwnerInfo;
      return typeof parsed.token === 'string' ? parsed : undefined;
    } catch {
      return undefined;
    }
  }

  private describeOwner(): string {
    const o = this.readOwner();
    return o ? `pid ${o.pid} on ${o.hostname}` : 'unknown owner';
  }

  /** Why the current lock is stale, or undefined if it is live (or gone). */
  private staleReason(owner: OwnerInfo | undefined): string | undefined {
    let mtimeMs: number;
    try {
      mtimeMs = fs.statSync(this.lockPath).mtimeMs;
    } catch {
      return undefined; // released meanwhile: just retry
    }
    const age = Date.now() - mtimeMs;
    if (!owner) return age > Math.min(OWNERLESS_GRACE_MS, this.staleMs) ? `no owner recorded for ${Math.round(age)} ms` : undefined;
    if (owner.hostname === this.host && owner.pid !== process.pid && !this.isProcessAlive(owner.pid)) {
      return `owner pid ${owner.pid} is not running`;
    }
    if (age > this.staleMs) return `no heartbeat for ${Math.round(age)} ms`;
    return undefined;
  }

  private breakIfStale(): void {
    const owner = this.readOwner();
    const reason = this.staleReason(owner);
    if (!reason) return;
    const grave = `${this.lockPath}.stale-${newToken()}`;
    try {
      fs.renameSync(this.lockPath, grave);
    } catch {
      return; // someone else broke or released it first
    }
    const moved = this.readOwner(grave);
    if (moved?.token !== owner?.token) {
      // We moved a lock that was re-taken after we judged it stale: put it back unless a newer
      // one exists (link() never overwrites). Its owner would otherwise see isHeld() === false.
      try {
        fs.linkSync(grave, this.lockPath);
        fs.unlinkSync(grave);
        return;
      } catch {
        // fall through: it stays broken, its owner persists nothing
      }
    }
    fs.rmSync(grave, { force: true });
    this.options.onNotice?.({
      kind: 'stale-lock-broken',
      file: this.lockPath,
      previousOwner: owner ? `pid ${owner.pid} on ${owner.hostname}` : 'unknown',
      at: Date.now(),
      message: `Took over a stale lock on ${path.basename(this.lockPath)} (${reason}).`,
    });
  }

  private makeHandle(token: string): LockHandle {
    let released = false;
    let compromised = false;
    const isHeld = (): boolean => !released && this.readOwner()?.token === token;
    const heartbeat = setInterval(() => {
      try {
        if (!isHeld()) {
          compromised = true;
          clearInterval(heartbeat);
          this.options.onNotice?.({
            kind: 'lock-compromised',
            file: this.lockPath,
            at: Date.now(),
            message: `The lock on ${path.basename(this.lockPath)} was taken over while held; the pending write will not be persisted.`,
          });
          return;
        }
        const now = new Date();
        fs.utimesSync(this.lockPath, now, now);
      } catch {
        // A failed heartbeat is not fatal; staleness is judged by others, ownership by isHeld().
      }
    }, this.heartbeatMs);
    heartbeat.unref?.();
    return {
      token,
      isHeld,
      get compromised() {
        return compromised;
      },
      release: () => {
        if (released) return;
        released = true;
        clearInterval(heartbeat);
        try {
          if (this.readOwner()?.token === token) fs.unlinkSync(this.lockPath);
        } catch {
          // Already broken by someone else: nothing to release.
        }
      },
    };
  }

  /** Removes leftovers (stale lock files moved aside) of crashed processes older than staleMs. */
  sweepLeftovers(): void {
    sweepSiblings(this.lockPath, (suffix) => suffix.startsWith('.stale-'), this.staleMs);
  }
}
