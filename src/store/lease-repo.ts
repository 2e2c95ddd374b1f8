/**
 * The leader lease (DESIGN §5): one row per lease name, written under the store's file lock.
 * Only the holder runs sync, the scheduler and the settle flush. A holder that dies simply stops
 * renewing; once `expires_at` passes, another window takes over.
 */
import type { LeaseRecord } from '../core/types';
import { newToken } from '../core/ids';
import { invalidInput } from './errors';
import { leaseFromRow } from './rows';
import type { SqlDb } from './sql';

export type LeaseResult =
  | { held: true; lease: LeaseRecord; /** true when this call started a new holding (new token). */ acquired: boolean }
  | { held: false; /** The current holder, if any. */ current: LeaseRecord | undefined };

function checkTtl(ttlMs: number): void {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw invalidInput(`lease ttl must be a positive number of ms, got ${ttlMs}`);
}

export class LeaseRepo {
  constructor(
    private readonly db: SqlDb,
    private readonly now: number,
  ) {}

  get(name: string): LeaseRecord | undefined {
    const row = this.db.get('SELECT * FROM off_peak_leases WHERE name = ?', [name]);
    return row ? leaseFromRow(row) : undefined;
  }

  /**
   * Takes the lease if it is free or expired, or extends it if `holder` already holds it.
   * Refused while another holder's lease is unexpired (expires_at > now).
   */
  acquire(name: string, holder: string, ttlMs: number): LeaseResult {
    checkTtl(ttlMs);
    if (!holder) throw invalidInput('lease holder must not be empty');
    const current = this.get(name);
    const now = this.now;
    if (current && current.expiresAt > now && current.holder !== holder) return { held: false, current };
    if (current && current.expiresAt > now && current.holder === holder) {
      this.db.run('UPDATE off_peak_leases SET renewed_at = ?, expires_at = ? WHERE name = ? AND token = ?', [now, now + ttlMs, name, current.token]);
      return { held: true, lease: this.get(name)!, acquired: false };
    }
    const token = newToken();
    this.db.run(
      `INSERT INTO off_peak_leases (name, holder, token, acquired_at, renewed_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, token = excluded.token, acquired_at = excluded.acquired_at,
         renewed_at = excluded.renewed_at, expires_at = excluded.expires_at`,
      [name, holder, token, now, now, now + ttlMs],
    );
    return { held: true, lease: this.get(name)!, acquired: true };
  }

  /** Extends a holding identified by its token; refused once it expired or was taken over. */
  renew(name: string, token: string, ttlMs: number): LeaseResult {
    checkTtl(ttlMs);
    const changed = this.db.run('UPDATE off_peak_leases SET renewed_at = ?, expires_at = ? WHERE name = ? AND token = ? AND expires_at > ?', [
      this.now,
      this.now + ttlMs,
      name,
      token,
      this.now,
    ]);
    if (changed === 1) return { held: true, lease: this.get(name)!, acquired: false };
    return { held: false, current: this.get(name) };
  }

  /** Gives the lease up (clean shutdown) so another window need not wait for expiry. */
  release(name: string, token: string): boolean {
    return this.db.run('DELETE FROM off_peak_leases WHERE name = ? AND token = ?', [name, token]) === 1;
  }
}
