/**
 * The ONE way the extension runs git (docs/architecture.md#who-writes-what lists what it is used
 * for: the files_changed snapshots, tasks' worktrees and branches, their changed files, Merge and
 * Apply). A task's repository is written by the agent, so nothing in
 * it may make git run a program inside the extension host: a `.git/config` the model wrote can
 * name a `core.fsmonitor` command, hooks, an external diff, a textconv or clean filter, a pager,
 * a credential helper or an ssh command, and the user's system and global config files are not
 * the task's to choose either. So every git run here:
 * - reads no system or global config (`GIT_CONFIG_NOSYSTEM=1`, `GIT_CONFIG_GLOBAL=<null device>`)
 *   and inherits no `GIT_*` variable from the host (no `GIT_DIR`, `GIT_CONFIG_PARAMETERS`,
 *   `GIT_EXTERNAL_DIFF`, `GIT_SSH_COMMAND`, `GIT_ASKPASS`…), only the ones set here;
 * - passes `-c` settings that beat any config file: no fsmonitor, hooks path the null device,
 *   pager `cat`, no external diff, no credential helper, no ssh command, every transport
 *   protocol refused, no untracked cache;
 * - never prompts (`GIT_TERMINAL_PROMPT=0`) and takes no optional locks;
 * - has a time limit and is killed (SIGKILL) past it.
 * The commands that read file contents (and so would run a clean filter named in a
 * repository's config) run against a private git directory the extension created, never the
 * repository's own (`files-changed.ts`); `-c` cannot switch off filter drivers one by one.
 */
import { execFile } from 'node:child_process';
import os from 'node:os';

export interface HardenedGitOptions {
  cwd: string;
  /** Variables this run sets (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE); every other GIT_* is dropped. */
  gitEnv?: Record<string, string>;
  /** Written to git's stdin. */
  input?: string | Buffer;
  /** A git that hangs (a lock, a network filesystem) must not keep the task running. */
  timeoutMs?: number;
  /** The git executable (tests stand a hung one in for it). */
  gitCommand?: string;
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
];

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
    ...gitEnv,
  };
}

/** The argv of a hardened git command (`git -c … <args>`). */
export function hardenedGitArgs(args: readonly string[]): string[] {
  return [...HARDENED_CONFIG.flatMap((setting) => ['-c', setting]), ...args];
}

/** Runs one hardened git command; its stdout, or null when it failed or timed out ("unknown"). */
export async function runGit(args: readonly string[], options: HardenedGitOptions): Promise<string | null> {
  return (await runGitBuffer(args, options))?.toString('utf8') ?? null;
}

/** runGit with stdout as bytes (file contents, `cat-file --batch`). */
export function runGitBuffer(args: readonly string[], options: HardenedGitOptions): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const child = execFile(
      options.gitCommand ?? 'git',
      hardenedGitArgs(args),
      {
        cwd: options.cwd,
        encoding: 'buffer',
        maxBuffer: 256 * 1024 * 1024,
        windowsHide: true,
        timeout: options.timeoutMs ?? GIT_TIMEOUT_MS,
        killSignal: 'SIGKILL',
        env: hardenedGitEnv(options.gitEnv),
      },
      (err, stdout) => resolve(err ? null : stdout),
    );
    child.stdin?.on('error', () => undefined); // git may exit before it read its input
    if (options.input !== undefined) child.stdin?.end(options.input);
    else child.stdin?.end();
  });
}
