/**
 * Replacing a file atomically on every platform: temp file in the same directory, fsync, rename
 * over the target, fsync of the directory.
 *
 * Windows: a rename over a file that another process has open (another window reading it, an
 * antivirus scanner, a search indexer, a sync client) fails with EPERM, EACCES or EBUSY until
 * that handle is closed. Such a failure is a wait, not an error: the rename is tried again with a
 * growing pause until RENAME_WAIT_BUDGET_MS have passed. The async form (the task DB, the lease,
 * the archive) waits without holding the event loop, so the file lock's heartbeat keeps running;
 * the sync form (files written once at start) waits blocking, with a shorter budget.
 */
import * as fs from 'node:fs';
import path from 'node:path';

/**
 * The file operations the store does on the DB and lease files: node:fs by default, injectable
 * (tests inject EBUSY/EIO/EMFILE faults; the idle bench counts bytes).
 */
export type StoreFs = Pick<
  typeof fs,
  | 'openSync'
  | 'readSync'
  | 'fstatSync'
  | 'statSync'
  | 'closeSync'
  | 'readFileSync'
  | 'writeSync'
  | 'fdatasyncSync'
  | 'fsyncSync'
  | 'futimesSync'
  | 'renameSync'
  | 'linkSync'
  | 'unlink'
  | 'rmSync'
  | 'existsSync'
>;

/**
 * How long a rename waits for another handle on the target to close. Measured under Windows
 * semantics (the Windows build of Node under Wine, .ci/windows-lane.sh): a reader's handle lasts
 * a few ms, and a scanner's hold of a just-written file under a second; 5 s covers both with
 * room, and stays well under the file lock's 10 s staleness (the heartbeat runs meanwhile).
 */
export const RENAME_WAIT_BUDGET_MS = 5_000;
/** The sync form blocks its thread while it waits: a shorter budget. */
export const RENAME_WAIT_BUDGET_SYNC_MS = 2_000;

/** What a rename over a file held open by another handle fails with on Windows. */
export function isSharingViolation(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EPERM' || code === 'EACCES' || code === 'EBUSY';
}

export interface RenameWait {
  /** Give up after this long (default RENAME_WAIT_BUDGET_MS, sync: RENAME_WAIT_BUDGET_SYNC_MS). */
  budgetMs?: number;
  /** Checked before each try: false gives up without renaming (e.g. the file lock was lost). */
  beforeRename?: () => boolean;
  /** Told how long the rename waited, when it had to (stats, benchmarks). */
  onWaited?: (ms: number, tries: number) => void;
}

/** The pause before try `n` (n >= 2): 5, 10, 20, 40, then 50 ms each. */
function pauseBefore(n: number): number {
  return Math.min(50, 5 * 2 ** (n - 2));
}

type Outcome = 'renamed' | 'refused' | { retryIn: number };

function tryRename(
  fsys: Pick<StoreFs, 'renameSync'>,
  from: string,
  to: string,
  wait: RenameWait,
  started: number,
  n: number,
  budgetMs: number,
): Outcome {
  if (wait.beforeRename && !wait.beforeRename()) return 'refused';
  try {
    fsys.renameSync(from, to);
  } catch (err) {
    const elapsed = Date.now() - started;
    if (!isSharingViolation(err) || elapsed >= budgetMs) throw err;
    return { retryIn: Math.min(pauseBefore(n + 1), budgetMs - elapsed) };
  }
  if (n > 1) wait.onWaited?.(Date.now() - started, n);
  return 'renamed';
}

