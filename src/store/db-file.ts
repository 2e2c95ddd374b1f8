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

/**
 * The file operations the store does on the DB and lease files: node:fs by default, injectable
 * (tests inject EBUSY/EIO/EMFILE faults; the idle bench counts bytes).
 */
export type StoreFs = Pick<
  typeof fs,
  'openSync' | 'readSync' | 'fstatSync' | 'statSync' | 'closeSync' | 'readFileSync' | 'writeSync' | 'fdatasyncSync' | 'fsyncSync' | 'futimesSync' | 'renameSync' | 'linkSync' | 'unlink' | 'rmSync' | 'existsSync'
>;

/** A failed system call (EBUSY, EIO, EMFILE, ENOSPC...): retried and reported, never taken for corruption. */
export function isIoError(err: unknown): err is NodeJS.ErrnoException {
  return typeof (err as NodeJS.ErrnoException | undefined)?.code === 'string' && typeof (err as NodeJS.ErrnoException).syscall === 'string';
}

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

/**
 * Opens `file` for reading, hands the descriptor to `read` and closes it. A missing file gives
 * `missing`; any other error is thrown ("cannot tell" must not read as "not there").
 */
export function readOpenFile<T>(fsys: StoreFs, file: string, missing: T, read: (fd: number) => T): T {
  let fd: number;
  try {
    fd = fsys.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return missing;
    throw err;
  }
  try {
    return read(fd);
  } finally {
    fsys.closeSync(fd);
  }
}

/** The generation of the file on disk: one open, one 28-byte read, one fstat. */
export function readGeneration(file: string, fsys: StoreFs = fs): Generation {
  return readOpenFile(fsys, file, MISSING, (fd) => {
    const size = fsys.fstatSync(fd).size;
    if (size < HEADER_BYTES) return generationKey(-1, size);
    const buf = Buffer.alloc(4);
    fsys.readSync(fd, buf, 0, 4, CHANGE_COUNTER_OFFSET);
    return generationKey(buf.readUInt32BE(0), size);
  });
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
  fs?: StoreFs;
}

/**
 * Writes `bytes` to a temp file (mode 0600) in the same directory, fsyncs it, and renames it over
 * `file`. Returns false (and leaves `file` untouched) when `beforeRename` says no. Any failed call
 * throws and leaves `file` as it was (the temp file is removed, best effort).
 */
export function writeFileAtomic(file: string, bytes: Uint8Array, options: PersistOptions): boolean {
  const fsys = options.fs ?? fs;
  const temp = tempPathFor(file);
  let fd: number | undefined = fsys.openSync(temp, 'w', 0o600);
  let renamed = false;
  try {
    let offset = 0;
    while (offset < bytes.length) offset += fsys.writeSync(fd, bytes, offset, bytes.length - offset);
    if (options.durable) fsys.fdatasyncSync(fd);
    fsys.closeSync(fd);
    fd = undefined;
    if (options.beforeRename && !options.beforeRename()) return false;
    // Keep the old version linked under a private name across the rename, so the rename does not
    // free its blocks while we hold the lock; the unlink happens afterwards, off the event loop.
    const previous = `${temp}.old`;
    let linked = false;
    try {
      fsys.linkSync(file, previous);
      linked = true;
    } catch {
      // no current file, or no hard links on this file system: the rename frees it, that is all
    }
    try {
      fsys.renameSync(temp, file);
      renamed = true;
    } finally {
      if (linked) fsys.unlink(previous, () => undefined);
    }
  } finally {
    if (fd !== undefined) bestEffort(() => fsys.closeSync(fd!));
    if (!renamed) bestEffort(() => fsys.rmSync(temp, { force: true }));
  }
  if (options.durable) fsyncDirectory(path.dirname(file), fsys);
  return true;
}

function bestEffort(fn: () => void): void {
  try {
    fn();
  } catch {
    // cleanup only; a leftover temp file is swept later (sweepTempFiles)
  }
}

/** Makes a rename durable. Not supported on every platform (Windows): best effort. */
export function fsyncDirectory(dir: string, fsys: StoreFs = fs): void {
  let fd: number | undefined;
  try {
    fd = fsys.openSync(dir, 'r');
    fsys.fsyncSync(fd);
  } catch {
    // EISDIR/EPERM on some platforms: the rename is still atomic, only less durable.
  } finally {
    if (fd !== undefined) bestEffort(() => fsys.closeSync(fd!));
  }
}

/** Moves a bad DB file aside as `<file>.corrupt-<timestamp>`; never deletes it. Returns the new path. */
export function moveAside(file: string, now: number, fsys: StoreFs = fs): string {
  const stamp = new Date(now).toISOString().replace(/[:.]/g, '-');
  let target = `${file}.corrupt-${stamp}`;
  for (let n = 1; fsys.existsSync(target); n++) target = `${file}.corrupt-${stamp}-${n}`;
  fsys.renameSync(file, target);
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
