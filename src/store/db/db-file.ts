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
import type { StoreFs } from '../../files/file-replace';

export type { StoreFs } from '../../files/file-replace';

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
    const stat = fsys.fstatSync(fd);
    // Windows opens a folder like a file and gives it size 0: say what it is, as POSIX's read would.
    if (stat.isDirectory())
      throw Object.assign(new Error(`EISDIR: a folder is where the file should be, ${file}`), {
        code: 'EISDIR',
        syscall: 'open',
        path: file,
      });
    const size = stat.size;
    if (size < HEADER_BYTES) return generationKey(-1, size);
    const buf = Buffer.alloc(4);
    fsys.readSync(fd, buf, 0, 4, CHANGE_COUNTER_OFFSET);
    return generationKey(buf.readUInt32BE(0), size);
  });
}

/**
 * The generation marker: `<file>.gen`, a few bytes naming the DB file's current generation,
 * rewritten in place by each writer right after its rename. Readers without the lock (every
 * read, the watcher) look at the marker and open the DB file only when it names a generation
 * they do not have: on Windows, a rename over a file that another window has open fails, so
 * readers must not keep opening the DB itself (src/store/README.md#files-in-the-directory).
 */
export function generationMarkerFor(file: string): string {
  return `${file}.gen`;
}

/** Fixed width, so a rewrite in place never leaves a longer old tail behind. */
const MARKER_BYTES = 40;

/** The marker's generation; undefined when there is no marker or it cannot be read now (then read the DB header). */
export function readGenerationMarker(file: string, fsys: StoreFs = fs): Generation | undefined {
  try {
    return readOpenFile<Generation | undefined>(fsys, generationMarkerFor(file), undefined, (fd) => {
      const buf = Buffer.alloc(MARKER_BYTES);
      const n = fsys.readSync(fd, buf, 0, MARKER_BYTES, 0);
      const text = buf.subarray(0, n).toString('latin1').trim();
      return /^(-?\d+:\d+|missing)$/.test(text) ? text : undefined;
    });
  } catch {
    return undefined;
  }
}

/**
 * Rewrites the marker in place (no rename: a reader may have it open). Best effort: a marker
 * left stale only costs readers a look at the DB header, and the next writer heals it.
 */
export function writeGenerationMarker(file: string, generation: Generation, fsys: StoreFs = fs): void {
  const marker = generationMarkerFor(file);
  let fd: number | undefined;
  try {
    try {
      fd = fsys.openSync(marker, 'r+');
    } catch {
      fd = fsys.openSync(marker, 'w', 0o600);
    }
    fsys.writeSync(fd, Buffer.from(generation.padEnd(MARKER_BYTES, ' '), 'latin1'), 0, MARKER_BYTES, 0);
  } catch {
    // see above: stale at worst
  } finally {
    if (fd !== undefined) {
      try {
        fsys.closeSync(fd);
      } catch {
        // nothing to do
      }
    }
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
