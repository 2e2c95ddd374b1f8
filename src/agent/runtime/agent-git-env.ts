/**
 * The git settings every agent process carries (docs/security.md, "What a repository can make
 * run"). Claude Code runs `git status` when it starts, in every permission mode (plan included),
 * and both agents' shell commands may run git: all with the repository's own `.git/config`, which
 * a folder may ship or a model may have written. A `core.fsmonitor` there is a command git runs
 * on `git status`; hooks run on `git commit` and on the index writes of `git status`.
 *
 * `GIT_CONFIG_COUNT` / `GIT_CONFIG_KEY_<n>` / `GIT_CONFIG_VALUE_<n>` beat every config file, as
 * `-c` does, so these settings hold whatever the repository says. Entries already in the
 * environment are kept; ours follow them, so ours win for the same key.
 *
 * Deliberately not set: `protocol.allow`, `core.sshCommand`, credential helpers, signing. The
 * agent may legitimately fetch or push the user's repository over https or ssh with the user's
 * own settings. `GIT_NO_LAZY_FETCH=1` stops a read (`git status`, a diff) in a partial clone
 * from starting a fetch on its own, the one way such a read reaches a remote's transport
 * settings; an explicit `git fetch` is unaffected. Nothing here is a secret.
 */
import os from 'node:os';

/** The settings, in order: no fsmonitor command, and hooks read from the null device (none). */
export const AGENT_GIT_CONFIG: ReadonlyArray<readonly [key: string, value: string]> = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', os.devNull],
];

/**
 * The variables to set on top of `base` (the agent's environment otherwise): the settings above
 * appended after `base`'s own `GIT_CONFIG_COUNT` entries, and `GIT_NO_LAZY_FETCH`. A count that is
 * not a whole number (git refuses it) is replaced, starting from 0.
 */
export function agentGitEnv(base: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const existing = (base.GIT_CONFIG_COUNT ?? '').trim();
  const start = /^\d+$/.test(existing) ? Number(existing) : 0;
  const env: Record<string, string> = { GIT_NO_LAZY_FETCH: '1' };
  AGENT_GIT_CONFIG.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${start + i}`] = key;
    env[`GIT_CONFIG_VALUE_${start + i}`] = value;
  });
  env.GIT_CONFIG_COUNT = String(start + AGENT_GIT_CONFIG.length);
  return env;
}
