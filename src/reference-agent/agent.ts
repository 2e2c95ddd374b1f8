import type { Writable } from 'node:stream';
import { ApiError, createMessage, type Endpoint, type RetryPolicy } from './messages-client';
import type { PermissionMode, ReferenceAgentEvent, ThoughtLevel } from './events';
import { SessionTranscript, type ContentBlock, type Message } from './session';
import { permissionFor, runTool, summarizeTool, toolDefinitions, toolRisk } from './tools';
import type { PermissionAsker } from './permission-prompt';
import { oneLineText, renderToolInput } from '../core/ask-input';
import { TerminalLines } from '../core/untrusted-text';
import { shellDescription } from './shell';

/**
 * The transcript stream: model and tool text pass through it, so escape sequences are removed,
 * other control characters shown and no line starts as a question (docs/flows.md#terminal-text);
 * only the permission prompt (its question and the echo of typed keys) bypasses it.
 */
function safeOut(out: Writable): Pick<Writable, 'write'> {
  const lines = new TerminalLines();
  return { write: (text: string) => out.write(lines.text(text)) } as Pick<Writable, 'write'>;
}

/** A tool call's echo: one line, a newline in the model's input shown as `⏎` as the question shows it. */
function toolEcho(name: string, input: Record<string, unknown>): string {
  return `⏺ ${oneLineText(`${name}: ${summarizeTool(name, input)}`)}\n`;
}

export interface AgentRunOptions {
  endpoint: Endpoint;
  workspace: string;
  sessionsDir: string;
  /** New session with this id, or resume it. */
  sessionId: string;
  resume: boolean;
  prompt: string;
  permissionMode: PermissionMode;
  model: string;
  thoughtLevel: ThoughtLevel;
  maxTurns: number;
  askTimeoutMs: number;
  /** The host parks the task on an unanswered prompt after this long (what the prompt says). */
  askParkMs?: number;
  commandTimeoutMs: number;
  retry: RetryPolicy;
  out: Writable;
  asker: PermissionAsker;
  emit(event: ReferenceAgentEvent): void;
  signal: AbortSignal;
}

export type AgentRunResult =
  | { kind: 'completed'; text: string; turns: number }
  | { kind: 'failed'; error: string; turns: number }
  | { kind: 'interrupted'; turns: number };

const THINKING_BUDGET: Record<ThoughtLevel, number> = { none: 0, low: 2048, medium: 8192, high: 24_576 };
const OUTPUT_TOKENS = 8192;

function systemPrompt(workspace: string, mode: PermissionMode): string {
  const modeText: Record<PermissionMode, string> = {
    plan: 'You are in PLAN mode: you may only read and list files. Do not attempt changes; describe the plan instead.',
    default: "File changes and commands need the user's approval; a denied tool call means: do not do that, find another way or stop.",
    acceptEdits: "File edits are approved automatically; commands need the user's approval.",
    bypassPermissions: 'All tools are approved automatically.',
  };
  return [
    'You are the Off-Peak reference coding agent. You work on a one-shot task in a workspace, unattended.',
    `The workspace root is ${workspace}; all paths are relative to it.`,
    shellDescription(),
    modeText[mode],
    'Use the tools to inspect and change the workspace. When the task is done, answer with a short summary of what you did.',
  ].join('\n');
}

