/**
 * The ONE way the extension runs git (docs/architecture.md#who-writes-what lists what it is used
 * for: the files_changed snapshots, tasks' worktrees and branches, their changed files, Merge and
 * Apply). A task's repository is written by the agent, so nothing in
 * it may make git run a program inside the extension host: a `.git/config` the model wrote can
 * name a `core.fsmonitor` command, hooks, an external diff, a textconv or clean filter, a pager,
 * a credential helper or an ssh command, and the user's system and global config files are not
 * the task's to choose either. So every git run here:
 * - reads no system or global config (`GIT_CONFIG_NOSYSTEM=1`, `GIT_CONFIG_GLOBAL=<null device>`;
 *   two of the user's settings are kept, see below)
 *   and inherits no `GIT_*` variable from the host (no `GIT_DIR`, `GIT_CONFIG_PARAMETERS`,
 *   `GIT_EXTERNAL_DIFF`, `GIT_SSH_COMMAND`, `GIT_ASKPASS`…), only the ones set here;
 * - passes `-c` settings that beat any config file: no fsmonitor, hooks path the null device,
 *   pager `cat`, no external diff, no credential helper, no ssh command, `protocol.allow=never`
 *   (only a default: a repository's `protocol.<name>.allow` beats it), no untracked cache;
 * - never fetches a missing object from a partial clone's promisor remote (`GIT_NO_LAZY_FETCH=1`)
 *   and allows no transport protocol (`GIT_ALLOW_PROTOCOL=` empty): the environment beats every
 *   config, and a promisor remote's `ext::` URL is a command;
 * - never prompts (`GIT_TERMINAL_PROMPT=0`) and takes no optional locks;
 * - has a time limit and is killed (SIGKILL) past it;
 * - is the git found in PATH's absolute folders, never one in the repository (src/core/executable-path.ts);
 * - signs and verifies nothing (a repository's `commit.gpgSign` would run its `gpg.program` on a
 *   merge, `merge.verifySignatures` would run it and refuse the task's unsigned branch), every
 *   signing program is the null device, and no automatic gc or maintenance starts;
 * - switches off every filter and merge driver the repository's config names: the config is read
 *   first (`git config --get-regexp`, which runs nothing) and each driver gets `-c` settings that
 *   beat it: empty `smudge`/`clean`/`process` (git then copies the bytes as they are) and a merge
 *   driver that is git's own three-way text merge (`git merge-file`). A driver name git could not
 *   take back from `-c` (one holding `=`) makes the run fail rather than run unguarded.
 * - switches off every hook the repository's config defines (git 2.54+: `hook.<name>.command`
 *   run on `hook.<name>.event`, which `core.hooksPath` does not cover): found in the same look-up,
 *   each gets `hook.<name>.enabled=false` and an empty `hook.<name>.event` (which clears its
 *   events); a name git could not take back makes the run fail the same way.
 * Diffs always pass `--no-ext-diff --no-textconv`, so diff drivers need no switch.
 *
 * Two of the user's own settings are kept, as git would apply them (docs/platforms.md): on
 * Windows `core.longPaths=true` (a worktree deep under globalStorage passes MAX_PATH), and the
 * `core.autocrlf` the user's global or system config sets (Git for Windows' installer writes it in
 * the system config) unless the repository sets its own: the same look-up that finds the drivers
 * reads it (reading config runs nothing), so a task's checkout and commits get the line endings
 * the user's own would.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { programOnPath } from '../../core/executable-path';

export interface HardenedGitOptions {
  cwd: string;
  /**
   * Variables this run sets (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE); every other GIT_* is dropped.
   * A GIT_DIR given here is always one the extension created (its config names no driver).
   */
  gitEnv?: Record<string, string>;
  /** Written to git's stdin. */
  input?: string | Buffer;
  /** A git that hangs (a lock, a network filesystem) must not keep the task running. */
  timeoutMs?: number;
  /** The git executable (tests stand a hung one in for it). */
  gitCommand?: string;
  /** The OS whose git runs (default this one's); injectable for tests. */
  platform?: NodeJS.Platform;
  /** The user's own global git config file (default `userGitConfigFile()`); tests give their own. */
  userConfigFile?: string;
}

export const GIT_TIMEOUT_MS = 60_000;

/** Settings on the command line beat every config file git reads (repository, worktree, include). */
export const HARDENED_CONFIG: readonly string[] = [
  'core.fsmonitor=false',
  `core.hooksPath=${os.devNull}`,
  'core.pager=cat',
  'core.untrackedCache=false',
  'core.sshCommand=',
  'diff.external=',
  'credential.helper=',
  'protocol.allow=never',
  'submodule.recurse=false',
  'core.askPass=',
  'commit.gpgSign=false',
  'tag.gpgSign=false',
  // Verifying a signature runs the gpg program too (and would refuse an unsigned task branch).
  'merge.verifySignatures=false',
  'pull.verifySignatures=false',
  'log.showSignature=false',
  // No signing program is left to run even if something above is missed: the null device is no program.
  `gpg.program=${os.devNull}`,
  `gpg.openpgp.program=${os.devNull}`,
  `gpg.x509.program=${os.devNull}`,
  `gpg.ssh.program=${os.devNull}`,
  'gpg.ssh.defaultKeyCommand=',
  'core.alternateRefsCommand=',
  'gc.auto=0',
  'gc.autoDetach=false',
  'maintenance.auto=false',
];

