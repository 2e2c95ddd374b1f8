/**
 * A segment's permission questions (docs/flows.md#questions-park-the-task): the reference agent's
 * asks (its events, answered on its fd 4), and the question relay of an agent that does not read
 * its terminal (Claude Code): each relayed question is shown in the task's terminal, one at a
 * time, and a line typed there answers the oldest.
 */
import { systemClock, type Clock } from '../../core/clock';
import { renderToolInput } from '../../core/ask-input';
import { TypedLine, isYes } from '../../core/typed-line';
import type { PermissionRelayAnswer, PermissionRelayRequest } from '../../protocol/permission-relay';
import type { AskAnsweredBy, AskDecision, AskDelivery, AskRequest, PendingAsk } from '../questions/asks';
import { ANSWERED_BY_TEXT, DENY_MESSAGES, ENDED_ANSWER, relayQuestionText } from '../questions/relay-ask-text';
import type { AgentOutputReader } from './agent-adapter';
import { summarizeInput } from './claude-code-adapter';

/** The runtime's pending asks as one segment sees them (AskBroker bound to the task). */
export interface SegmentAsks {
  ask(request: AskRequest, deliver: AskDelivery): PendingAsk;
  /** An answer typed in the task's terminal, read by the host (an agent that does not read its terminal), for the input it showed. */
  answer(askId: string, decision: AskDecision, by: 'terminal', inputDigest: string): unknown;
  settle(askId: string, decision: AskDecision, by: AskAnsweredBy): void;
  /** The segment ended: what is still open is denied. */
  end(): void;
}

/** What the questions need of their segment: its terminal, and whether its agent has exited. */
export interface QuestionsHost {
  show(text: string): void;
  exited(): boolean;
  clock?: Clock;
}

export class SegmentQuestions {
  /** The agent's ask ids -> the broker's, while open. */
  private readonly askIds = new Map<string, string>();
  /** Questions relayed from an agent that does not read its terminal (Claude Code), oldest first. */
  private readonly relayAsks: PendingAsk[] = [];
  /** What is typed in the terminal for them: the host reads it and answers the oldest. */
  private readonly typed = new TypedLine({
    active: () => this.relayAsks.length > 0,
    echo: (text) => this.host.show(text),
    line: (text) => {
      const ask = this.relayAsks[0];
      // The terminal showed this question's whole input: the answer is for that input.
      if (ask) this.asks?.answer(ask.id, isYes(text) ? 'allow' : 'deny', 'terminal', ask.inputDigest);
    },
  });

  constructor(
    private readonly asks: SegmentAsks | undefined,
    private readonly host: QuestionsHost,
  ) {}

  /** Whether a relayed question waits for a line typed in the terminal. */
  get relaying(): boolean {
    return this.relayAsks.length > 0;
  }

  /** Keys typed in the terminal while a relayed question is open. */
  feed(data: string): void {
    this.typed.feed(data);
  }

  /** A question from the permission relay (Claude Code): pending at the host, shown and answerable here. */
  relayPermissionAsk(asks: SegmentAsks, request: PermissionRelayRequest, signal: AbortSignal): Promise<PermissionRelayAnswer> {
    if (this.host.exited()) return Promise.resolve(ENDED_ANSWER);
    return new Promise((resolve) => {
      // Allow runs the tool with this whole input (`updatedInput`), so the whole input is what every surface shows.
      const ask = asks.ask(
        { tool: request.tool_name, summary: summarizeInput(request.input), input: renderToolInput(request.input), call: request.input },
        (decision, by) => {
          this.closeRelayAsk(ask, `\n    → ${decision === 'allow' ? 'allowed' : 'denied'}${ANSWERED_BY_TEXT[by]}\n`);
          resolve(decision === 'allow' ? { decision } : { decision, message: DENY_MESSAGES[by] });
        },
      );
      // One question on screen at a time: the last one the terminal shows is the one a typed answer goes to.
      if (this.relayAsks.push(ask) === 1) this.showRelayQuestion(ask);
      signal.addEventListener(
        'abort',
        () => {
          this.closeRelayAsk(ask, '');
          asks.settle(ask.id, 'deny', 'ended');
          resolve(ENDED_ANSWER);
        },
        { once: true },
      );
    });
  }

  private showRelayQuestion(ask: PendingAsk): void {
    this.typed.reset();
    const seconds = Math.max(0, Math.round((ask.deadlineAt - (this.host.clock ?? systemClock).now()) / 1000));
    this.host.show(relayQuestionText(ask, seconds));
  }

  /** A relayed question is answered or ended: its line is written, and the next waiting one shows. */
  private closeRelayAsk(ask: PendingAsk, line: string): void {
    const i = this.relayAsks.indexOf(ask);
    if (i < 0) return;
    this.relayAsks.splice(i, 1);
    if (i === 0 && line) this.host.show(line);
    if (i === 0 && this.relayAsks.length > 0 && !this.host.exited()) this.showRelayQuestion(this.relayAsks[0]);
  }

  /**
   * Wires the reference agent's asks (its events) to the segment's asks, and the host's answers to
   * its fd 4 (`answers`).
   */
  wireAgent(reader: AgentOutputReader, answers: NodeJS.WritableStream | null | undefined): void {
    const asks = this.asks;
    if (!asks) return;
    answers?.on('error', () => undefined); // the agent may exit with an answer in flight
    reader.onAsk = (agentAsk) => {
      const ask = asks.ask(agentAsk, (decision, by) => {
        // The agent keeps its own deadline (the same one) and is gone when the segment ended.
        if (by === 'timeout' || by === 'ended') return;
        // The agent takes the first answer it gets; the terminal may have beaten this one.
        // The digest names the input the answer was given for (the broker checked it); the agent refuses another.
        if (answers && !this.host.exited())
          answers.write(JSON.stringify({ ask_id: agentAsk.agentAskId, decision, input_sha256: ask.inputDigest }) + '\n');
      });
      this.askIds.set(agentAsk.agentAskId, ask.id);
    };
    reader.onAskSettled = ({ agentAskId, decision, by }) => {
      const askId = this.askIds.get(agentAskId);
      this.askIds.delete(agentAskId);
      if (askId) asks.settle(askId, decision, by);
    };
  }
}