/** The agent loop: send the conversation, run the tools the model asks for, repeat until it ends its turn. */
export async function runAgent(options: AgentRunOptions): Promise<AgentRunResult> {
  const opts = { ...options, out: safeOut(options.out) as Writable };
  const { out } = opts;
  const session = opts.resume
    ? SessionTranscript.load(opts.sessionsDir, opts.sessionId)
    : SessionTranscript.create(opts.sessionsDir, opts.sessionId, opts.workspace);
  const before = session.messages.length;
  if (opts.resume) session.repairDanglingToolUses();
  opts.emit({ type: 'session', session_id: session.id, resumed: opts.resume, messages: before });
  out.write(
    `● ${opts.resume ? 'resuming' : 'new'} session ${session.id}${opts.resume ? ` (${before} messages)` : ''} · ${opts.model} · ${opts.permissionMode}\n`,
  );
  if (opts.prompt) {
    session.appendUserText(opts.prompt);
    out.write(`\n> ${opts.prompt.replace(/\n/g, '\n  ')}\n\n`);
  }

  const budget = THINKING_BUDGET[opts.thoughtLevel];
  let turns = 0;
  while (turns < opts.maxTurns) {
    if (opts.signal.aborted) return { kind: 'interrupted', turns };
    turns++;
    let assistant: { content: ContentBlock[]; stopReason: string | null };
    try {
      assistant = await createMessage(
        opts.endpoint,
        {
          model: opts.model,
          max_tokens: OUTPUT_TOKENS + budget,
          system: systemPrompt(opts.workspace, opts.permissionMode),
          messages: session.messages,
          tools: toolDefinitions(opts.permissionMode),
          ...(budget > 0 ? { thinking: { type: 'enabled' as const, budget_tokens: budget } } : {}),
        },
        opts.retry,
        {
          onText: (t) => out.write(t),
          onThinking: (t) => out.write(t),
          onRetry: (attempt, waitMs, reason) =>
            out.write(`\n[retry ${attempt}/${opts.retry.maxRetries} in ${Math.round(waitMs / 100) / 10} s: ${reason}]\n`),
        },
        opts.signal,
      );
    } catch (err) {
      if (opts.signal.aborted) return { kind: 'interrupted', turns };
      const message = err instanceof ApiError ? err.message : `unexpected error: ${(err as Error).message}`;
      return { kind: 'failed', error: message, turns };
    }
    const message: Message = { role: 'assistant', content: assistant.content };
    session.append(message);
    out.write('\n');

    const toolUses = assistant.content.filter((b): b is Extract<ContentBlock, { type: 'tool_use' }> => b.type === 'tool_use');
    if (assistant.stopReason !== 'tool_use' || toolUses.length === 0) {
      const text = assistant.content
        .filter((b): b is Extract<ContentBlock, { type: 'text' }> => b.type === 'text')
        .map((b) => b.text)
        .join('');
      if (assistant.stopReason === 'max_tokens') {
        session.appendUserText('Your answer was cut off at the output limit. Continue where you stopped.');
        continue;
      }
      return { kind: 'completed', text, turns };
    }

    const results: ContentBlock[] = [];
    for (const use of toolUses) {
      if (opts.signal.aborted) return { kind: 'interrupted', turns };
      results.push(await runToolUse(opts, use));
    }
    if (opts.signal.aborted) return { kind: 'interrupted', turns };
    session.append({ role: 'user', content: results });
  }
  return { kind: 'failed', error: `stopped after ${opts.maxTurns} turns without finishing`, turns };
}

async function runToolUse(opts: AgentRunOptions, use: Extract<ContentBlock, { type: 'tool_use' }>): Promise<ContentBlock> {
  const { out } = opts;
  const summary = summarizeTool(use.name, use.input);
  out.write(toolEcho(use.name, use.input));
  const risk = toolRisk(use.name, use.input, opts.workspace);
  const decision = risk ? permissionFor(opts.permissionMode, risk) : 'allow';
  if (decision === 'deny') {
    out.write('  ⎿ refused: plan mode is read-only\n');
    return {
      type: 'tool_result',
      tool_use_id: use.id,
      content: 'Refused: plan mode is read-only; no changes or commands are allowed.',
      is_error: true,
    };
  }
  if (decision === 'ask') {
    const deadline = Date.now() + opts.askTimeoutMs;
    // Allow runs the tool with its whole input, so the question shows all of it, and a host answer
    // counts only with the digest of this text (docs/flows.md#what-a-question-shows).
    const input = renderToolInput(use.input);
    // The tool_use id names the question: unique in the session, and the host answers by it.
    opts.emit({ type: 'input_needed', ask_id: use.id, tool: use.name, summary, input, deadline_at: deadline, call: use.input });
    const answer = await opts.asker.ask(use.id, use.name, input, opts.askTimeoutMs, opts.signal, opts.askParkMs);
    opts.emit({ type: 'input_answered', ask_id: use.id, tool: use.name, allowed: answer.allowed, by: answer.by });
    if (!answer.allowed) {
      const why =
        answer.by === 'timeout'
          ? 'nobody answered the permission prompt in time'
          : answer.by === 'interrupt'
            ? 'the run was interrupted'
            : 'the user denied it';
      return { type: 'tool_result', tool_use_id: use.id, content: `Not allowed: ${why}. Do not retry the same action.`, is_error: true };
    }
  }
  const result = await runTool(use.name, use.input, {
    workspace: opts.workspace,
    signal: opts.signal,
    commandTimeoutMs: opts.commandTimeoutMs,
  });
  const preview = result.content.split('\n').slice(0, 6).join('\n    ');
  out.write(`  ⎿ ${result.isError ? '✗ ' : ''}${preview}\n`);
  opts.emit({ type: 'tool', tool: use.name, summary, ok: !result.isError });
  return { type: 'tool_result', tool_use_id: use.id, content: result.content, ...(result.isError ? { is_error: true } : {}) };
}

/** Prints a stored session as a readable transcript. */
export function printTranscript(session: SessionTranscript, stream: Writable): void {
  const out = safeOut(stream);
  for (const message of session.messages) {
    for (const block of message.content) {
      if (block.type === 'text') out.write(message.role === 'user' ? `> ${block.text}\n\n` : `${block.text}\n\n`);
      else if (block.type === 'tool_use') out.write(toolEcho(block.name, block.input));
      else if (block.type === 'tool_result')
        out.write(`  ⎿ ${block.is_error ? '✗ ' : ''}${block.content.split('\n').slice(0, 3).join('\n    ')}\n`);
    }
  }
}
