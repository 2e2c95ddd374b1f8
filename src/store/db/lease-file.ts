/**
 * The leader lease is a small file beside the DB, so keeping it never rewrites the
 * DB file and never makes another window reload.
 *
 * One file per lease name (`tasks-index.lease` for 'leader') holding `{holder, token,
 * acquiredAt, ttlMs, pid, host}`; the file's mtime is the last renewal, so expires_at = mtime + ttl.
 * The holder's process is recorded too: every window sharing a globalStorage runs on one machine,
 * so a holder whose process is gone (crashed, SIGKILLed) is replaced at once, not at expiry. That
 * lets the ttl be long and renewals rare, and a frozen holder still loses the lease at expiry.
 *  - acquire (free or expired lease, or a new holder): under the store's file lock, a new file
 *    with a new token replaces the old one atomically (temp + rename), its mtime set to now;
 *  - renew: the holder opens the file, checks the token and that the lease is not about to
 *    expire, and sets the mtime to now (futimes): no data written, no lock taken. A takeover always
 *    replaces the file, never edits it, so after touching, the holder checks that the path still
 *    names the file it touched;
 *  - read: anyone, without the lock: one open, fstat and small read.
 * Power-loss durability is not needed: after a power loss every holder is gone and the lease has
 * expired anyway.
 */
import { hostname } from 'node:os';
import type { LeaseRecord } from '../../core/types';
import { newToken } from '../../core/ids';
import { readOpenFile, type StoreFs } from './db-file';
import { renameReplacing, tempPathFor } from '../../files/file-replace';
import { invalidInput } from '../errors';

export type LeaseResult =
  | { held: true; lease: LeaseRecord; /** true when this call started a new holding (new token). */ acquired: boolean }
  | { held: false; /** The current holder, if any. */ current: LeaseRecord | undefined };

interface LeaseContent {
  holder: string;
  token: string;
  acquiredAt: number;
  ttlMs: number;
  /** The holder's process and host (absent in a file written by hand). */
  pid?: number;
  host?: string;
}

/** A lease as read from its file, with the holder's process. */
export interface LeaseHolding extends LeaseRecord {
  pid: number | null;
  host: string | null;
}

export function checkTtl(ttlMs: number): void {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw invalidInput(`lease ttl must be a positive number of ms, got ${ttlMs}`);
}

/** tasks-index.sqlite + 'leader' -> tasks-index.lease; other names -> tasks-index.<name>.lease. */
export function leaseFileFor(dbFile: string, name = 'leader'): string {
  const base = dbFile.endsWith('.sqlite') ? dbFile.slice(0, -'.sqlite'.length) : dbFile;
  if (name === 'leader') return `${base}.lease`;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) throw invalidInput(`lease name must be letters, digits, _ or - (got ${JSON.stringify(name)})`);
  return `${base}.${name}.lease`;
}

function parseContent(text: string): LeaseContent | undefined {
  try {
    const c = JSON.parse(text) as LeaseContent;
    const ok = typeof c.holder === 'string' && typeof c.token === 'string' && Number.isFinite(c.acquiredAt) && Number.isFinite(c.ttlMs);
    return ok ? c : undefined;
  } catch {
    return undefined; // a user's edit: counts as no lease, the next acquire rewrites it
  }
}

function recordOf(name: string, content: LeaseContent, mtimeMs: number): LeaseHolding {
  return {
    name,
    holder: content.holder,
    token: content.token,
    acquiredAt: content.acquiredAt,
    renewedAt: mtimeMs,
    expiresAt: mtimeMs + content.ttlMs,
    pid: Number.isInteger(content.pid) ? content.pid! : null,
    host: typeof content.host === 'string' ? content.host : null,
  };
}

/** Reads an open lease file: its content and its inode and mtime. */
function readOpen(fsys: StoreFs, fd: number): { content: LeaseContent | undefined; ino: number; mtimeMs: number } {
  const st = fsys.fstatSync(fd);
  const buf = Buffer.alloc(Math.min(st.size, 4096));
  const n = buf.length > 0 ? fsys.readSync(fd, buf, 0, buf.length, 0) : 0;
  return { content: parseContent(buf.subarray(0, n).toString('utf8')), ino: st.ino, mtimeMs: st.mtimeMs };
}

