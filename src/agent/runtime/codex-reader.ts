/**
 * Drives `codex app-server` over its stdin and stdout (JSON-RPC, one message a line; the shapes are
 * those `codex app-server generate-ts` emits for the pinned version): `initialize`, then
 * `thread/start` in the task's folder (first segment) or `thread/resume` of the task's thread (every
 * later one), then one `turn/start` with the segment's prompt. The turn's items are shown as they
 * stream (the agent's text, commands with their exit and first lines of output, file changes), as
 * plain text with control sequences stripped; when the turn completes stdin is closed and Codex
 * exits. docs/flows.md#segments
 */
import { oneLineText } from '../../core/ask-input';
import { isSegmentEndError, segmentEndedText } from '../../core/segment-end';
import { TerminalLines } from '../../core/untrusted-text';
import type { AgentOutputReader, AgentResult } from './agent-adapter';

/** Codex's sandbox and approval policy for a segment (ThreadStartParams' `sandbox`, `approvalPolicy`). */
export type CodexSandbox = 'read-only' | 'workspace-write' | 'danger-full-access';
export type CodexApprovalPolicy = 'never' | 'on-request' | 'untrusted';

/** What one segment asks of Codex. */
export interface CodexTurnPlan {
  /** Resume this thread; null: start a new one. */
  resumeThreadId: string | null;
  prompt: string;
  cwd: string;
  model: string | null;
  effort: string | null;
  sandbox: CodexSandbox;
  approvalPolicy: CodexApprovalPolicy;
  /** The model provider Codex uses (its id and its `model_providers` entry), given per thread: never in argv. */
  modelProvider: string;
  config: Record<string, unknown>;
  /** The thread Codex started or resumed (its id is the task's, kept by the adapter). */
  onThread(threadId: string): void;
}

type Message = { id?: number | string; method?: string; params?: Record<string, any>; result?: any; error?: { message?: string } }; // eslint-disable-line @typescript-eslint/no-explicit-any

/** What Codex prints for a command's output: its first lines. */
const OUTPUT_LINES = 4;

export class CodexReader implements AgentOutputReader {
  relayAsk?: AgentOutputReader['relayAsk'];
  private input: NodeJS.WritableStream | undefined;
  private buffer = '';
  private nextId = 1;
  /** Answers awaited, by request id: each handler returns what to show. */
  private readonly pending = new Map<number, (message: Message) => string | void>();
  private resultValue: AgentResult | undefined;
  private lastMessage = '';
  /** The changes of each file-change item, by item id: its approval request shows them whole. */
  private readonly fileChanges = new Map<string, unknown>();
  /** The agent's text streams in deltas: whether the line it is on has been ended. */
  private inText = false;
  private readonly lines = new TerminalLines();

  constructor(private readonly plan: CodexTurnPlan) {}

  drive(input: NodeJS.WritableStream): void {
    this.input = input;
    this.request('initialize', { clientInfo: { name: 'offpeak-tasks', title: 'Off-Peak Tasks', version: '1' }, capabilities: null }, () => {
      this.send({ method: 'initialized' });
      this.openThread();
    });
  }

