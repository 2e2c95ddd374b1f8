/**
 * Bytes on disk: the generation stamp, the atomic persist and moving a bad file aside.
 *
 * Generation: every persist stamps a counter into the SQLite header's "file change counter"
 * (offset 24, mirrored at 92 "version-valid-for" so the header stays self-consistent), the very
 * field SQLite itself uses to tell that a file changed. Checking whether another process wrote
 * is then a 28-byte read, exact even when inode numbers are reused and mtimes are coarse.
 */
import * as fs from 'node:fs';
import path from 'node:path';

const CHANGE_COUNTER_OFFSET = 24;
const VERSION_VALID_FOR_OFFSET = 92;
const HEADER_BYTES = 100;

/** What identifies one written version of the file. `missing` when there is no file. */
export type Generation = string;
export const MISSING: Generation = 'missing';

function generationKey(counter: number, size: number): Generation {
  return `${counter}:${size}`;
}

/** The generation of an in-memory copy of the file. */
export function generationOfBytes(bytes: Uint8Array): Generation {
  if (bytes.length < HEADER_BYTES) return generationKey(-1, bytes.length);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return generationKey(view.getUint32(CHANGE_COUNTER_OFFSET), bytes.length);
}

export function counterOfBytes(bytes: Uint8Array): number {
  if (bytes.length < HEADER_BYTES) return 0;
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(CHANGE_COUNTER_OFFSET);
}

/** Stamps `counter` into an exported image (in place). */
export function stampGeneration(bytes: Uint8Array, counter: number): Generation {
  if (bytes.length >= HEADER_BYTES) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    view.setUint32(CHANGE_COUNTER_OFFSET, counter >>> 0);
    view.setUint32(VERSION_VALID_FOR_OFFSET, counter >>> 0);
  }
  return generationOfBytes(bytes);
}

/** The generation of the file on disk: one open, one 28-byte read, one fstat. */
export function readGeneration(file: string): Generation {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return MISSING;
    throw err;
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size < HEADER_BYTES) return generationKey(-1, size);
    const buf = Buffer.alloc(4);
    fs.readSync(fd, buf, 0, 4, CHANGE_COUNTER_OFFSET);
    return generationKey(buf.readUInt32BE(0), size);
  } finally {
    fs.closeSync(fd);
  }
}

let tempSeq = 0;

/** Temp files are `<file>.<pid>.<seq>.tmp` in the same directory (rename must not cross devices). */
export function tempPathFor(file: string): string {
  tempSeq += 1;
  return `${file}.${process.pid}.${tempSeq}.tmp`;
}

export interface PersistOptions {
  /** fsync the file and its directory (durable across power loss). Default true. */
  durable: boolean;
  /** Last check before the rename: false aborts the persist (e.g. the file lock was lost). */
  beforeRename?: () => boolean;
}

/**
 * Writes `bytes` to a temp file in the same directory, fsyncs it, and renames it over `file`.
 * Returns false (and leaves `file` untouched) when `beforeRename` says no.
 */
export function writeFileAtomic(file: string, bytes: Uint8Array, options: PersistOptions): boolean {
  const temp = tempPathFor(file);
  const fd = fs.openSync(temp, 'w', 0o600);
  let renamed = false;
  try {
    let offset = 0;
    while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
    if (options.durable) fs.fdatasyncSync(fd);
    fs.closeSync(fd);
    if (options.beforeRename && !options.beforeRename()) return false;
    // Keep the old version linked under a private name across the rename, so the rename does not
    // free its blocks while we hold the lock; the unlink happens afterwards, off the event loop.
    const previous = `${temp}.old`;
    let linked = false;
    try {
      fs.linkSync(file, previous);
      linked = true;
    } catch {
      // no current file, or no hard links on this file system: the rename frees it, that is all
    }
    renameWithRetry(temp, file);
    renamed = true;
    if (linked) fs.unlink(previous, () => undefined);
  } finally {
    if (!renamed) {
      try {
        fs.closeSync(fd);
      } catch {
        // already closed
      }
      fs.rmSync(temp, { force: true });
    }
  }
  if (options.durable) fsyncDirectory(path.dirname(file));
  return true;
}

/**
 * On Windows a rename over a file another process has open (a window reading it, an antivirus
 * scan) fails for a moment with EPERM/EBUSY/EACCES: retry briefly before giving up.
 */
function renameWithRetry(from: string, to: string): void {
  for (let attempt = 0; ; attempt++) {
    try {
      fs.renameSync(from, to);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (attempt >= 10 || (code !== 'EPERM' && code !== 'EBUSY' && code !== 'EACCES')) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/** Makes a rename durable. Not supported on every platform (Windows): best effort. */
export function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // EISDIR/EPERM on some platforms: the rename is still atomic, only less durable.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Moves a bad DB file aside as `<file>.corrupt-<timestamp>`; never deletes it. Returns the new path. */
export function moveAside(file: string, now: number): string {
  const stamp = new Date(now).toISOString().replace(/[:.]/g, '-');
  let target = `${file}.corrupt-${stamp}`;
  for (let n = 1; fs.existsSync(target); n++) target = `${file}.corrupt-${stamp}-${n}`;
  fs.renameSync(file, target);
  return target;
}

/**
 * Removes files beside `file` whose name starts with its name and matches `isLeftover`, when older
 * than `olderThanMs`: what crashed processes left behind. Best effort; never throws.
 */
export function sweepSiblings(file: string, isLeftover: (suffix: string) => boolean, olderThanMs: number): void {
  const dir = path.dirname(file);
  const base = path.basename(file);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(`${base}.`) || !isLeftover(name.slice(base.length))) continue;
    const full = path.join(dir, name);
    try {
      if (Date.now() - fs.statSync(full).mtimeMs > olderThanMs) fs.rmSync(full, { force: true });
    } catch {
      // gone already, or raced with its owner: fine
    }
  }
}

/** Removes temp files of crashed writers (older than `olderThanMs`). */
export function sweepTempFiles(file: string, olderThanMs: number): void {
  sweepSiblings(file, (suffix) => /\.\d+\.\d+\.tmp(\.old)?$/.test(suffix), olderThanMs);
}
