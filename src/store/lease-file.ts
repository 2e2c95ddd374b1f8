/**
 * The leader lease (DESIGN §5) lives in its own small file beside the DB, `<name>.lease`, so
 * renewing it every few seconds never rewrites the DB file and never makes other windows reload.
 * It holds `{ leases: { [name]: LeaseRecord } }`, is replaced atomically (temp + rename) under
 * the store's file lock, and is read without the lock by windows that only want to know whether
 * the lease is still held. Power-loss durability is not needed: after a power loss every holder
 * is gone and the lease has expired anyway.
 */
import type { LeaseRecord } from '../core/types';
import { newToken } from '../core/ids';
import { writeFileAtomic, type StoreFs } from './db-file';
import { invalidInput } from './errors';

export type LeaseResult =
  | { held: true; lease: LeaseRecord; /** true when this call started a new holding (new token). */ acquired: boolean }
  | { held: false; /** The current holder, if any. */ current: LeaseRecord | undefined };

export type LeaseTable = Record<string, LeaseRecord>;

export function checkTtl(ttlMs: number): void {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw invalidInput(`lease ttl must be a positive number of ms, got ${ttlMs}`);
}

function isLeaseRecord(value: unknown): value is LeaseRecord {
  const r = value as LeaseRecord;
  return typeof r === 'object' && r !== null && typeof r.holder === 'string' && typeof r.token === 'string' && Number.isFinite(r.expiresAt);
}

/**
 * Reads the lease table. A missing file is no lease; unreadable JSON (a torn write cannot happen
 * with rename, but a user may edit it) counts as no lease: the next acquire rewrites it.
 * I/O errors are thrown: "cannot tell" must not be taken for "free".
 */
export function readLeaseTable(fsys: StoreFs, file: string): LeaseTable {
  let text: string;
  try {
    text = fsys.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  try {
    const parsed = (JSON.parse(text) as { leases?: unknown }).leases;
    const table: LeaseTable = {};
    if (typeof parsed === 'object' && parsed !== null) {
      for (const [name, record] of Object.entries(parsed)) if (isLeaseRecord(record)) table[name] = { ...record, name };
    }
    return table;
  } catch {
    return {};
  }
}

/** Replaces the lease file; false (nothing written) when `beforeRename` says no (the lock was lost). */
export function writeLeaseTable(fsys: StoreFs, file: string, table: LeaseTable, beforeRename?: () => boolean): boolean {
  return writeFileAtomic(file, Buffer.from(JSON.stringify({ leases: table })), { durable: false, fs: fsys, beforeRename });
}

/**
 * The lease rules, on a table in memory. Each returns the result and whether the table changed.
 * acquire: takes the lease if free or expired, extends it if `holder` holds it; refused while
 * another holder's lease is unexpired (expires_at > now).
 */
export function acquireLease(table: LeaseTable, name: string, holder: string, ttlMs: number, now: number): { result: LeaseResult; changed: boolean } {
  checkTtl(ttlMs);
  if (!holder) throw invalidInput('lease holder must not be empty');
  const current = table[name];
  if (current && current.expiresAt > now && current.holder !== holder) return { result: { held: false, current }, changed: false };
  if (current && current.expiresAt > now) {
    const lease = { ...current, renewedAt: now, expiresAt: now + ttlMs };
    table[name] = lease;
    return { result: { held: true, lease, acquired: false }, changed: true };
  }
  const lease: LeaseRecord = { name, holder, token: newToken(), acquiredAt: now, renewedAt: now, expiresAt: now + ttlMs };
  table[name] = lease;
  return { result: { held: true, lease, acquired: true }, changed: true };
}

/** Extends a holding identified by its token; refused once it expired or was taken over. */
export function renewLease(table: LeaseTable, name: string, token: string, ttlMs: number, now: number): { result: LeaseResult; changed: boolean } {
  checkTtl(ttlMs);
  const current = table[name];
  if (!current || current.token !== token || current.expiresAt <= now) return { result: { held: false, current }, changed: false };
  const lease = { ...current, renewedAt: now, expiresAt: now + ttlMs };
  table[name] = lease;
  return { result: { held: true, lease, acquired: false }, changed: true };
}

/** Gives the lease up (clean shutdown) so another window need not wait for expiry. */
export function releaseLease(table: LeaseTable, name: string, token: string): { result: boolean; changed: boolean } {
  if (table[name]?.token !== token) return { result: false, changed: false };
  delete table[name];
  return { result: true, changed: true };
}
