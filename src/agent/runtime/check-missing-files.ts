/**
 * A check that fails in a task's own worktree because a file it needs is not committed
 * (docs/flows.md#checks): the worktree starts from the folder's last commit, so a script or a
 * fixture the user has only in the folder is missing there, and no fix round can make it appear.
 * The round's output says so, naming the files: those the command or its output names that are
 * missing in the worktree and uncommitted in the folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { commandWords } from './check-files';

/** A path-like word as a path relative to `cwd` (`/` separated), or null. */
function relativeIn(cwd: string, word: string): string | null {
  // Trim quotes, brackets and punctuation around it, and a stack trace's ":line:column".
  const trimmed = word
    .replace(/^[\s'"`([{<]+|[\s'"`)\]}>,;.]+$/g, '')
    .replace(/(:\d+)+$/, '')
    .replace(/^file:\/\//, '');
  if (!trimmed || trimmed.startsWith('-') || /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) return null;
  if (!/[./\\]/.test(trimmed)) return null;
  const rel = path.relative(cwd, path.resolve(cwd, trimmed));
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return null;
  return rel.split(path.sep).join('/');
}

/** The paths inside `cwd` a check's command line and output name (what it ran and what it could not find). */
export function namedPaths(command: string, output: string, cwd: string): string[] {
  const words = [...commandWords(command).flat(), ...output.split(/[\s'"`]+/)];
  const found = new Set<string>();
  for (const word of words) {
    const rel = relativeIn(cwd, word);
    if (rel) found.add(rel);
  }
  return [...found];
}

/**
 * The note a failed round's output ends with, or null: the files named by the check that the
 * worktree lacks and the folder has uncommitted (`uncommitted`: the folder's list, relative to it).
 */
export async function missingUncommittedNote(input: {
  command: string;
  output: string;
  /** Where the check ran: the task's worktree (its folder's counterpart). */
  cwd: string;
  /** The user's folder the task was queued from. */
  folder: string;
  uncommitted: (folder: string) => Promise<string[] | null>;
}): Promise<string | null> {
  const missing = namedPaths(input.command, input.output, input.cwd).filter(
    (rel) => !fs.existsSync(path.join(input.cwd, rel)) && fs.existsSync(path.join(input.folder, rel)),
  );
  if (missing.length === 0) return null;
  const uncommitted = new Set((await input.uncommitted(input.folder).catch(() => null)) ?? []);
  const files = missing.filter((rel) => uncommitted.has(rel)).sort();
  if (files.length === 0) return null;
  const named = files.join(', ');
  return (
    `[off-peak] ${named} ${files.length === 1 ? 'exists' : 'exist'} in your folder but ${files.length === 1 ? 'is' : 'are'} not committed, ` +
    "so this task's worktree (made from the last commit) does not have " +
    `${files.length === 1 ? 'it' : 'them'}: the check cannot pass here. Commit ${files.length === 1 ? 'it' : 'them'} and follow up, ` +
    'or run the task in the folder itself.'
  );
}
