/**
 * What the extension keeps in globalStorage (the task database, prompts, settings files with the
 * proxy's secret URL, agent logs, reference-agent transcripts, files-changed snapshots) is the
 * user's alone: folders 0700, files 0600. A mode given to mkdir or open applies only when the
 * entry is created, so a folder that already existed with 0755 (made by an older version, by
 * VS Code, or restored from a backup) is narrowed here too.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Creates the folder (and missing parents) private, and narrows it if it already existed. */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
}

export interface NarrowOptions {
  /** Folders left alone with everything under them (task worktrees: the user's checkouts keep the modes git gave them). */
  skip?: readonly string[];
  /** Injectable for tests. On Windows modes mean nothing (chmod only sets the read-only bit): no walk. */
  platform?: NodeJS.Platform;
  maxEntries?: number;
}

/**
 * Narrows every folder (0700) and file (owner's bits only) under `root` that others could read,
 * without following links; entries it cannot change (another owner's) are left as they are.
 * Returns how many it changed.
 */
export function narrowPrivateTree(root: string, options: NarrowOptions = {}): number {
  if ((options.platform ?? process.platform) === 'win32') return 0;
  const maxEntries = options.maxEntries ?? 200_000;
  const skip = new Set((options.skip ?? []).map((dir) => path.resolve(dir)));
  let changed = 0;
  let seen = 0;
  const pending = [root];
  while (pending.length > 0 && seen < maxEntries) {
    const current = pending.pop()!;
    if (skip.has(path.resolve(current))) continue;
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(current);
    } catch {
      continue;
    }
    seen++;
    if (stat.isSymbolicLink()) continue;
    if (stat.isDirectory()) {
      try {
        for (const name of fs.readdirSync(current)) pending.push(path.join(current, name));
      } catch {
        // unreadable: nothing to narrow below it that others could reach through it
      }
    }
    if ((stat.mode & 0o077) === 0) continue;
    try {
      fs.chmodSync(current, stat.isDirectory() ? 0o700 : stat.mode & 0o700);
      changed++;
    } catch {
      // not ours
    }
  }
  return changed;
}