  stdout(chunk: string): string {
    this.buffer += chunk;
    let out = '';
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      out += this.line(this.buffer.slice(0, nl));
      this.buffer = this.buffer.slice(nl + 1);
    }
    return out;
  }

  end(): string {
    const out = this.line(this.buffer) + (this.inText ? this.lines.text('\n') : '');
    this.buffer = '';
    this.inText = false;
    return out;
  }

  result(): AgentResult | undefined {
    return this.resultValue;
  }

  private openThread(): void {
    const { plan } = this;
    const settings = {
      cwd: plan.cwd,
      model: plan.model,
      modelProvider: plan.modelProvider,
      config: plan.config,
      approvalPolicy: plan.approvalPolicy,
      sandbox: plan.sandbox,
    };
    const method = plan.resumeThreadId ? 'thread/resume' : 'thread/start';
    const params = plan.resumeThreadId ? { threadId: plan.resumeThreadId, ...settings, excludeTurns: true } : settings;
    this.request(method, params, (answer): string | void => {
      const id = answer.result?.thread?.id;
      if (typeof id !== 'string')
        return this.fail(
          `Codex could not ${plan.resumeThreadId ? 'resume' : 'start'} its thread: ${answer.error?.message ?? 'no thread id'}`,
        );
      plan.onThread(id);
      this.request(
        'turn/start',
        { threadId: id, input: [{ type: 'text', text: plan.prompt, text_elements: [] }], effort: plan.effort },
        (turn) => {
          if (turn.error) this.fail(`Codex refused the turn: ${turn.error.message ?? 'unknown error'}`);
        },
      );
      const model = typeof answer.result?.model === 'string' ? ` · ${answer.result.model}` : '';
      return this.show(`● Codex thread ${id}${plan.resumeThreadId ? ' (resumed)' : ''}${model}
`);
    });
  }

  private line(line: string): string {
    if (!line.trim()) return '';
    let message: Message;
    try {
      message = JSON.parse(line) as Message;
    } catch {
      return this.show(`${line}\n`); // not JSON-RPC: shown as is (plain text)
    }
    if (message.method === undefined && message.id !== undefined) {
      const answered = this.pending.get(Number(message.id));
      this.pending.delete(Number(message.id));
      return answered?.(message) || '';
    }
    if (message.id !== undefined) return this.serverRequest(message);
    return this.notification(message.method ?? '', message.params ?? {});
  }

  /**
   * Codex asks before a command or a file change: the product's question (relayed to the host,
   * which shows it in the terminal and on the card), its answer Codex's decision. Without a host to
   * ask it is declined. Any other request Codex may make of its client is answered "not supported".
   */
  private serverRequest(message: Message): string {
    const p = message.params ?? {};
    const command = message.method === 'item/commandExecution/requestApproval';
    if (command || message.method === 'item/fileChange/requestApproval') {
      const relay = this.relayAsk;
      const decide = (accept: boolean) => this.send({ id: message.id, result: { decision: accept ? 'accept' : 'decline' } });
      if (!relay) {
        decide(false);
        const what = command ? `run ${p.command ?? 'a command'}` : 'change files';
        return this.show(`${this.closeText()}⏺ Codex asked to ${oneLineText(String(what))}: declined (no one to ask here)\n`);
      }
      const input: Record<string, unknown> = command
        ? { command: String(p.command ?? ''), cwd: p.cwd ?? null, ...(p.reason ? { reason: p.reason } : {}) }
        : {
            changes: this.fileChanges.get(String(p.itemId)) ?? [],
            ...(p.reason ? { reason: p.reason } : {}),
            ...(p.grantRoot ? { grant_root: p.grantRoot } : {}),
          };
      relay({ tool_name: command ? 'Codex command' : 'Codex file change', input }).then(
        (answer) => decide(answer.decision === 'allow'),
        () => decide(false),
      );
      return this.closeText();
    }
    this.send({ id: message.id, error: { code: -32601, message: `not supported by Off-Peak Tasks: ${message.method}` } });
    return '';
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private notification(method: string, p: Record<string, any>): string {
    switch (method) {
      case 'item/agentMessage/delta':
        if (typeof p.delta !== 'string') return '';
        this.inText = true;
        return this.show(p.delta);
      case 'item/started':
        if (p.item?.type === 'fileChange') this.fileChanges.set(String(p.item.id), p.item.changes ?? []);
        if (p.item?.type === 'commandExecution') return this.show(`${this.closeText()}⏺ $ ${oneLineText(String(p.item.command ?? ''))}\n`);
        return '';
      case 'item/completed':
        return this.itemCompleted(p.item ?? {});
      case 'error': {
        const text = String(p.error?.message ?? 'Codex reported an error');
        if (isSegmentEndError(text)) return this.show(`${this.closeText()}■ ${segmentEndedText()}\n`);
        return this.show(`${this.closeText()}✗ ${text}${p.willRetry ? ' (retrying)' : ''}\n`);
      }
      case 'turn/completed':
        return this.turnCompleted(p.turn ?? {});
      default:
        return '';
    }
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private itemCompleted(item: Record<string, any>): string {
    if (item.type === 'agentMessage') {
      if (typeof item.text === 'string') this.lastMessage = item.text;
      return this.closeText();
    }
    if (item.type === 'commandExecution') {
      const output = String(item.aggregatedOutput ?? '')
        .split('\n')
        .filter((l) => l.trim())
        .slice(0, OUTPUT_LINES);
      const status = item.exitCode === null || item.exitCode === undefined ? String(item.status ?? '') : `exit ${item.exitCode}`;
      return this.show(`  ⎿ ${status}${output.length ? `\n    ${output.join('\n    ')}` : ''}\n`);
    }
    if (item.type === 'fileChange' && Array.isArray(item.changes)) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const changed = item.changes.map((c: any) => `⏺ ${c.kind?.type ?? 'change'} ${oneLineText(String(c.path ?? ''))}`).join('\n');
      return this.show(`${this.closeText()}${changed}\n`);
    }
    return '';
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private turnCompleted(turn: Record<string, any>): string {
    const error = turn.error?.message ? String(turn.error.message) : null;
    this.resultValue =
      turn.status === 'completed'
        ? { ok: true, summary: this.lastMessage }
        : { ok: false, error: error ?? `Codex's turn ended ${String(turn.status ?? 'without a status')}` };
    this.input?.end(); // Codex exits once its stdin closes
    if (this.resultValue.ok) return this.show(`${this.closeText()}\n✓ finished\n`);
    if (isSegmentEndError(this.resultValue.error)) return this.show(`${this.closeText()}\n■ ${segmentEndedText()}\n`);
    return this.show(`${this.closeText()}\n✗ ${this.resultValue.error}\n`);
  }

  private fail(error: string): void {
    this.resultValue ??= { ok: false, error };
    this.input?.end();
  }

  /** Ends the agent's text line before something else is shown. */
  private closeText(): string {
    if (!this.inText) return '';
    this.inText = false;
    return '\n';
  }

  /** Every text shown is model or tool text: no control sequence reaches the terminal, no line starts as a question does. */
  private show(text: string): string {
    return this.lines.text(text);
  }

  private request(method: string, params: unknown, answered: (message: Message) => void): void {
    const id = this.nextId++;
    this.pending.set(id, answered);
    this.send({ id, method, params });
  }

  private send(message: Record<string, unknown>): void {
    if (this.input && (this.input as NodeJS.WritableStream & { writable?: boolean }).writable !== false)
      this.input.write(JSON.stringify(message) + '\n');
  }
}
