/**
 * Agent adapters behind one interface (docs/flows.md#segments): how to launch a segment (first run vs resume,
 * the continuation prompt, permission mode, model, thought level) and how to read the outcome
 * from the agent's output. The segment runner does the rest (spawn, proxy, stop, outcome).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PermissionMode } from '../../core/types';
import { PERMISSION_MCP_SERVER, PERMISSION_PROMPT_TOOL, PERMISSION_RELAY_PATH, PERMISSION_URL_ENV } from '../../protocol/permission-relay';
import { isSegmentEndError, segmentEndedText } from '../../core/segment-end';
import { terminalSafeText } from '../../core/untrusted-text';
import { currentValue, type LiveValue } from '../../core/live-value';
import { DEFAULT_ASK_TIMEOUT_MS, type AskAnsweredBy, type AskDecision } from '../questions/asks';

/** Sent as the prompt of every resumed segment: the session already holds the task itself. */
export const CONTINUATION_PROMPT =
  'The previous working segment of this task was interrupted (its off-peak capacity window ended or the host restarted). ' +
  'Continue the task from where you left off: check what is already done, do not repeat finished steps, and finish the remaining work.';

/** The dummy token the agent sends to the local proxy; the proxy replaces it with the user's key. */
export const PROXY_DUMMY_TOKEN = 'offpeak-local-proxy';

export interface SegmentSpec {
  taskId: string;
  /** The agent session: created by the first segment, resumed by every later one. */
  sessionId: string;
  resume: boolean;
  /** The task's prompt (first segment) or the continuation prompt (resume). */
  prompt: string;
  permissionMode: PermissionMode;
  model: string | null;
  thoughtLevel: string | null;
  workspacePath: string;
  /** The local ticket proxy's base URL (holds the secret path prefix). */
  proxyBaseUrl: string;
  /** A per-segment scratch directory (prompt files etc.). */
  segmentDir: string;
  /**
   * The agent uses its own login (personal mode, docs/architecture.md#personal-mode): no dummy
   * token is given and its own credential variables are left alone; the proxy passes its
   * Authorization through untouched.
   */
  ownLogin?: boolean;
}

/** The credential variables of a launch: the dummy token, or (own login) nothing of ours. */
function credentialEnv(spec: SegmentSpec): { env: Record<string, string>; unsetEnv: string[] } {
  return spec.ownLogin ? { env: {}, unsetEnv: [] } : { env: { ANTHROPIC_AUTH_TOKEN: PROXY_DUMMY_TOKEN }, unsetEnv: ['ANTHROPIC_API_KEY'] };
}

export interface AgentLaunch {
  command: string;
  args: string[];
  /** Variables set on top of the host's environment. */
  env: Record<string, string>;
  /** Variables removed from the host's environment. */
  unsetEnv?: string[];
  /** The agent writes JSON events to fd 3. */
  eventsOnFd3: boolean;
  /** The agent reads the host's answers to its permission questions from fd 4 (JSON lines). */
  answersOnFd4?: boolean;
  /**
   * Where the agent's stdin comes from: 'terminal' (a pipe the task's terminal writes to: the agent
   * asks questions there), or a file it reads to its end (Claude Code takes its prompt this way; an
   * open pipe nobody writes would make it wait 3 s for input at every start).
   */
  stdin: 'terminal' | { file: string };
}

/**
 * Writes a file only the user can read (0600) in a segment directory only the user can enter:
 * prompts and settings carry the task and the proxy's secret URL, which must not reach argv
 * (world-readable in /proc/<pid>/cmdline) nor other local users.
 */
export function writePrivateFile(dir: string, name: string, text: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, name);
  fs.writeFileSync(file, text, { mode: 0o600 });
  fs.chmodSync(file, 0o600); // mode applies on creation only; a leftover file is narrowed too
  return file;
}

export type AgentResult = { ok: true; summary: string } | { ok: false; error: string };

/** Reads an agent's output as it arrives: what to show in the terminal, and the result. */
export interface AgentOutputReader {
  /** Returns the text to show for this stdout chunk (may be reformatted). */
  stdout(chunk: string): string;
  /** One JSON event from fd 3 (reference agent). */
  event?(event: Record<string, unknown>): void;
  /** Flush any partial line at exit; returns text to show. */
  end(): string;
  result(): AgentResult | undefined;
  /** The agent asks before a sensitive operation and waits (its terminal or the host answers). */
  onAsk?: (ask: AgentAsk) => void;
  /** How the agent's question ended on its side (its own record is final). */
  onAskSettled?: (settled: { agentAskId: string; decision: AskDecision; by: AskAnsweredBy }) => void;
}

