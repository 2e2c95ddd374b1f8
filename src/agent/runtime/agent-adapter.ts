/**
 * The contract between the segment runner and an agent (docs/flows.md#segments): what a segment
 * asks of an agent (`SegmentSpec`), how the agent is launched (`AgentLaunch`), and how its output is
 * read (`AgentOutputReader`). One adapter per agent implements it: `reference-agent-adapter.ts`,
 * `claude-code-adapter.ts`, `codex-adapter.ts`. The segment runner does the rest (spawn, proxy, stop, outcome).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PermissionMode } from '../../core/types';
import type { PermissionRelayAnswer, PermissionRelayRequest } from '../../protocol/permission-relay';
import type { AskAnsweredBy, AskDecision } from '../questions/asks';

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
export function credentialEnv(spec: SegmentSpec): { env: Record<string, string>; unsetEnv: string[] } {
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
   * asks questions there), 'driver' (a pipe only the reader writes to: `AgentOutputReader.drive`,
   * Codex's JSON-RPC), or a file it reads to its end (Claude Code takes its prompt this way; an
   * open pipe nobody writes would make it wait 3 s for input at every start).
   */
  stdin: 'terminal' | 'driver' | { file: string };
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
  /**
   * The agent's stdin, once it runs, for a reader that drives the agent over it (`stdin: 'driver'`):
   * it writes requests there and reads the answers from stdout; the terminal's keys never go there.
   */
  drive?(input: NodeJS.WritableStream): void;
  result(): AgentResult | undefined;
  /** The agent asks before a sensitive operation and waits (its terminal or the host answers). */
  onAsk?: (ask: AgentAsk) => void;
  /**
   * Set by the segment for a reader whose agent asks over its own channel (Codex's approval
   * requests): the question goes to the host as a relayed one (shown in the terminal, answered
   * from any surface), and the promise is its answer.
   */
  relayAsk?: (request: PermissionRelayRequest) => Promise<PermissionRelayAnswer>;
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

export type AgentKind = 'reference' | 'claude-code' | 'codex';

export interface AgentAdapter {
  readonly kind: AgentKind;
  /** The model API it speaks, so its ticket proxy forwards to that gateway route (default Anthropic Messages). */
  readonly api?: 'anthropic' | 'openai';
  launch(spec: SegmentSpec): AgentLaunch;
  /** `spec`: the segment's launch (Claude Code words a missing login only when it uses its own). */
  createReader(spec?: Pick<SegmentSpec, 'ownLogin'>): AgentOutputReader;
  /**
   * Whether the agent has this session on disk (a first segment killed before the agent wrote
   * anything must start the session again rather than fail to resume it). Undefined: assume yes.
   */
  sessionExists?(sessionId: string, workspacePath: string): boolean;
}