/** What a repository's own merge driver is replaced with: git's built-in three-way merge of the three files. */
export const SAFE_MERGE_DRIVER = 'git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B';

/**
 * The `-c` settings that switch off the filter and merge drivers named in `config -z --get-regexp`
 * output (`section.name.key\nvalue\0` records); null when a name cannot be overridden safely.
 */
export function driverOverrides(configListing: string): string[] | null {
  const names = { filter: new Set<string>(), merge: new Set<string>() };
  for (const record of configListing.split('\0')) {
    const key = record.split('\n', 1)[0];
    const match = /^(filter|merge)\.(.+)\.[^.]+$/is.exec(key);
    if (!match) continue;
    const name = match[2];
    if (name.includes('=') || /[\n\0]/.test(name)) return null;
    names[match[1].toLowerCase() as 'filter' | 'merge'].add(name);
  }
  return [
    ...[...names.filter].flatMap((n) => [
      `filter.${n}.smudge=`,
      `filter.${n}.clean=`,
      `filter.${n}.process=`,
      `filter.${n}.required=false`,
    ]),
    ...[...names.merge].flatMap((n) => [`merge.${n}.driver=${SAFE_MERGE_DRIVER}`, `merge.${n}.recursive=`]),
  ];
}

/**
 * The `-c` settings that switch off the config hooks (`hook.<name>.*`) named in the same listing;
 * null when a name cannot be overridden safely. `hook.<event>.enabled`, `hook.jobs` and the like
 * name no command; switching them off too is harmless (a disabled event runs no hook at all).
 */
export function hookOverrides(configListing: string): string[] | null {
  const names = new Set<string>();
  for (const record of configListing.split('\0')) {
    const match = /^hook\.(.+)\.[^.]+$/is.exec(record.split('\n', 1)[0]);
    if (!match) continue;
    if (match[1].includes('=') || /[\n\0]/.test(match[1])) return null;
    names.add(match[1]);
  }
  return [...names].flatMap((n) => [`hook.${n}.enabled=false`, `hook.${n}.event=`]);
}

/** The environment of a hardened git: the host's, minus every GIT_* variable, plus these. */
export function hardenedGitEnv(gitEnv: Record<string, string> = {}, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) {
    if (!/^GIT_/i.test(key) && key !== 'PAGER' && key !== 'SSH_ASKPASS') env[key] = value;
  }
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: os.devNull,
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_PROTOCOL_FROM_USER: '0',
    // A repository's `protocol.<name>.allow` beats `-c protocol.allow=never`, and a partial clone
    // fetches a missing object from its promisor remote (an `ext::` URL is a command): these two
    // beat every config. An empty list allows no protocol at all.
    GIT_NO_LAZY_FETCH: '1',
    GIT_ALLOW_PROTOCOL: '',
    ...gitEnv,
  };
}

/** Git for Windows only: paths past MAX_PATH (260) work (other gits ignore the key). */
const WINDOWS_CONFIG: readonly string[] = ['core.longPaths=true'];

/** The argv of a hardened git command (`git -c … <args>`). */
export function hardenedGitArgs(args: readonly string[], platform: NodeJS.Platform = process.platform): string[] {
  const settings = platform === 'win32' ? [...HARDENED_CONFIG, ...WINDOWS_CONFIG] : HARDENED_CONFIG;
  return [...settings.flatMap((setting) => ['-c', setting]), ...args];
}

/**
 * The user's own global git config file, as git finds it: `~/.gitconfig`, or
 * `$XDG_CONFIG_HOME/git/config` (default `~/.config/git/config`) when that does not exist.
 */
export function userGitConfigFile(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string {
  const dotfile = path.join(home, '.gitconfig');
  if (fs.existsSync(dotfile)) return dotfile;
  return path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'git', 'config');
}

/**
 * The environment under which a config read sees the user's global and system settings as well
 * as the repository's (only for `git config` reads: reading config runs nothing).
 */
export function userConfigEnv(options: Pick<HardenedGitOptions, 'userConfigFile'> = {}): Record<string, string> {
  return { GIT_CONFIG_GLOBAL: options.userConfigFile ?? userGitConfigFile(), GIT_CONFIG_NOSYSTEM: '0' };
}