/** A permission question as the agent put it; `agentAskId` is the agent's own name for it. */
export interface AgentAsk {
  agentAskId: string;
  tool: string;
  summary: string;
  /** The tool call's whole input as the agent showed it in its terminal (the answer's digest is of it; with the tool, it names the call a parked question's stored decision answers). */
  input: string;
  /** The tool's input as the model gave it, when the agent sends it: the stored decision's call digest is taken over it. */
  call?: unknown;
  deadlineAt: number | null;
}

export type AgentKind = 'reference' | 'claude-code';

export interface AgentAdapter {
  readonly kind: AgentKind;
  launch(spec: SegmentSpec): AgentLaunch;
  /** `spec`: the segment's launch (Claude Code words a missing login only when it uses its own). */
  createReader(spec?: Pick<SegmentSpec, 'ownLogin'>): AgentOutputReader;
  /**
   * Whether the agent has this session on disk (a first segment killed before the agent wrote
   * anything must start the session again rather than fail to resume it). Undefined: assume yes.
   */
  sessionExists?(sessionId: string, workspacePath: string): boolean;
}

// ------------------------------------------------------------------------------- reference

export interface ReferenceAgentOptions {
  /** How to run the bundled agent: e.g. [process.execPath, '<ext>/dist/reference-agent.js']. */
  command: string;
  argsPrefix: string[];
  sessionsDir: string;
  /** Deny an unanswered permission prompt after this long (so an unattended night run goes on). */
  askTimeoutMs?: LiveValue<number>;
  /** The host parks the task on an unanswered prompt after this long (the agent's prompt says so); undefined: it does not park. Read at each launch. */
  askParkMs?: LiveValue<number | undefined>;
  maxRetries?: number;
  /** Extra environment (tests shorten the agent's own retry backoff). */
  env?: Record<string, string>;
}

export class ReferenceAgentAdapter implements AgentAdapter {
  readonly kind = 'reference' as const;

  constructor(private readonly options: ReferenceAgentOptions) {}

  launch(spec: SegmentSpec): AgentLaunch {
    // The prompt goes through a file: argv is world-readable and limited in size (128 KiB per element on Linux).
    const promptFile = writePrivateFile(spec.segmentDir, 'prompt.txt', spec.prompt);
    const args = [
      ...this.options.argsPrefix,
      spec.resume ? '--resume' : '--session-id',
      spec.sessionId,
      '--prompt-file',
      promptFile,
      '--cwd',
      spec.workspacePath,
      '--permission-mode',
      spec.permissionMode,
      '--sessions-dir',
      this.options.sessionsDir,
      '--events-fd',
      '3',
      '--answers-fd',
      '4',
      '--ask-timeout-ms',
      String(currentValue(this.options.askTimeoutMs ?? DEFAULT_ASK_TIMEOUT_MS)),
    ];
    const askParkMs = currentValue(this.options.askParkMs);
    if (askParkMs !== undefined) args.push('--ask-park-ms', String(askParkMs));
    if (spec.model) args.push('--model', spec.model);
    const thought = referenceThoughtLevel(spec.thoughtLevel);
    if (thought) args.push('--thought-level', thought);
    if (this.options.maxRetries !== undefined) args.push('--max-retries', String(this.options.maxRetries));
    return {
      command: this.options.command,
      args,
      env: {
        ...this.options.env,
        ANTHROPIC_BASE_URL: spec.proxyBaseUrl,
        ...credentialEnv(spec).env,
        // The extension host's execPath is Electron; this makes it behave as plain Node.
        ELECTRON_RUN_AS_NODE: '1',
      },
      unsetEnv: credentialEnv(spec).unsetEnv,
      eventsOnFd3: true,
      answersOnFd4: true,
      stdin: 'terminal',
    };
  }

  sessionExists(sessionId: string): boolean {
    return fs.existsSync(path.join(this.options.sessionsDir, `${sessionId}.jsonl`));
  }

