/**
 * "Open session" (docs/flows.md#open-session): what the Session entry of a card or History row
 * opens. A Claude Code task's session continues interactively: `claude --resume <session id>` in
 * an integrated terminal, in the task's folder (Claude Code keeps sessions per folder), with the
 * user's own Claude Code credentials and the setting sources the task ran with, never the
 * off-peak proxy. A reference-agent task's session continues interactively too (`--resume <id>
 * --interactive`) when the user's own model API key is there (personal mode), through a model
 * route on the window's loopback listener that adds the key; otherwise its transcript is shown
 * read-only in the task's terminal, saying why. vscode-free: src/vscode/ turns the options into a terminal.
 */
import fs from 'node:fs';
import { plainNotificationText } from '../../core/untrusted-text';
import { isTerminalStatus, type OffPeakTask } from '../../core/types';
import type { LoopbackProxyServer, ProxyRouteHandle } from '../proxy/loopback-proxy-server';
import { openModelKeyRoute, type ModelKeyRouteOptions } from '../proxy/model-key-proxy';
import { PROXY_DUMMY_TOKEN } from './agent-adapter';
import { agentGitEnv, agentRepositorySettings } from './agent-git-env';
import { claudeSettingSourceArgs, type ClaudeSettingSources } from './claude-code-adapter';

/** Claude Code names sessions with UUIDs; anything else never reaches argv. */
const SESSION_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isSessionUuid(value: string): boolean {
  return SESSION_UUID.test(value);
}

/**
 * An integrated terminal that runs the program itself (VS Code's shellPath/shellArgs: argv, no
 * shell, nothing parsed). `env` is laid over the terminal's environment; null removes a variable.
 */
export interface InteractiveSessionTerminal {
  name: string;
  shellPath: string;
  shellArgs: string[];
  cwd: string;
  env: Record<string, string | null>;
}

export type SessionView =
  /**
   * `close`: what to release once the terminal closed (a reference session's model route);
   * `routeClosed`: resolves when that route is gone (closed, or the engine stopped or restarted):
   * the terminal must end then, since the listener's port is free for another local user to bind,
   * and the agent would send them the conversation and take their answers as the model's.
   */
  | { kind: 'interactive'; terminal: InteractiveSessionTerminal; close?: () => void; routeClosed?: Promise<void> }
  /** The task's own terminal: its segments' logs replayed (and the live one, while it runs); `why`: why not a conversation. */
  | { kind: 'transcript'; why?: string };

/** Why a finished reference-agent session opens read-only in team mode. */
export const REFERENCE_SESSION_NEEDS_OWN_MODEL =
  'The reference agent continues a session with you only with your own model API key, in personal mode: the gateway admits model calls only on an off-peak ticket. Showing the transcript; Follow up continues the session off-peak.';
/** Why it opens read-only in personal mode without a model API key. */
export const REFERENCE_SESSION_NEEDS_KEY =
  'Set your model API key ("Off-Peak: Set Model API Key…") to continue this session with the reference agent; showing the transcript meanwhile.';

/** How an interactive reference-agent session starts (the same program the segments run). */
export interface ReferenceSessionInput {
  command: string;
  argsPrefix: string[];
  sessionsDir: string;
  /** The model route's base URL: a secret path on the window's loopback listener (never the key). */
  baseUrl: string;
}

/** The terminal options of the reference agent continuing `sessionId` with the user, one instruction a line. */
export function referenceSessionTerminal(
  input: ReferenceSessionInput & { sessionId: string; cwd: string; title: string },
): InteractiveSessionTerminal {
  if (!fs.statSync(input.cwd, { throwIfNoEntry: false })?.isDirectory())
    throw new Error(`The task's folder ${input.cwd} no longer exists.`);
  return {
    name: `Reference agent: ${plainNotificationText(input.title, 40)}`,
    shellPath: input.command,
    // The user is there: every edit and command is asked in the terminal, whatever the task's mode.
    shellArgs: [
      ...input.argsPrefix,
      '--resume',
      input.sessionId,
      '--interactive',
      '--cwd',
      input.cwd,
      '--permission-mode',
      'default',
      '--sessions-dir',
      input.sessionsDir,
    ],
    cwd: input.cwd,
    // The dummy token, never the key: the route adds it. ELECTRON_RUN_AS_NODE: the host's execPath is Electron.
    env: { ANTHROPIC_BASE_URL: input.baseUrl, ANTHROPIC_AUTH_TOKEN: PROXY_DUMMY_TOKEN, ANTHROPIC_API_KEY: null, ELECTRON_RUN_AS_NODE: '1' },
  };
}

export interface ClaudeSessionInput {
  /** The `claude` executable (the offPeak.claudeCodePath setting). */
  command: string;
  sessionId: string;
  /** The task's folder: Claude Code finds a session only from the folder that created it. */
  cwd: string;
  title: string;
  /** CLAUDE_CONFIG_DIR the segments used, when not the user's default. */
  configDir?: string;
  /** The environment the terminal starts from (the extension host's). */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** The window's loopback proxy port (0: none yet). */
  proxyPort: number;
  /**
   * The setting sources the task's segments ran with (`offPeak.claudeCodeSettingSources`): the
   * session opens with the same ones, so a `.claude/settings.json` the model wrote in the folder
   * runs no hook in the user's session unless the tasks loaded it too.
   */
  settingSources?: ClaudeSettingSources;
}

