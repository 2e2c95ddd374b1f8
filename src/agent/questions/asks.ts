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
 *
 * With `offPeak.unansweredQuestion` = park (the default), the deadline does not deny: the ask
 * *parks* (docs/flows.md#questions-park-the-task). It stays listed until the runtime has ended the
 * segment; an answer given meanwhile is kept for the park (`takeParkingAnswer`), never delivered to the
 * agent that is stopping. An ask whose tool call (tool + input digest) the user already answered
 * while the task was parked is answered from that stored decision, without waiting.
 */
import crypto from 'node:crypto';
import stableStringify from 'fast-json-stable-stringify';
import type { Clock } from '../../core/clock';
import { Emitter, type Event } from '../../core/event';
import { askInputDigest, digestMatches, visibleControls } from '../../core/ask-input';
import { plainNotificationText } from '../../core/untrusted-text';
import { createSystemTimers, type TimerHandle, type Timers } from '../../core/timers';
import type { AnswerResult, AskAnsweredBy, AskDecision, PendingAsk, UnansweredQuestion } from '../../core/ask-types';

export type { AnswerResult, AskAnsweredBy, AskDecision, PendingAsk, UnansweredQuestion } from '../../core/ask-types';

export type AskEvent =
  /** `stored`: the user already answered this very call while the task was parked; it is answered at once (nothing to notify). */
  | { type: 'asked'; ask: PendingAsk; stored?: boolean }
  /**
   * `parking`: answered while the runtime stops the agent to park on it (the park records it);
   * `storedFrom`: the parked question whose stored decision answered it.
   */
  | { type: 'answered'; ask: PendingAsk; decision: AskDecision; by: AskAnsweredBy; at: number; parking?: boolean; storedFrom?: string }
  /** Nobody answered in time: the runtime ends the segment and parks the task on this ask. */
  | { type: 'parking'; ask: PendingAsk }
  /** The segment ended: the parking ask leaves the runtime (the task's record keeps it). */
  | { type: 'parked'; ask: PendingAsk };

/** Carries a decision to the agent that asked. */
export type AskDelivery = (decision: AskDecision, by: AskAnsweredBy) => void;

interface Entry {
  ask: PendingAsk;
  deliver: AskDelivery;
  timer: TimerHandle | undefined;
  /** Set once answered; kept briefly so a late `settle` from the agent can correct the record. */
  answer?: { decision: AskDecision; by: AskAnsweredBy };
  /**
   * The segment is ending with this ask kept for the decision record: its deadline passed in park
   * mode, or the window closes (`holdTask`). No answer reaches the agent any more.
   */
  parking?: boolean;
  /** The parked question whose stored decision answers this one. */
  storedFrom?: string;
}

/**
 * Fields of a tool's input that describe the call without changing what it does (Claude Code's
 * Bash `description`): a model that rewords them on the repeat still makes the allowed call.
 */
const INCIDENTAL_CALL_FIELDS: ReadonlySet<string> = new Set(['description']);

/**
 * The digest of a tool call: its tool and the input fields that decide what runs (a command; a
 * path and its content), keys in a stable order. A stored decision answers a call with the same digest.
 */
export function toolCallDigest(tool: string, input: unknown): string {
  const decisive =
    input && typeof input === 'object' && !Array.isArray(input)
      ? Object.fromEntries(Object.entries(input).filter(([key]) => !INCIDENTAL_CALL_FIELDS.has(key)))
      : input;
  return crypto
    .createHash('sha256')
    .update(`${tool}\n${stableStringify(decisive ?? null)}`)
    .digest('hex');
}

/** What an agent asks: its tool, a one-line headline and the tool call's whole input as text. */
export interface AskRequest {
  tool: string;
  summary: string;
  /** The whole input (e.g. `renderToolInput(input)`); shown as given, control characters made visible. */
  input: string;
  /** The tool's input as the agent sent it, when the host has it (Claude Code's relay): the call digest is taken over it in a stable key order. */
  call?: unknown;
  deadlineAt?: number | null;
}

export const MAX_ASK_SUMMARY_CHARS = 500;
/** As the `offPeak.askTimeoutMinutes` setting's default. */
export const DEFAULT_ASK_TIMEOUT_MS = 10 * 60_000;
/** As the `offPeak.askParkMinutes` setting's default. */
export const DEFAULT_ASK_PARK_MS = 10 * 60_000;
const ANSWERED_KEPT = 64;

export interface AskBrokerOptions {
  clock: Clock;
  /** How long an ask waits when the agent gives no deadline of its own. */
  timeoutMs: () => number;
  /** What an unanswered ask does at its deadline (default deny, as before parking existed). */
  unanswered?: () => UnansweredQuestion;
  /** In park mode, how long an ask waits before it parks. */
  parkAfterMs?: () => number;
  /** The user's answer to a parked question of this task with the same tool call, not used yet. */
  storedDecision?: (taskId: string, inputDigest: string) => { askId: string; decision: AskDecision } | undefined;
  timers?: Timers;
}

export class AskBroker {
  private readonly open = new Map<string, Entry>();
  /** Recently answered asks, oldest first (for `settle` after an answer crossed). */
  private readonly answered = new Map<string, Entry>();
  /** Answers given while an ask was parking, by ask id, for the park to record (taken once). */
  private readonly parkingAnswers = new Map<string, { decision: AskDecision; by: AskAnsweredBy }>();
  /** Stored decisions already used here (the DB marks them too, a moment later). */
  private readonly usedStored = new Set<string>();
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
    const onDeadline = this.options.unanswered?.() ?? 'deny';
    // The agent keeps its own deadline; in park mode the host's comes first (the agent's is later).
    const deadlineAt =
      onDeadline === 'park'
        ? now + (this.options.parkAfterMs?.() ?? DEFAULT_ASK_PARK_MS)
        : (request.deadlineAt ?? now + this.options.timeoutMs());
    const callDigest = toolCallDigest(request.tool, request.call ?? request.input);
    const ask: PendingAsk = {
      id: crypto.randomUUID(),
      taskId,
      // Untrusted (the model wrote it): one plain line, bounded, for every surface.
      tool: plainNotificationText(request.tool, 100),
      summary: plainNotificationText(request.summary, MAX_ASK_SUMMARY_CHARS),
      input,
      inputDigest: askInputDigest(input),
      askedAt: now,
      deadlineAt,
      onDeadline,
      callDigest,
    };
    const entry: Entry = { ask, deliver, timer: undefined };
    const stored = this.options.storedDecision?.(taskId, callDigest);
    if (stored && !this.usedStored.has(stored.askId)) {
      // The user answered this very call while the task was parked: answered at once, not asked again.
      this.usedStored.add(stored.askId);
      entry.storedFrom = stored.askId;
      entry.timer = this.timers.setTimeout(() => this.resolve(entry, stored.decision, 'stored', true), 0);
    } else {
      entry.timer = this.timers.setTimeout(() => this.onDeadline(entry), Math.max(0, deadlineAt - now));
    }
    this.open.set(ask.id, entry);
    this.emit(entry.storedFrom ? { type: 'asked', ask, stored: true } : { type: 'asked', ask });
    return ask;
  }

  /**
   * An answer given while the task parks on this ask (the agent is stopping): what the park records
   * instead of parking. Taken once.
   */
  takeParkingAnswer(askId: string): { decision: AskDecision; by: AskAnsweredBy } | undefined {
    const answer = this.parkingAnswers.get(askId);
    this.parkingAnswers.delete(askId);
    return answer;
  }

  private onDeadline(entry: Entry): void {
    if (entry.ask.onDeadline !== 'park') return this.resolve(entry, 'deny', 'timeout', true);
    if (!this.open.has(entry.ask.id) || entry.parking) return;
    // Nothing reaches the agent: the runtime stops it and parks the task on this question.
    entry.parking = true;
    this.emit({ type: 'parking', ask: entry.ask });
  }

  /**
   * The host's answer (card, notification, a terminal the host reads), for the input whose digest
   * it carries (`inputDigest`: of the text shown where it was given). The first answer wins; a
   * later one is ignored; one for another input is refused and the question stays open.
   */
  answer(
    taskId: string,
    askId: string,
    decision: AskDecision,
    inputDigest: string,
    by: 'host' | 'terminal' | 'other-window' = 'host',
  ): AnswerResult {
    const entry = this.open.get(askId);
    if (!entry || entry.ask.taskId !== taskId) {
      const done = this.answered.get(askId);
      return done && done.ask.taskId === taskId ? 'already-answered' : 'unknown';
    }
    if (!digestMatches(entry.ask.input, inputDigest)) return 'input-mismatch';
    if (entry.parking) {
      // The agent is being stopped: the park takes this answer and the task resumes with it.
      if (this.parkingAnswers.has(askId)) return 'already-answered';
      this.parkingAnswers.set(askId, { decision, by });
      this.emit({ type: 'answered', ask: entry.ask, decision, by, at: this.options.clock.now(), parking: true });
      return 'accepted';
    }
    this.resolve(entry, decision, by, true);
    return 'accepted';
  }

  /**
   * The agent reports how the ask ended on its side (e.g. answered in its terminal). It is final:
   * an open ask closes with it; an answered one whose record differs is corrected.
   */
  settle(askId: string, decision: AskDecision, by: AskAnsweredBy): void {
    const entry = this.open.get(askId);
    // A parking ask ends with the park, not with what the stopping agent reports.
    if (entry?.parking) return;
    if (entry) return this.resolve(entry, decision, by, false);
    const done = this.answered.get(askId);
    if (done?.answer && done.answer.decision !== decision) {
      done.answer = { decision, by };
      this.emit({ type: 'answered', ask: done.ask, decision, by, at: this.options.clock.now() });
    }
  }

  /**
   * The window closes under the task's segment (a reload, an engine restart): its open asks are
   * not answered "ended" but kept for the decision record, which the resumed session is told
   * about (docs/flows.md#a-question-across-a-reload); an answer given while the agent stops is
   * kept for it (`takeParkingAnswer`). Returns the asks held.
   */
  holdTask(taskId: string): PendingAsk[] {
    const held: PendingAsk[] = [];
    for (const entry of this.open.values()) {
      if (entry.ask.taskId !== taskId || entry.parking) continue;
      entry.parking = true;
      this.timers.clearTimeout(entry.timer);
      held.push(entry.ask);
    }
    return held;
  }

  /** The task's segment ended: its open asks are denied (the agent is gone or going); a parking one just leaves. */
  endTask(taskId: string): void {
    for (const entry of [...this.open.values()]) {
      if (entry.ask.taskId !== taskId) continue;
      if (!entry.parking) {
        this.resolve(entry, 'deny', 'ended', true);
        continue;
      }
      this.open.delete(entry.ask.id);
      this.timers.clearTimeout(entry.timer);
      this.emit({ type: 'parked', ask: entry.ask });
    }
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
    this.emit({
      type: 'answered',
      ask: entry.ask,
      decision,
      by,
      at: this.options.clock.now(),
      ...(entry.storedFrom ? { storedFrom: entry.storedFrom } : {}),
    });
  }

  private emit(event: AskEvent): void {
    this.events.fire(event);
  }
}