  createReader(): AgentOutputReader {
    let result: AgentResult | undefined;
    const reader: AgentOutputReader = {
      // The bundled agent removes control sequences from model and tool text itself; its own
      // output keeps only the Backspace echo of a typed answer (reference-agent/agent.ts).
      stdout: (chunk) => chunk,
      end: () => '',
      event: (event) => {
        if (event.type === 'result') {
          result =
            event.ok === true ? { ok: true, summary: String(event.text ?? '') } : { ok: false, error: String(event.error ?? 'failed') };
        } else if (event.type === 'input_needed' && typeof event.ask_id === 'string') {
          reader.onAsk?.({
            agentAskId: event.ask_id,
            tool: String(event.tool ?? ''),
            summary: String(event.summary ?? ''),
            input: typeof event.input === 'string' ? event.input : '',
            deadlineAt: typeof event.deadline_at === 'number' ? event.deadline_at : null,
            ...(event.call !== undefined ? { call: event.call } : {}),
          });
        } else if (event.type === 'input_answered' && typeof event.ask_id === 'string') {
          const by = REFERENCE_ANSWERED_BY[String(event.by)] ?? 'terminal';
          reader.onAskSettled?.({ agentAskId: event.ask_id, decision: event.allowed === true ? 'allow' : 'deny', by });
        }
      },
      result: () => result,
    };
    return reader;
  }
}

const REFERENCE_ANSWERED_BY: Record<string, AskAnsweredBy> = { terminal: 'terminal', host: 'host', timeout: 'timeout', interrupt: 'ended' };

function referenceThoughtLevel(level: string | null): string | null {
  if (!level) return null;
  return ['none', 'low', 'medium', 'high'].includes(level) ? level : null;
}

// ------------------------------------------------------------------------------- Claude Code

export interface ClaudeCodeOptions {
  /** Path of the `claude` executable (or Node, for the script a Windows npm shim runs). */
  command: string;
  /** Arguments before Claude Code's own (the shim's script when `command` is Node). */
  argsPrefix?: string[];
  /** CLAUDE_CONFIG_DIR for the agent (tests isolate it); default: the user's. */
  configDir?: string;
  /** Whether the host runs as root (Claude Code refuses bypassPermissions as root unless IS_SANDBOX=1). */
  isRoot?: boolean;
  env?: Record<string, string>;
  /**
   * How to start the permission relay MCP server (e.g. [execPath, '<ext>/dist/permission-mcp.js']),
   * so a headless Claude Code can ask the host in the modes where it asks. Without it, its asks
   * are denied by Claude Code itself.
   */
  permissionRelay?: { command: string; args: string[]; env?: Record<string, string> };
  /** How long the relay's question may wait (Claude Code's MCP tool time limit must not cut it). Read at each launch. */
  askTimeoutMs?: LiveValue<number>;
  /**
   * Which of Claude Code's setting files a task loads (`--setting-sources`): by default only the
   * user's own (`~/.claude/settings.json`), so a repository's `.claude/settings*.json` (hooks,
   * permission rules, MCP approvals, apiKeyHelper, statusLine, env) has no effect.
   */
  settingSources?: ClaudeSettingSources;
}

/** The choices of `offPeak.claudeCodeSettingSources` (machine scope); `user` is the default. */
export const CLAUDE_SETTING_SOURCES = ['user', 'user,project', 'user,project,local'] as const;
export type ClaudeSettingSources = (typeof CLAUDE_SETTING_SOURCES)[number];
export const DEFAULT_CLAUDE_SETTING_SOURCES: ClaudeSettingSources = 'user';

/**
 * The argv that decides which of Claude Code's setting files and MCP servers load: the same for a
 * task's segments and for "Open session" on its session. Without the repository's settings nothing
 * approves its .mcp.json servers; --strict-mcp-config makes sure no server a repository names starts.
 */
export function claudeSettingSourceArgs(sources: ClaudeSettingSources = DEFAULT_CLAUDE_SETTING_SOURCES): string[] {
  return ['--setting-sources', sources, ...(sources.includes('project') ? [] : ['--strict-mcp-config'])];
}

/** Modes in which Claude Code asks before some tools (default: edits and commands; acceptEdits: commands). */
const CLAUDE_ASKING_MODES: readonly PermissionMode[] = ['default', 'acceptEdits'];

const CLAUDE_THINKING_TOKENS: Record<string, string> = { low: '4000', medium: '10000', high: '31999' };

