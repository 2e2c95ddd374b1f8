/**
 * The git settings every agent process carries (docs/security.md, "What a repository can make
 * run"). Claude Code runs `git status` when it starts, in every permission mode (plan included),
 * and both agents' shell commands may run git: all with the repository's own `.git/config`, which
 * a folder may ship or a model may have written. A `core.fsmonitor` there is a command git runs
 * on `git status`; hooks run on `git commit` and on the index writes of `git status`.
 *
 * `GIT_CONFIG_COUNT` / `GIT_CONFIG_KEY_<n>` / `GIT_CONFIG_VALUE_<n>` beat every config file, as
 * `-c` does, so these settings hold whatever the repository says. Entries already in the
 * environment are kept; ours follow them, so ours win for the same key. They are:
 * - no fsmonitor command, and hooks read from the null device (none);
 * - `protocol.ext.allow=never`: an `ext::` URL is a command, and the repository's own
 *   `protocol.ext.allow` (which beats a general `protocol.allow`) loses to this one;
 * - the drivers and hooks the repository's config defines, found when the agent starts by the
 *   same look-up the hardened runner makes (src/agent/workplace/hardened-git.ts; conditional
 *   includes as git reads them in the agent's folder), switched off the same way: filters
 *   empty, merge drivers git's own text merge, config hooks (git 2.54+) disabled, and a diff
 *   driver's `command` or `textconv` emptied (the agent's `git diff` of such a file then fails
 *   instead of running it). A name git could not take back makes the start fail.
 * - `GIT_NO_LAZY_FETCH=1`: a read (`git status`, a diff) in a partial clone does not start a fetch
 *   on its own, the one way such a read reaches a remote's transport settings.
 *
 * Deliberately not set: a general protocol ban, `core.sshCommand`, credential helpers, signing,
 * and the user's own global drivers (git-lfs): the agent may legitimately fetch, push or commit
 * with the user's own settings, and an explicit `git fetch` is a command the user approves like
 * any other. Nothing here is a secret.
 */
import os from 'node:os';
import { driverOverrides, hookOverrides, runGit } from '../workplace/hardened-git';

/** The settings every agent gets, in order: no fsmonitor command, no hooks directory, no `ext::` transport. */
export const AGENT_GIT_CONFIG: ReadonlyArray<readonly [key: string, value: string]> = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', os.devNull],
  ['protocol.ext.allow', 'never'],
];

/** The repository config keys the agent's look-up reads (reading config runs nothing). */
const LOOKUP = '^(filter|merge|diff|hook)\\.';

/**
 * The settings that switch off the drivers and hooks named in a `config -z --get-regexp` listing
 * (`key\nvalue\0` records); null when a name cannot be overridden safely. A diff driver's
 * `command` and `textconv` are emptied only where set: an empty one on a driver that only names a
 * function-header pattern would break every diff of its files.
 */
export function repositorySettings(configListing: string): Array<readonly [string, string]> | null {
  const drivers = driverOverrides(configListing);
  const hooks = hookOverrides(configListing);
  if (drivers === null || hooks === null) return null;
  const diff = new Set<string>();
  for (const record of configListing.split('\0')) {
    const match = /^diff\.(.+)\.(command|textconv)$/is.exec(record.split('\n', 1)[0]);
    if (!match) continue;
    if (match[1].includes('=') || /[\n\0]/.test(match[1])) return null;
    diff.add(`diff.${match[1]}.${match[2].toLowerCase()}=`);
  }
  return [...drivers, ...hooks, ...diff].map((setting) => {
    const at = setting.indexOf('=');
    return [setting.slice(0, at), setting.slice(at + 1)] as const;
  });
}

/**
 * The repository settings for an agent starting in `cwd` (none outside a repository, or when
 * its config names nothing). Throws, saying why, when a name cannot be overridden.
 */
export async function agentRepositorySettings(cwd: string): Promise<Array<readonly [string, string]>> {
  // Only the repository's config (the hardened environment reads no global or system file).
  const listing = await runGit(['config', '-z', '--get-regexp', LOOKUP], { cwd });
  const settings = repositorySettings(listing ?? '');
  if (settings === null)
    throw new Error(
      "the repository's git config names a filter, merge or diff driver or a hook whose name git cannot take back (it holds '='), so the agent's own git would run it",
    );
  return settings;
}

/**
 * The variables to set on top of `base` (the agent's environment otherwise): the settings above,
 * then `repository`'s, appended after `base`'s own `GIT_CONFIG_COUNT` entries, and
 * `GIT_NO_LAZY_FETCH`. A count that is not a whole number (git refuses it) is replaced, starting from 0.
 */
export function agentGitEnv(
  base: Readonly<Record<string, string | undefined>>,
  repository: ReadonlyArray<readonly [string, string]> = [],
): Record<string, string> {
  const existing = (base.GIT_CONFIG_COUNT ?? '').trim();
  const start = /^\d+$/.test(existing) ? Number(existing) : 0;
  const env: Record<string, string> = { GIT_NO_LAZY_FETCH: '1' };
  const settings = [...AGENT_GIT_CONFIG, ...repository];
  settings.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${start + i}`] = key;
    env[`GIT_CONFIG_VALUE_${start + i}`] = value;
  });
  env.GIT_CONFIG_COUNT = String(start + settings.length);
  return env;
}