/**
 * The lease in `file`, undefined when there is none. I/O errors are thrown: "cannot tell" must
 * not be taken for "free".
 */
export function readLeaseFile(fsys: StoreFs, file: string, name: string): LeaseHolding | undefined {
  return readOpenFile<LeaseHolding | undefined>(fsys, file, undefined, (fd) => {
    const { content, mtimeMs } = readOpen(fsys, fd);
    return content ? recordOf(name, content, mtimeMs) : undefined;
  });
}

/**
 * Replaces the lease file with a new holding whose mtime is `now` (call under the store's file
 * lock), waiting while another window's read holds it (Windows). False (nothing written) when
 * `beforeRename` says no (the lock was lost).
 */
export async function writeLeaseFile(
  fsys: StoreFs,
  file: string,
  content: LeaseContent,
  now: number,
  beforeRename: () => boolean,
): Promise<boolean> {
  const temp = tempPathFor(file);
  let renamed = false;
  const fd = fsys.openSync(temp, 'w', 0o600);
  try {
    fsys.writeSync(fd, JSON.stringify(content));
    fsys.futimesSync(fd, now / 1000, now / 1000);
  } finally {
    fsys.closeSync(fd);
  }
  try {
    renamed = await renameReplacing(fsys, temp, file, { beforeRename });
    return renamed;
  } finally {
    if (!renamed) fsys.rmSync(temp, { force: true });
  }
}

/**
 * Renews the holding identified by `token` by setting the file's mtime to now: no lock, no data
 * written. Refused when the token is not the file's, the lease expired, or fewer than `marginMs`
 * remain (then the caller re-acquires under the lock, where a takeover cannot race it).
 */
export function touchLease(
  fsys: StoreFs,
  file: string,
  name: string,
  token: string,
  ttlMs: number,
  now: number,
  marginMs: number,
): LeaseResult {
  let fd: number;
  try {
    fd = fsys.openSync(file, 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { held: false, current: undefined };
    throw err;
  }
  try {
    const before = readOpen(fsys, fd);
    const current = before.content ? recordOf(name, before.content, before.mtimeMs) : undefined;
    if (!before.content || !current || current.token !== token || current.expiresAt - now < marginMs || before.content.ttlMs !== ttlMs) {
      return { held: false, current };
    }
    fsys.futimesSync(fd, now / 1000, now / 1000);
    const after = readOpen(fsys, fd);
    // A takeover renames a new file over the path; ours would then be a file nobody reads.
    if (fsys.statSync(file).ino !== after.ino) return { held: false, current: readLeaseFile(fsys, file, name) };
    return { held: true, lease: recordOf(name, before.content, after.mtimeMs), acquired: false };
  } finally {
    fsys.closeSync(fd);
  }
}

/** The holding's process is known to be gone: on this machine, another process, not running. */
export function holderGone(current: LeaseHolding, isProcessAlive: (pid: number) => boolean): boolean {
  return current.host === hostname() && current.pid !== null && current.pid !== process.pid && !isProcessAlive(current.pid);
}

/**
 * The acquire rule: an unexpired lease of a live holder is extended for that holder and refused
 * to anyone else; a free or expired lease, or one whose holder's process is gone, is taken.
 */
export function acquireDecision(
  current: LeaseHolding | undefined,
  holder: string,
  now: number,
  isProcessAlive: (pid: number) => boolean,
): 'refuse' | 'extend' | 'take' {
  if (current && current.expiresAt > now && !holderGone(current, isProcessAlive)) return current.holder === holder ? 'extend' : 'refuse';
  return 'take';
}

export function newLeaseContent(holder: string, ttlMs: number, now: number): LeaseContent {
  if (!holder) throw invalidInput('lease holder must not be empty');
  return { holder, token: newToken(), acquiredAt: now, ttlMs, pid: process.pid, host: hostname() };
}