/**
 * Claude Code: first segment `--session-id <uuid>`, later `--resume <uuid>` from the SAME cwd;
 * `--settings <file>` carries the environment because it beats ~/.claude/settings.json;
 * `--output-format stream-json --verbose` gives the final result line. `-p` without a prompt
 * argument reads the prompt from stdin, which is the prompt file: it reaches its end at once, so
 * Claude Code does not wait for input, and neither the prompt nor the proxy URL is in argv.
 */
export class ClaudeCodeAdapter implements AgentAdapter {
  readonly kind = 'claude-code' as const;

  constructor(private readonly options: ClaudeCodeOptions) {}

  launch(spec: SegmentSpec): AgentLaunch {
    const env: Record<string, string> = {
      ANTHROPIC_BASE_URL: spec.proxyBaseUrl,
      ...credentialEnv(spec).env,
      // A held request (3105) may wait for hours; Claude Code must not time it out and retry.
      API_TIMEOUT_MS: String(24 * 3600_000),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
    };
    const thinking = spec.thoughtLevel ? CLAUDE_THINKING_TOKENS[spec.thoughtLevel] : undefined;
    if (thinking) env.MAX_THINKING_TOKENS = thinking;
    const promptFile = writePrivateFile(spec.segmentDir, 'prompt.txt', spec.prompt);
    const relay = this.options.permissionRelay;
    if (relay && CLAUDE_ASKING_MODES.includes(spec.permissionMode)) {
      // The relay holds the call while the host decides: longer than the ask's own deadline.
      env.MCP_TOOL_TIMEOUT = String(currentValue(this.options.askTimeoutMs ?? DEFAULT_ASK_TIMEOUT_MS) + 120_000);
      // Claude Code 2.1 connects MCP servers in the background in -p mode and fails at once
      // ("--permission-prompt-tool … not found") if the relay has not answered yet: wait for it,
      // longer than its 30 s default on a loaded machine.
      env.MCP_CONNECTION_NONBLOCKING = 'false';
      env.MCP_TIMEOUT = '120000';
    }
    const settingsFile = writePrivateFile(spec.segmentDir, 'claude-settings.json', JSON.stringify({ env }));
    const args = [
      ...(this.options.argsPrefix ?? []),
      '-p',
      spec.resume ? '--resume' : '--session-id',
      spec.sessionId,
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      spec.permissionMode,
      '--settings',
      settingsFile,
      // Only the permission relay below (and no server a repository names) is started.
      ...claudeSettingSourceArgs(this.options.settingSources),
    ];
    if (spec.model) args.push('--model', spec.model);
    if (relay && CLAUDE_ASKING_MODES.includes(spec.permissionMode)) {
      // The proxy's secret URL goes to the relay through this 0600 file's env, never argv.
      const mcpConfig = {
        mcpServers: {
          [PERMISSION_MCP_SERVER]: {
            type: 'stdio',
            command: relay.command,
            args: relay.args,
            env: { ...relay.env, ELECTRON_RUN_AS_NODE: '1', [PERMISSION_URL_ENV]: spec.proxyBaseUrl + PERMISSION_RELAY_PATH },
          },
        },
      };
      const mcpFile = writePrivateFile(spec.segmentDir, 'claude-mcp.json', JSON.stringify(mcpConfig));
      args.push('--mcp-config', mcpFile, '--permission-prompt-tool', PERMISSION_PROMPT_TOOL);
    }
    const processEnv: Record<string, string> = { ...this.options.env, ...env };
    if (this.options.configDir) processEnv.CLAUDE_CONFIG_DIR = this.options.configDir;
    if ((this.options.isRoot ?? process.getuid?.() === 0) && spec.permissionMode === 'bypassPermissions') processEnv.IS_SANDBOX = '1';
    return {
      command: this.options.command,
      args,
      env: processEnv,
      unsetEnv: credentialEnv(spec).unsetEnv,
      eventsOnFd3: false,
      stdin: { file: promptFile },
    };
  }

  /** Sessions live in <config>/projects/<cwd with every non-alphanumeric as '-'>/<uuid>.jsonl. */
  sessionExists(sessionId: string, workspacePath: string): boolean {
    const configDir = this.options.configDir ?? process.env.CLAUDE_CONFIG_DIR ?? path.join(os.homedir(), '.claude');
    const projects = path.join(configDir, 'projects');
    const direct = path.join(projects, workspacePath.replace(/[^A-Za-z0-9]/g, '-'), `${sessionId}.jsonl`);
    if (fs.existsSync(direct)) return true;
    try {
      return fs.readdirSync(projects).some((dir) => fs.existsSync(path.join(projects, dir, `${sessionId}.jsonl`)));
    } catch {
      return false;
    }
  }