/** Renames `from` over `to`, waiting (without blocking) while another handle holds `to`. False: `beforeRename` said no. */
export async function renameReplacing(
  fsys: Pick<StoreFs, 'renameSync'>,
  from: string,
  to: string,
  wait: RenameWait = {},
): Promise<boolean> {
  const budgetMs = wait.budgetMs ?? RENAME_WAIT_BUDGET_MS;
  const started = Date.now();
  for (let n = 1; ; n++) {
    const outcome = tryRename(fsys, from, to, wait, started, n, budgetMs);
    if (typeof outcome === 'object') await new Promise<void>((resolve) => setTimeout(resolve, outcome.retryIn));
    else return outcome === 'renamed';
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** `renameReplacing` for callers that cannot await: the waits block the thread. */
export function renameReplacingSync(fsys: Pick<StoreFs, 'renameSync'>, from: string, to: string, wait: RenameWait = {}): boolean {
  const budgetMs = wait.budgetMs ?? RENAME_WAIT_BUDGET_SYNC_MS;
  const started = Date.now();
  for (let n = 1; ; n++) {
    const outcome = tryRename(fsys, from, to, wait, started, n, budgetMs);
    if (typeof outcome === 'object') Atomics.wait(sleeper, 0, 0, outcome.retryIn);
    else return outcome === 'renamed';
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
  /** Last check before the rename (and before each retry of it): false aborts the persist (e.g. the file lock was lost). */
  beforeRename?: () => boolean;
  fs?: StoreFs;
  /** How long the rename may wait for another handle on the file (see RENAME_WAIT_BUDGET_MS). */
  renameBudgetMs?: number;
  onRenameWaited?: (ms: number, tries: number) => void;
}

/** Writes `bytes` to a new temp file beside `file` (mode 0600), fsynced when durable. Returns its path. */
function writeTemp(fsys: StoreFs, file: string, bytes: Uint8Array, durable: boolean): string {
  const temp = tempPathFor(file);
  const fd = fsys.openSync(temp, 'w', 0o600);
  try {
    let offset = 0;
    while (offset < bytes.length) offset += fsys.writeSync(fd, bytes, offset, bytes.length - offset);
    if (durable) fsys.fdatasyncSync(fd);
  } catch (err) {
    bestEffort(() => fsys.closeSync(fd));
    bestEffort(() => fsys.rmSync(temp, { force: true }));
    throw err;
  }
  fsys.closeSync(fd);
  return temp;
}

/**
 * Before the rename: the old version is kept linked under a private name across it, so the rename
 * does not free its blocks while we hold the lock (`finishReplace` unlinks it off the event loop).
 */
function linkPrevious(fsys: StoreFs, file: string, temp: string): string | undefined {
  const previous = `${temp}.old`;
  try {
    fsys.linkSync(file, previous);
    return previous;
  } catch {
    return undefined; // no current file, or no hard links on this file system: the rename frees it, that is all
  }
}

/** After the rename (or its failure): the old version unlinked, a temp file not renamed removed, the directory fsynced. */
function finishReplace(fsys: StoreFs, file: string, temp: string, previous: string | undefined, renamed: boolean, durable: boolean): void {
  if (previous) fsys.unlink(previous, () => undefined);
  if (!renamed) bestEffort(() => fsys.rmSync(temp, { force: true }));
  else if (durable) fsyncDirectory(path.dirname(file), fsys);
}

function renameWait(options: PersistOptions): RenameWait {
  return { budgetMs: options.renameBudgetMs, beforeRename: options.beforeRename, onWaited: options.onRenameWaited };
}

/**
 * Replaces `file` with `bytes` atomically, waiting without blocking while another handle holds
 * it. Returns false (and leaves `file` untouched) when `beforeRename` says no. Any other failure
 * throws and leaves `file` as it was (the temp file is removed, best effort).
 */
export async function writeFileAtomicAsync(file: string, bytes: Uint8Array, options: PersistOptions): Promise<boolean> {
  const fsys = options.fs ?? fs;
  const temp = writeTemp(fsys, file, bytes, options.durable);
  const previous = linkPrevious(fsys, file, temp);
  let renamed = false;
  try {
    renamed = await renameReplacing(fsys, temp, file, renameWait(options));
  } finally {
    finishReplace(fsys, file, temp, previous, renamed, options.durable);
  }
  return renamed;
}

/** `writeFileAtomicAsync` for callers that cannot await (files written once at start): its waits block. */
export function writeFileAtomic(file: string, bytes: Uint8Array, options: PersistOptions): boolean {
  const fsys = options.fs ?? fs;
  const temp = writeTemp(fsys, file, bytes, options.durable);
  const previous = linkPrevious(fsys, file, temp);
  let renamed = false;
  try {
    renamed = renameReplacingSync(fsys, temp, file, renameWait(options));
  } finally {
    finishReplace(fsys, file, temp, previous, renamed, options.durable);
  }
  return renamed;
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