/** The user's settings a hardened run keeps, from the same listing as the drivers (the last value is git's answer). */
export function keptUserSettings(configListing: string): string[] {
  let autocrlf: string | undefined;
  for (const record of configListing.split('\0')) {
    const [key, value] = record.split('\n', 2);
    if (key.toLowerCase() !== 'core.autocrlf') continue;
    // git's booleans (a key with no value is true), or `input`; anything else git itself refuses.
    const word = (value ?? 'true').trim().toLowerCase();
    autocrlf =
      word === 'input'
        ? 'input'
        : ['true', 'yes', 'on', '1'].includes(word)
          ? 'true'
          : ['false', 'no', 'off', '0', ''].includes(word)
            ? 'false'
            : autocrlf;
  }
  return autocrlf === undefined ? [] : [`core.autocrlf=${autocrlf}`];
}

/**
 * The `-c` settings of the user's kept for a run whose git directory is the extension's own (its
 * config is not the repository's): what git would apply in `cwd`, a worktree of the repository.
 */
export async function keptUserSettingsAt(cwd: string, options: Omit<HardenedGitOptions, 'cwd'> = {}): Promise<string[]> {
  const listing = await runGit(['config', '-z', '--get-regexp', '^core\\.autocrlf$'], { ...options, cwd, gitEnv: userConfigEnv(options) });
  return keptUserSettings(listing ?? '').flatMap((setting) => ['-c', setting]);
}

/** Runs one hardened git command; its stdout, or null when it failed or timed out ("unknown"). */
export async function runGit(args: readonly string[], options: HardenedGitOptions): Promise<string | null> {
  return (await runGitBuffer(args, options))?.toString('utf8') ?? null;
}

/** runGit with stdout as bytes (file contents, `cat-file --batch`). */
export async function runGitBuffer(args: readonly string[], options: HardenedGitOptions): Promise<Buffer | null> {
  const run = await runGitResult(args, options);
  return run.code === 0 ? run.stdout : null;
}

/** One hardened git command with its exit code and both outputs (a push says why it was refused on stderr). */
export async function runGitResult(args: readonly string[], options: HardenedGitOptions): Promise<GitRun> {
  let overrides: string[] = [];
  // A private git directory's config is the extension's own: nothing to look up.
  if (options.gitEnv?.GIT_DIR === undefined && mayRunDrivers(args)) {
    // Exit 1 with no output: the repository's config names no driver.
    // The user's global and system config are read here too: for their core.autocrlf.
    const listing = await execGit(
      ['config', '-z', '--get-regexp', '^(filter|merge|hook)\\.|^core\\.autocrlf$'],
      { ...options, gitEnv: userConfigEnv(options) },
      undefined,
    );
    if (listing.code !== 0 && !(listing.code === 1 && listing.stdout.length === 0)) return listing;
    const text = listing.stdout.toString('utf8');
    const drivers = driverOverrides(text);
    const hooks = hookOverrides(text);
    if (drivers === null || hooks === null)
      return { code: null, stdout: Buffer.alloc(0), stderr: 'a driver or hook name git cannot switch off' };
    overrides = [...drivers, ...hooks, ...keptUserSettings(text)].flatMap((setting) => ['-c', setting]);
  }
  return execGit([...overrides, ...args], options, options.input);
}

/** How a hardened git run ended: its exit code (null: killed, not found, or refused before it ran) and outputs. */
export interface GitRun {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/**
 * Commands that never read or write a working tree's files, so no filter or merge driver can
 * apply, and never update a ref (a ref update runs the `reference-transaction` hook): they skip
 * the config read. Everything else (worktree add/remove, merge, apply, diff-index, status,
 * update-index, update-ref, branch, ...) gets the overrides.
 */
const DRIVER_FREE = new Set([
  'rev-parse',
  'diff-tree',
  'config',
  'init',
  'commit-tree',
  'merge-base',
  'check-ignore',
  'write-tree',
  'ls-tree',
]);

function mayRunDrivers(args: readonly string[]): boolean {
  let i = 0;
  while (i < args.length && args[i].startsWith('-')) i += args[i] === '-c' || args[i] === '-C' ? 2 : 1;
  const command = args[i];
  if (command === 'cat-file') return args.some((a) => a === '--filters' || a === '--textconv' || a.startsWith('--path'));
  return !DRIVER_FREE.has(command ?? '');
}

function execGit(args: readonly string[], options: HardenedGitOptions, input: string | Buffer | undefined): Promise<GitRun> {
  // From PATH only, never the repository it runs in (Windows would look there first).
  const git = options.gitCommand ?? programOnPath('git');
  if (git === undefined) return Promise.resolve({ code: null, stdout: Buffer.alloc(0), stderr: 'git was not found' });
  return new Promise((resolve) => {
    const child = execFile(
      git,
      hardenedGitArgs(args, options.platform),
      {
        cwd: options.cwd,
        encoding: 'buffer',
        maxBuffer: 256 * 1024 * 1024,
        windowsHide: true,
        timeout: options.timeoutMs ?? GIT_TIMEOUT_MS,
        killSignal: 'SIGKILL',
        env: hardenedGitEnv(options.gitEnv),
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr: stderr.toString('utf8') }),
    );
    child.stdin?.on('error', () => undefined); // git may exit before it read its input
    if (input !== undefined) child.stdin?.end(input);
    else child.stdin?.end();
  });
}