  createReader(spec?: Pick<SegmentSpec, 'ownLogin'>): AgentOutputReader {
    // With the proxy's dummy token (team mode, or the model API key) a 401 is not Claude Code's login.
    const loginMissing = (said: string) => spec?.ownLogin === true && CLAUDE_LOGIN_MISSING.test(said);
    let buffer = '';
    let result: AgentResult | undefined;
    const render = (line: string): string => {
      if (!line.trim()) return '';
      let event: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
      try {
        event = JSON.parse(line);
      } catch {
        // not stream-json (e.g. an early error message): shown as is; a missing login is the task's failure
        if (!result && loginMissing(line)) result = { ok: false, error: claudeLoginMissingText(line) };
        return line + '\n';
      }
      switch (event.type) {
        case 'system':
          return event.subtype === 'init' ? `● Claude Code session ${event.session_id ?? ''} · ${event.model ?? ''}\n` : '';
        case 'assistant': {
          let out = '';
          for (const block of event.message?.content ?? []) {
            // Claude Code words the proxy's segment-end refusal as an API error: it is the normal course of a long task.
            if (block.type === 'text')
              out += typeof block.text === 'string' && isSegmentEndError(block.text) ? `■ ${segmentEndedText()}\n` : `${block.text}\n`;
            else if (block.type === 'tool_use') out += `⏺ ${block.name}: ${summarizeInput(block.input)}\n`;
          }
          return out;
        }
        case 'user': {
          let out = '';
          for (const block of event.message?.content ?? []) {
            if (block.type === 'tool_result') {
              const text = typeof block.content === 'string' ? block.content : JSON.stringify(block.content ?? '');
              out += `  ⎿ ${block.is_error ? '✗ ' : ''}${text.split('\n').slice(0, 4).join('\n    ')}\n`;
            }
          }
          return out;
        }
        case 'result': {
          const ok = event.subtype === 'success' && event.is_error !== true;
          const said = String(event.result || event.subtype || 'Claude Code reported an error');
          result = ok
            ? { ok: true, summary: String(event.result ?? '') }
            : {
                ok: false,
                error: loginMissing(said)
                  ? claudeLoginMissingText(said)
                  : said + (event.api_error_status ? ` (API status ${event.api_error_status})` : ''),
              };
          if (ok) return `\n✓ finished (${event.num_turns ?? '?'} turns)\n`;
          return !result.ok && isSegmentEndError(result.error) ? `\n■ ${segmentEndedText()}\n` : `\n✗ ${result.ok ? '' : result.error}\n`;
        }
        default:
          return '';
      }
    };
    // Every line holds model or tool text (messages, commands, tool output): no control sequence reaches the terminal.
    const safeRender = (line: string): string => terminalSafeText(render(line));
    return {
      stdout: (chunk) => {
        buffer += chunk;
        let out = '';
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          out += safeRender(buffer.slice(0, nl));
          buffer = buffer.slice(nl + 1);
        }
        return out;
      },
      end: () => {
        const out = safeRender(buffer);
        buffer = '';
        return out;
      },
      result: () => result,
    };
  }
}

/** What Claude Code says when it has no login (`-p` exits at once with it). */
const CLAUDE_LOGIN_MISSING = /please run \/login|not logged in|invalid api key/i;

/** A missing Claude Code login, and the two ways to fix it (docs/flows.md#which-agent). */
export function claudeLoginMissingText(said: string): string {
  return `Claude Code is not logged in (it said: ${said.trim().slice(0, 200)}). Run \`claude\` once in a terminal to log in, or set "Off-Peak › Personal: Model Credential" to apiKey and run "Off-Peak: Set Model API Key…".`;
}

/**
 * One line for a Claude Code tool call: its command, file, path, pattern or URL, shortened. A
 * headline only: a question shows the whole input beside it (`renderToolInput`).
 */
export function summarizeInput(input: unknown): string {
  if (!input || typeof input !== 'object') return '';
  const record = input as Record<string, unknown>;
  const main = record.command ?? record.file_path ?? record.path ?? record.pattern ?? record.url;
  const text = typeof main === 'string' ? main : JSON.stringify(input);
  return text.length > 120 ? text.slice(0, 117) + '...' : text;
}
