/**
 * Which files a check command runs (docs/flows.md#checks), and which of them the agent changed
 * since the task's base commit. The check runs outside the permission mode, so a model that may
 * edit without asking (Accept edits) could rewrite what it runs; the segment flags that on the
 * card and, if the user asks for it, asks first (`check-gate.ts`).
 *
 * "The check's files" are read from the command line the user typed, never guessed from the whole
 * repository: every word that names a file in the folder, plus the usual indirections (package.json
 * and the files its script names for `npm`/`yarn`/`pnpm` runs, the Makefile for `make`). A
 * repository's files are only read here (package.json parsed as JSON); nothing of them runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runGit, type HardenedGitOptions } from '../workplace/hardened-git';

/** The shell's words of a command line, split at its operators (`&&`, `||`, `;`, `|`): one list a command. */
export function commandWords(line: string): string[][] {
  const commands: string[][] = [[]];
  let word = '';
  let quote: '"' | "'" | null = null;
  let inWord = false;
  const end = () => {
    if (inWord) commands[commands.length - 1].push(word);
    word = '';
    inWord = false;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
      else word += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (/\s/.test(c)) end();
    else if ('&|;()<>'.includes(c)) {
      end();
      if (commands[commands.length - 1].length > 0) commands.push([]);
    } else {
      word += c;
      inWord = true;
    }
  }
  end();
  return commands.filter((words) => words.length > 0);
}

const PACKAGE_RUNNERS = new Set(['npm', 'yarn', 'pnpm', 'npx', 'bun']);
const MAKE = new Set(['make', 'gmake', 'mingw32-make']);
const MAKEFILES = ['GNUmakefile', 'makefile', 'Makefile'];
/** npm's own commands that run a package.json script of the same or a given name. */
const SCRIPT_VERBS = new Set(['run', 'run-script', 'test', 't', 'start', 'stop', 'restart']);

/** A word as a path inside `cwd` (relative, `/` separated), or null: options, URLs, paths outside. */
function inFolder(cwd: string, word: string): string | null {
  if (!word || word.startsWith('-') || /^[a-z][a-z0-9+.-]*:\/\//i.test(word)) return null;
  const value = word.includes('=') && !word.startsWith('.') ? word.slice(word.indexOf('=') + 1) : word;
  if (!value) return null;
  const full = path.resolve(cwd, value);
  const rel = path.relative(cwd, full);
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return null;
  return rel.split(path.sep).join('/');
}

function isFile(cwd: string, rel: string): boolean {
  return fs.statSync(path.join(cwd, rel), { throwIfNoEntry: false })?.isFile() ?? false;
}

/** A file or a folder (`mocha test/` runs what is in it). */
function exists(cwd: string, rel: string): boolean {
  return fs.existsSync(path.join(cwd, rel));
}

/** The script a package runner's words run (`npm test` -> "test", `yarn lint` -> "lint"), or null. */
function scriptName(words: string[]): string | null {
  const [runner, verb, name] = words;
  if (runner === 'npx') return null;
  if (verb === undefined) return runner === 'yarn' ? 'install' : null;
  if (SCRIPT_VERBS.has(verb)) return verb === 'run' || verb === 'run-script' ? (name ?? null) : verb === 't' ? 'test' : verb;
  return runner === 'yarn' || runner === 'pnpm' || runner === 'bun' ? verb : null;
}

function packageScripts(cwd: string): Record<string, string> {
  try {
    const scripts = (JSON.parse(fs.readFileSync(path.join(cwd, 'package.json'), 'utf8')) as { scripts?: unknown }).scripts;
    return scripts && typeof scripts === 'object' ? (scripts as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/**
 * The files in `cwd` the check command runs or reads as its recipe, relative and sorted: the words
 * that name a file or folder, package.json (and the files its script names, one level) for a package
 * runner, the Makefile for make (or the one `-f` names). Every name is one that exists in `cwd`.
 */
export function checkFilesOf(command: string, cwd: string): string[] {
  const found = new Set<string>();
  const addWords = (words: string[]) => {
    for (const word of words) {
      const rel = inFolder(cwd, word);
      if (rel && exists(cwd, rel)) found.add(rel);
    }
  };
  for (const words of commandWords(command)) {
    addWords(words);
    const program = path.basename(words[0]).replace(/\.(cmd|exe)$/i, '');
    if (PACKAGE_RUNNERS.has(program) && isFile(cwd, 'package.json')) {
      found.add('package.json');
      const name = scriptName([program, ...words.slice(1)]);
      const script = name ? packageScripts(cwd)[name] : undefined;
      if (typeof script === 'string') for (const inner of commandWords(script)) addWords(inner);
    }
    if (MAKE.has(program)) {
      const named = words.indexOf('-f');
      const makefiles = named > 0 && words[named + 1] ? [words[named + 1]] : MAKEFILES;
      for (const file of makefiles) {
        const rel = inFolder(cwd, file);
        if (rel && isFile(cwd, rel)) found.add(rel);
      }
    }
  }
  return [...found].sort();
}

/**
 * The files among `files` (relative to `cwd`; a folder stands for what is in it) that differ from
 * the task's base commit: changed or committed since (`git diff <base>`, the working tree against
 * it), or new and untracked; relative to `cwd`, sorted. Through the hardened git; null when git
 * cannot tell (no repository, the commit unknown).
 */
export async function changedSinceBase(
  files: readonly string[],
  cwd: string,
  baseCommit: string,
  options: Omit<HardenedGitOptions, 'cwd'> = {},
): Promise<string[] | null> {
  if (files.length === 0) return [];
  // Literal pathspecs: a file name is never a glob or a magic word.
  const specs = files.map((f) => `:(literal)${f}`);
  const git = { ...options, cwd };
  const [changed, untracked] = await Promise.all([
    runGit(['diff', '--name-only', '-z', '--no-renames', '--relative', baseCommit, '--', ...specs], git),
    runGit(['ls-files', '-z', '--others', '--exclude-standard', '--', ...specs], git),
  ]);
  if (changed === null || untracked === null) return null;
  return [...new Set([...changed.split('\0'), ...untracked.split('\0')].filter(Boolean))].sort();
}
