/**
 * Permission asks of running agents, held by the runtime of the window that runs them.
 *
 * An agent that wants to edit or run something the task's permission mode does not allow on its
 * own asks; the ask is pending here (one list per task) until the first answer: the host (a card's
 * Allow/Deny, a notification), the agent's own terminal, or the deadline (denied, so an unattended
 * night run goes on). A later answer is ignored. Each adapter delivers the decision to its agent
 * (the reference agent: a line on its answer channel; Claude Code: the held permission-prompt
 * request of its MCP relay).
 *
 * The agent that reads its own terminal decides which answer reached it first; it reports that
 * decision back (`settle`), and if it differs from what was recorded (the host's answer crossed a
 * typed one) the record follows the agent, which is what actually ran.
 */
import crypto from 'node:crypto';
import type { Clock } from '../core/clock';
import { Emitter, type Event } from '../core/event';
import { askInputDigest, digestMatches, visibleControls } from '../core/ask-input';
import { plainNotificationText } from '../core/untrusted-text';
import { createSystemTimers, type TimerHandle, type Timers } from '../core/timers';

export type AskDecision = 'allow' | 'deny';
/** Who answered: the host API, the agent's terminal, nobody before the deadline, or the segment ended. */
export type AskAnsweredBy = 'host' | 'terminal' | 'timeout' | 'ended';

export interface PendingAsk {
  id: string;
  taskId: string;
  /** The agent's tool name (e.g. `write_file`, `Bash`). */
  tool: string;
  /** What the agent wants to do, one line of plain text, maybe shortened (a headline, never enough to approve). Untrusted: the model wrote it. */
  summary: string;
  /**
   * The tool call's whole input as every surface that offers Allow shows it (never shortened;
   * control characters made visible). Untrusted (docs/flows.md#what-a-question-shows).
   */
  input: string;
  /** sha256 (hex) of `input`: an answer must carry it (an answer for another input is refused). */
  inputDigest: string;
  askedAt: number;
  /** Denied automatically at this time. */
  deadlineAt: number;
}

export type AskEvent =
  | { type: 'asked'; ask: PendingAsk }
  | { type: 'answered'; ask: PendingAsk; decision: AskDecision; by: AskAnsweredBy; at: number };

/** `input-mismatch`: the answer names another input than the question's (what was shown is not what would run). */
export type AnswerResult = 'accepted' | 'already-answered' | 'unknown' | 'input-mismatch';

/** Carries a decision to the agent that asked. */
export type AskDelivery = (decision: AskDecision, by: AskAnsweredBy) => void;

interface Entry {
  ask: PendingAsk;
  deliver: AskDelivery;
  timer: TimerHandle | undefined;
  /** Set once answered; kept briefly so a late `settle` from the agent can correct the record. */
  answer?: { decision: AskDecision; by: AskAnsweredBy };
}

/** What an agent asks: its tool, a one-line headline and the tool call's whole input as text. */
export interface AskRequest {
  tool: string;
  summary: string;
  /** The whole input (e.g. `renderToolInput(input)`); shown as given, control characters made visible. */
  input: string;
  deadlineAt?: number | null;
}

export const MAX_ASK_SUMMARY_CHARS = 500;
/** As the `offPeak.askTimeoutMinutes` setting's default. */
export const DEFAULT_ASK_TIMEOUT_MS = 10 * 60_000;
const ANSWERED_KEPT = 64;

export interface AskBrokerOptions {
  clock: Clock;
  /** How long an ask waits when the agent gives no deadline of its own. */
  timeoutMs: () => number;
  timers?: Timers;
}

export class AskBroker {
  private readonly open = new Map<string, Entry>();
  /** Recently answered asks, oldest first (for `settle` after an answer crossed). */
  private readonly answered = new Map<string, Entry>();
  // A listener's failure must not lose the answer.
  private readonly events = new Emitter<AskEvent>();
  readonly onEvent: Event<AskEvent> = this.events.event;
  private readonly timers: Timers;

