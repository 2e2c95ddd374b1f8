// The one-shot hand-over of a model API key from `npm start -- --personal` to the served VS Code
// (docs/architecture.md#personal-mode). The start has the key (from its environment) but no way
// into SecretStorage: in a served VS Code that lives in each browser's own storage, so a key set
// through another browser is invisible to the user's. So the start writes the key once into
// globalStorage/personal/model-key.handover (0600 in the 0700 personal/ folder, the same
// protection as the local key beside it), and the first window that starts imports it into its
// SecretStorage and deletes the file. The start deletes a file nobody took when it stops.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir } from '../files/private-files';
import { authorityPaths } from './authority-files';

const HANDOVER_FILE = 'model-key.handover';
/** A claimed hand-over is renamed to this prefix + a claim id before it is read (one window wins). */
const TAKEN_INFIX = '.taken-';
/** A claimed or temp file older than this was left by a window or start that died meanwhile: removed. */
const STALE_CLAIM_MS = 60_000;
const MAX_KEY_CHARS = 4096;

export function modelKeyHandoverPath(storageDir: string): string {
  return path.join(authorityPaths(storageDir).dir, HANDOVER_FILE);
}

function checkKey(key: string): string {
  const trimmed = key.trim();
  if (trimmed === '' || /\s/.test(trimmed) || trimmed.length > MAX_KEY_CHARS)
    throw new Error('the handed-over model API key is empty, has spaces or is too long');
  return trimmed;
}

/**
 * Writes the hand-over for the extension whose globalStorage is `storageDir`: a temp file made
 * 0600 (O_EXCL), renamed into place, so a window never reads half of it. Replaces an older one.
 */
export function writeModelKeyHandover(storageDir: string, key: string): string {
  const file = modelKeyHandoverPath(storageDir);
  ensurePrivateDir(path.dirname(file));
  const temp = `${file}.tmp-${randomBytes(6).toString('hex')}`;
  const fd = fs.openSync(temp, 'wx', 0o600);
  try {
    fs.writeSync(fd, checkKey(key));
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  return file;
}

/** Deletes a hand-over nobody took (the start, when it stops). */
export function removeModelKeyHandover(storageDir: string): void {
  fs.rmSync(modelKeyHandoverPath(storageDir), { force: true });
}

/**
 * Takes the hand-over if there is one: claims it by renaming it (of windows starting at once,
 * one gets it), reads it without following a link, and deletes it whatever it held. Undefined
 * when there is none; throws when the file is not a key (it is deleted all the same).
 */
export function takeModelKeyHandover(storageDir: string, now = Date.now()): string | undefined {
  const file = modelKeyHandoverPath(storageDir);
  removeStaleClaims(file, now);
  const claimed = `${file}${TAKEN_INFIX}${randomBytes(6).toString('hex')}`;
  try {
    fs.renameSync(file, claimed);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    if (!fs.lstatSync(claimed).isFile()) throw new Error(`${file} is not a regular file`);
    // O_NOFOLLOW where the platform has it (not on Windows, where lstat above is the check).
    const fd = fs.openSync(claimed, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
    try {
      if (fs.fstatSync(fd).size > MAX_KEY_CHARS) throw new Error(`${file} is too large to be a key`);
      return checkKey(fs.readFileSync(fd, 'utf8'));
    } finally {
      fs.closeSync(fd);
    }
  } finally {
    fs.rmSync(claimed, { force: true });
  }
}

function removeStaleClaims(file: string, now: number): void {
  const dir = path.dirname(file);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return; // no personal/ folder yet: nothing handed over
  }
  for (const name of names) {
    // `.taken-…` (claimed) and `.tmp-…` (being written) files: both hold a key.
    if (!name.startsWith(`${HANDOVER_FILE}.`)) continue;
    const claimed = path.join(dir, name);
    try {
      if (now - fs.lstatSync(claimed).mtimeMs > STALE_CLAIM_MS) fs.rmSync(claimed, { force: true });
    } catch {
      // taken and removed meanwhile by the window that claimed it
    }
  }
}
