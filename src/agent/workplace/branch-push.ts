/**
 * "Open pull request"'s push (docs/flows.md#pull-requests): the task's branch, and nothing else,
 * goes to the forge, through the one hardened git (docs/security.md#pushing-a-task-branch).
 * - Only `refs/heads/<branch>:refs/heads/<branch>`, never forced (no `+`, no `--force`), and
 *   never the branch the pull request goes into.
 * - From a private git directory of the extension's own (the repository's objects borrowed
 *   read-only): the repository's config, which the agent could write, cannot rewrite the URL
 *   (`url.*.pushInsteadOf`), add a `pushurl`, a proxy or switch off TLS checks for the token.
 * - To an https URL the caller built from the forge's host (plain http only to a literal loopback
 *   address, src/core/loopback-host.ts), with no credential in it; only that one protocol allowed.
 * - The token reaches that one git process through its environment only, as an Authorization
 *   header for that URL (`pushAuthEnv`): never in an argv, a URL, a config file or a log, and with
 *   no helper script, so no shell is needed (Git for Windows included).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { isLiteralLoopback } from '../../core/loopback-host';
import { plainNotificationText } from '../../core/untrusted-text';
import { runGit, runGitResult } from './hardened-git';

export interface PushInput {
  /** A worktree of the repository (or the repository itself) holding the branch. */
  repoPath: string;
  branch: string;
  /** The branch the pull request goes into: never pushed. */
  baseBranch: string;
  /** https://host/owner/repo.git: no user name or password in it. */
  url: string;
  /** The user name git sends with the token (GitHub: `x-access-token`, GitLab: `oauth2`). */
  username: string;
  token: string;
  /** A private folder of the task's (removed after). */
  privateDir: string;
  timeoutMs?: number;
}

export type PushFailure = 'non-fast-forward' | 'protected' | 'permission' | 'auth' | 'unreachable' | 'refused';

export type PushResult = { kind: 'pushed'; commit: string } | { kind: 'failed'; failure: PushFailure; detail: string };

/**
 * The token as git's command-line-scope config, given in the environment (`GIT_CONFIG_COUNT`, read
 * by git 2.31+ as if passed with `-c`): an Authorization header for URLs under the push URL alone,
 * and no redirect followed (the header would go with it).
 */
export function pushAuthEnv(url: URL, username: string, token: string): Record<string, string> {
  const basic = Buffer.from(`${username}:${token}`, 'utf8').toString('base64');
  return {
    GIT_CONFIG_COUNT: '2',
    GIT_CONFIG_KEY_0: `http.${url.href}.extraHeader`,
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    GIT_CONFIG_KEY_1: 'http.followRedirects',
    GIT_CONFIG_VALUE_1: 'false',
  };
}

const PUSH_TIMEOUT_MS = 120_000;

/** Where a push may go: https, or http to a literal loopback address; no credential in the URL. */
export function pushUrlRefusal(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `${url} is not a URL.`;
  }
  if (parsed.username || parsed.password) return 'The push URL must not carry a credential.';
  if (parsed.protocol === 'https:') return null;
  if (parsed.protocol === 'http:' && isLiteralLoopback(parsed.hostname)) return null;
  return `Pushing goes over https only (${parsed.protocol} refused).`;
}

/** Why git refused, from its porcelain and stderr. */
export function pushFailureOf(output: string): PushFailure {
  if (/non-fast-forward|fetch first|stale info/i.test(output)) return 'non-fast-forward';
  if (/protected branch|pre-receive hook declined|protected/i.test(output)) return 'protected';
  if (/authentication failed|could not read (username|password)|invalid username or password|\b401\b/i.test(output)) return 'auth';
  if (/permission|denied|not allowed|\b403\b/i.test(output)) return 'permission';
  if (/could not resolve|failed to connect|connection refused|timed out|unable to access|couldn't connect/i.test(output))
    return 'unreachable';
  return 'refused';
}

export async function pushTaskBranch(input: PushInput): Promise<PushResult> {
  const refusal = pushUrlRefusal(input.url);
  if (refusal) return { kind: 'failed', failure: 'refused', detail: refusal };
  if (input.branch === input.baseBranch)
    return { kind: 'failed', failure: 'refused', detail: `${input.branch} is the branch the pull request goes into: it is never pushed.` };
  const tip = (await runGit(['rev-parse', '--verify', '--quiet', `refs/heads/${input.branch}^{commit}`], { cwd: input.repoPath }))?.trim();
  if (!tip) return { kind: 'failed', failure: 'refused', detail: `The branch ${input.branch} is gone.` };
  const common = (await runGit(['rev-parse', '--git-common-dir'], { cwd: input.repoPath }))?.trim();
  if (!common) return { kind: 'failed', failure: 'refused', detail: `${input.repoPath} is not a git repository.` };
  const objects = path.resolve(input.repoPath, common, 'objects');

  const gitDir = path.resolve(input.privateDir, 'push-git');
  await fs.rm(gitDir, { recursive: true, force: true });
  await fs.mkdir(gitDir, { recursive: true, mode: 0o700 });
  try {
    if ((await runGit(['init', '--quiet', '--bare', '--template=', gitDir], { cwd: gitDir })) === null)
      return { kind: 'failed', failure: 'refused', detail: 'A private git directory could not be made.' };
    const base = { GIT_DIR: gitDir, GIT_ALTERNATE_OBJECT_DIRECTORIES: objects };
    if ((await runGit(['update-ref', `refs/heads/${input.branch}`, tip], { cwd: gitDir, gitEnv: base })) === null)
      return { kind: 'failed', failure: 'refused', detail: `The branch ${input.branch} could not be read.` };
    const url = new URL(input.url);
    const ref = `refs/heads/${input.branch}`;
    const run = await runGitResult(['push', '--porcelain', '--no-verify', '--no-follow-tags', input.url, `${ref}:${ref}`], {
      cwd: gitDir,
      timeoutMs: input.timeoutMs ?? PUSH_TIMEOUT_MS,
      gitEnv: {
        ...base,
        GIT_ALLOW_PROTOCOL: url.protocol.slice(0, -1),
        // No prompt: a refused token fails at once instead of waiting for a terminal.
        GIT_TERMINAL_PROMPT: '0',
        ...pushAuthEnv(url, input.username, input.token),
      },
    });
    if (run.code === 0) return { kind: 'pushed', commit: tip };
    const output = `${run.stdout.toString('utf8')}\n${run.stderr}`;
    return { kind: 'failed', failure: pushFailureOf(output), detail: lastLines(output) };
  } finally {
    await fs.rm(gitDir, { recursive: true, force: true });
  }
}

/** git's own last words, plain (for the error the card shows; no credential is ever in them). */
function lastLines(output: string): string {
  const lines = output
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && l !== 'Done');
  return plainNotificationText(lines.slice(-3).join(' · '));
}
