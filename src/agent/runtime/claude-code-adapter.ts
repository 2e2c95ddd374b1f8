/**
 * Claude Code's adapter: its argv and settings file (the environment, which setting files load,
 * the permission relay MCP server in the modes where it asks), where its sessions live, and its
 * stream-json output rendered for the terminal and read into a result.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PermissionMode } from '../../core/types';
import { PERMISSION_MCP_SERVER, PERMISSION_PROMPT_TOOL, PERMISSION_RELAY_PATH, PERMISSION_URL_ENV } from '../../protocol/permission-relay';
import { isSegmentEndError, segmentEndedText } from '../../core/segment-end';
import { TerminalLines } from '../../core/untrusted-text';
import { oneLineText } from '../../core/ask-input';
import { currentValue, type LiveValue } from '../../core/live-value';
import { DEFAULT_ASK_TIMEOUT_MS } from '../questions/asks';
import {
  credentialEnv,
  writePrivateFile,
  type AgentAdapter,
  type AgentLaunch,
  type AgentOutputReader,
  type AgentResult,
  type SegmentSpec,
} from './agent-adapter';

export interface ClaudeCodeOptions {
  /** Path of the `claude` executable (or Node, for the script a Windows npm shim runs). */
  command: string;
  /** Arguments before Claude Code's own (the shim's script when `command` is Node). */
  argsPrefix?: string[];
  /** Where Claude Code was found, as the user would run it (a missing login says to run it once); default `claude`. */
  shownAs?: string;
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
    const claudeLoginMissingText = (said: string) => loginMissingText(said, this.options.shownAs);
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
            else if (block.type === 'tool_use') out += `⏺ ${oneLineText(`${block.name}: ${summarizeInput(block.input)}`)}\n`;
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
    // Every line holds model or tool text (messages, commands, tool output): no control sequence reaches the terminal,
    // and no line starts as a question does.
    const lines = new TerminalLines();
    const safeRender = (line: string): string => lines.text(render(line));
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

/**
 * A missing Claude Code login, and the two ways to fix it (docs/flows.md#which-agent); `run`: where
 * Claude Code was found (through offPeak.claudeCodePath or an installer's place it is not on PATH).
 */
export function loginMissingText(said: string, run = 'claude'): string {
  const shown = /\s/.test(run) ? `"${run}"` : run;
  return `Claude Code is not logged in (it said: ${said.trim().slice(0, 200)}). Run \`${shown}\` once in a terminal to log in, or set "Off-Peak › Personal: Model Credential" to apiKey and run "Off-Peak: Set Model API Key…".`;
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