  constructor(private readonly options: AskBrokerOptions) {
    this.timers = options.timers ?? createSystemTimers();
  }

  /** The open asks of one task (oldest first), or of every task. */
  pending(taskId?: string): PendingAsk[] {
    return [...this.open.values()].map((e) => e.ask).filter((a) => taskId === undefined || a.taskId === taskId);
  }

  /** An agent asks. `deadlineAt` is the agent's own (the reference agent denies then too). */
  ask(taskId: string, request: AskRequest, deliver: AskDelivery): PendingAsk {
    const now = this.options.clock.now();
    const input = visibleControls(request.input);
    const ask: PendingAsk = {
      id: crypto.randomUUID(),
      taskId,
      // Untrusted (the model wrote it): one plain line, bounded, for every surface.
      tool: plainNotificationText(request.tool, 100),
      summary: plainNotificationText(request.summary, MAX_ASK_SUMMARY_CHARS),
      input,
      inputDigest: askInputDigest(input),
      askedAt: now,
      deadlineAt: request.deadlineAt ?? now + this.options.timeoutMs(),
    };
    const entry: Entry = { ask, deliver, timer: undefined };
    entry.timer = this.timers.setTimeout(() => this.resolve(entry, 'deny', 'timeout', true), Math.max(0, ask.deadlineAt - now));
    this.open.set(ask.id, entry);
    this.emit({ type: 'asked', ask });
    return ask;
  }

  /**
   * The host's answer (card, notification, a terminal the host reads), for the input whose digest
   * it carries (`inputDigest`: of the text shown where it was given). The first answer wins; a
   * later one is ignored; one for another input is refused and the question stays open.
   */
  answer(taskId: string, askId: string, decision: AskDecision, inputDigest: string, by: 'host' | 'terminal' = 'host'): AnswerResult {
    const entry = this.open.get(askId);
    if (!entry || entry.ask.taskId !== taskId) {
      const done = this.answered.get(askId);
      return done && done.ask.taskId === taskId ? 'already-answered' : 'unknown';
    }
    if (!digestMatches(entry.ask.input, inputDigest)) return 'input-mismatch';
    this.resolve(entry, decision, by, true);
    return 'accepted';
  }

  /**
   * The agent reports how the ask ended on its side (e.g. answered in its terminal). It is final:
   * an open ask closes with it; an answered one whose record differs is corrected.
   */
  settle(askId: string, decision: AskDecision, by: AskAnsweredBy): void {
    const entry = this.open.get(askId);
    if (entry) return this.resolve(entry, decision, by, false);
    const done = this.answered.get(askId);
    if (done?.answer && done.answer.decision !== decision) {
      done.answer = { decision, by };
      this.emit({ type: 'answered', ask: done.ask, decision, by, at: this.options.clock.now() });
    }
  }

  /** The task's segment ended: its open asks are denied (the agent is gone or going). */
  endTask(taskId: string): void {
    for (const entry of [...this.open.values()]) if (entry.ask.taskId === taskId) this.resolve(entry, 'deny', 'ended', true);
  }

  private resolve(entry: Entry, decision: AskDecision, by: AskAnsweredBy, deliver: boolean): void {
    if (!this.open.delete(entry.ask.id)) return;
    this.timers.clearTimeout(entry.timer);
    entry.answer = { decision, by };
    this.answered.set(entry.ask.id, entry);
    for (const id of this.answered.keys()) {
      if (this.answered.size <= ANSWERED_KEPT) break;
      this.answered.delete(id);
    }
    if (deliver) {
      try {
        entry.deliver(decision, by);
      } catch {
        // the agent is gone; nothing left to tell
      }
    }
    this.emit({ type: 'answered', ask: entry.ask, decision, by, at: this.options.clock.now() });
  }

  private emit(event: AskEvent): void {
    this.events.fire(event);
  }
}
