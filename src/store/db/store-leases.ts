/**
 * The leases the store keeps as files beside the DB (lease-file.ts holds the file format and the
 * rules). A lease held by someone else is answered from a lockless read, and the holder's
 * extension only sets the lease file's mtime: neither takes the lock or writes data. Taking a
 * free or expired lease, or giving one up, goes under the DB's file lock. Nothing here touches
 * the DB file, so a lease never makes another window reload.
 */
import type { Clock } from '../../core/clock';
import type { StoreFs } from './db-file';
import { StoreError } from '../errors';
import {
  acquireDecision,
  checkTtl,
  leaseFileFor,
  newLeaseContent,
  readLeaseFile,
  touchLease,
  writeLeaseFile,
  type LeaseHolding,
  type LeaseResult,
} from './lease-file';
import type { StoreStats } from '../store-types';

/** A holder renews without the lock only while more than this share of its ttl remains. */
const LOCKLESS_RENEW_MARGIN = 0.1;
/**
 * acquire by the holder touches the lease file only once this share of the ttl has passed since
 * the last renewal: a holder checking every few seconds renews a few times per ttl.
 */
const RENEW_AFTER_SHARE = 1 / 3;

/** What the leases need from their store. */
export interface LeaseStoreAccess {
  dbFile: string;
  fsys: StoreFs;
  clock: Clock;
  isProcessAlive: (pid: number) => boolean;
  stats: Pick<StoreStats, 'leaseWrites' | 'leaseRenewals'>;
  /** Throws StoreError 'CLOSED' once the store is closed. */
  assertOpen(): void;
  /** Runs `fn` under the DB's file lock, in turn with the store's mutations, I/O errors retried. */
  underLock<T>(what: string, fn: () => T | Promise<T>): Promise<T>;
  /** Runs `fn` in turn with the store's mutations, I/O errors retried, without the lock. */
  inTurn<T>(what: string, fn: () => T): Promise<T>;
}

export class StoreLeases {
  constructor(private readonly store: LeaseStoreAccess) {}

  /** The lease as its file says now (no lock). Undefined when there is none or the file cannot be read at the moment. */
  read(name: string): LeaseHolding | undefined {
    try {
      return readLeaseFile(this.store.fsys, leaseFileFor(this.store.dbFile, name), name);
    } catch {
      return undefined;
    }
  }

  /** Takes the lease if free, expired or orphaned, or extends it for its holder. */
  async acquire(name: string, holder: string, ttlMs: number): Promise<LeaseResult> {
    checkTtl(ttlMs);
    if (!holder) throw new StoreError('INVALID_INPUT', 'lease holder must not be empty');
    const { fsys, clock, isProcessAlive } = this.store;
    const file = leaseFileFor(this.store.dbFile, name);
    this.store.assertOpen();
    const current = this.read(name);
    const now = clock.now();
    const decision = acquireDecision(current, holder, now, isProcessAlive);
    if (current && decision === 'refuse') return { held: false, current };
    if (current && decision === 'extend') {
      if (now - current.renewedAt < ttlMs * RENEW_AFTER_SHARE) return { held: true, lease: current, acquired: false };
      const renewed = await this.renew(name, current.token, ttlMs).catch(() => undefined);
      if (renewed?.held) return renewed;
    }
    return this.store.underLock('taking the leader lease', async () => {
      const now2 = clock.now();
      const latest = readLeaseFile(fsys, file, name);
      const decision = acquireDecision(latest, holder, now2, isProcessAlive);
      if (decision === 'refuse') return { held: false, current: latest };
      if (decision === 'extend' && latest) {
        // Under the lock no takeover can race: extend however close to expiry (a new ttl: new holding).
        const extended = touchLease(fsys, file, name, latest.token, ttlMs, now2, 0);
        if (extended.held) return extended;
      }
      const content = newLeaseContent(holder, ttlMs, now2);
      if (await writeLeaseFile(fsys, file, content, now2, () => true)) this.store.stats.leaseWrites += 1;
      return {
        held: true,
        lease: { name, holder, token: content.token, acquiredAt: now2, renewedAt: now2, expiresAt: now2 + ttlMs },
        acquired: true,
      };
    });
  }

  /** Extends the holding `token` by setting the lease file's mtime (no lock, no data written). */
  renew(name: string, token: string, ttlMs: number): Promise<LeaseResult> {
    return this.store.inTurn('renewing the leader lease', () => {
      checkTtl(ttlMs);
      const result = touchLease(
        this.store.fsys,
        leaseFileFor(this.store.dbFile, name),
        name,
        token,
        ttlMs,
        this.store.clock.now(),
        ttlMs * LOCKLESS_RENEW_MARGIN,
      );
      if (result.held) this.store.stats.leaseRenewals += 1;
      return result;
    });
  }

  /** Gives the lease up (clean shutdown) so another window need not wait for expiry. */
  release(name: string, token: string): Promise<boolean> {
    const file = leaseFileFor(this.store.dbFile, name);
    return this.store.underLock('releasing the leader lease', () => {
      if (readLeaseFile(this.store.fsys, file, name)?.token !== token) return false;
      this.store.fsys.rmSync(file, { force: true });
      this.store.stats.leaseWrites += 1;
      return true;
    });
  }
}