/** Whether a variable's value points at the off-peak proxy (its dummy token, or its loopback port). */
function isProxyValue(value: string, proxyPort: number): boolean {
  if (value === PROXY_DUMMY_TOKEN) return true;
  if (proxyPort <= 0) return false;
  return new RegExp(`^https?://(127\\.0\\.0\\.1|localhost|\\[::1\\]):${proxyPort}(/|$)`, 'i').test(value.trim());
}

/** The terminal options of `claude --resume <id>` (throws a plain-text Error when it cannot be opened). */
export function claudeSessionTerminal(input: ClaudeSessionInput): InteractiveSessionTerminal {
  if (!isSessionUuid(input.sessionId)) throw new Error('This task has no Claude Code session to open (its session id is not a UUID).');
  if (!input.command.trim()) throw new Error('The Claude Code path setting (offPeak.claudeCodePath) is empty.');
  if (!fs.statSync(input.cwd, { throwIfNoEntry: false })?.isDirectory())
    throw new Error(`The task's folder ${input.cwd} no longer exists, and Claude Code finds the session only from it.`);
  // The user's own Claude Code: no --settings of ours, and nothing of the off-peak proxy.
  const env: Record<string, string | null> = {};
  for (const [name, value] of Object.entries(input.hostEnv)) {
    if (value !== undefined && isProxyValue(value, input.proxyPort)) env[name] = null;
  }
  if (input.configDir) env.CLAUDE_CONFIG_DIR = input.configDir;
  return {
    name: `Claude Code: ${plainNotificationText(input.title, 40)}`,
    shellPath: input.command,
    shellArgs: ['--resume', input.sessionId, ...claudeSettingSourceArgs(input.settingSources)],
    cwd: input.cwd,
    env,
  };
}

/**
 * How a finished reference-agent session continues with the user: a model route with the user's
 * own model API key (`ownModel`, personal mode) opened on the window's listener, or why not. The
 * caller revokes the route when the terminal closes.
 */
export async function referenceSessionOf(
  listener: LoopbackProxyServer,
  start: Omit<ReferenceSessionInput, 'baseUrl'>,
  ownModel: ModelKeyRouteOptions | undefined,
): Promise<{ input: ReferenceSessionInput; route: ProxyRouteHandle } | { why: string }> {
  if (!ownModel) return { why: REFERENCE_SESSION_NEEDS_OWN_MODEL };
  if (!(await ownModel.apiKey())?.trim()) return { why: REFERENCE_SESSION_NEEDS_KEY };
  const route = await openModelKeyRoute(listener, ownModel);
  return { input: { ...start, baseUrl: route.baseUrl }, route };
}

/** Whether "Open session" may start an agent on the task's session now (finished, and no task works on it). */
export function sessionIsFree(task: Pick<OffPeakTask, 'status' | 'sessionId'>, sessionBusy: boolean): boolean {
  return task.sessionId !== null && isTerminalStatus(task.status) && !sessionBusy;
}

/**
 * What "Open session" opens for a task. `agent`: the agent its session belongs to; `sessionBusy`:
 * a task (this one, or a follow-up) is queued or running on the session, so an interactive agent
 * would work on it at the same time: the task's terminal is shown instead. `reference`: how a
 * reference-agent session continues, or why it cannot.
 */
export function sessionViewOf(
  task: Pick<OffPeakTask, 'title' | 'prompt' | 'status' | 'sessionId' | 'workspacePath'>,
  agent: string | undefined,
  claude: Omit<ClaudeSessionInput, 'sessionId' | 'cwd' | 'title'>,
  sessionBusy: boolean,
  reference: ReferenceSessionInput | { why: string } = { why: REFERENCE_SESSION_NEEDS_OWN_MODEL },
): SessionView {
  if (!task.sessionId) throw new Error('This task has not started: it has no session yet.');
  if (!sessionIsFree(task, sessionBusy) || (agent !== 'claude-code' && agent !== 'reference')) return { kind: 'transcript' };
  const title = task.title || task.prompt.split('\n')[0];
  const at = { sessionId: task.sessionId, cwd: task.workspacePath, title };
  if (agent === 'reference')
    return 'why' in reference
      ? { kind: 'transcript', why: reference.why }
      : { kind: 'interactive', terminal: referenceSessionTerminal({ ...reference, ...at }) };
  return { kind: 'interactive', terminal: claudeSessionTerminal({ ...claude, ...at }) };
}

/**
 * An interactive view with the git settings a task's segments run with (agent-git-env.ts): the
 * user's agent in the task's folder runs `git status` at its start and git in its commands, and a
 * repository's config runs nothing there either. Throws, saying why, when a name cannot be overridden.
 */
export async function withAgentGit(view: SessionView, hostEnv: Readonly<Record<string, string | undefined>>): Promise<SessionView> {
  if (view.kind !== 'interactive') return view;
  const git = agentGitEnv(hostEnv, await agentRepositorySettings(view.terminal.cwd));
  return { ...view, terminal: { ...view.terminal, env: { ...view.terminal.env, ...git } } };
}
