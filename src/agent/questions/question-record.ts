/**
 * The decision record of one window's asks (docs/flows.md#questions-park-the-task): every question
 * its agents ask is written to `off_peak_task_questions` with the answer the agent got, who or
 * what gave it and when, so the card, History and notification can say what was refused, and a
 * task parked on a question can be answered from any window after a reload. It also answers the
 * broker's "did the user already answer this very tool call while the task was parked?" and
 * words the continuation prompt that tells the resumed session what the user decided.
 */
import { NEWLINE_MARK, TAB_MARK } from '../../core/ask-input';
import type { ParkQuestion } from '../../core/types';
import type { StoreTx, TaskStore } from '../../store';
import type { AskBroker, AskDecision, PendingAsk } from './asks';

/**
 * The tool name of the host's own question before a check the agent changed (agent/runtime/check-gate.ts):
 * kept in the decision record like any question, never told to the resumed agent (it is not its call).
 */
export const CHECK_ASK_TOOL = 'Run check';

/** Begins and ends the whole input of a stated call in the continuation prompt (one field a line, `name: value`). */
export const CALL_INPUT_START = '<<<tool input';
export const CALL_INPUT_END = 'tool input>>>';

/**
 * The call's whole input as the question showed it, never shortened: a session that lost the
 * parked call from its conversation (Claude Code drops it) can make it again word for word.
 */
function callBlock(input: string): string {
  return `${CALL_INPUT_START}\n${input}\n${CALL_INPUT_END}`;
}

/** What the decision record keeps of a question the task parks on or holds across its window's close. */
export function parkQuestionOf(ask: PendingAsk): ParkQuestion {
  return {
    askId: ask.id,
    tool: ask.tool,
    summary: ask.summary,
    input: ask.input,
    callDigest: ask.callDigest ?? null,
    askedAt: ask.askedAt,
  };
}

export class QuestionRecorder {
  /** Writes in the order of the events (an answer never lands before its question). */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: TaskStore,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /** Records the broker's questions and answers from now on. */
  attach(broker: AskBroker): void {
    broker.onEvent((event) => {
      if (event.type === 'asked') {
        const { ask } = event;
        this.write((tx) =>
          tx.questions.recordAsked({
            askId: ask.id,
            taskId: ask.taskId,
            tool: ask.tool,
            summary: ask.summary,
            input: ask.input,
            callDigest: ask.callDigest ?? null,
            askedAt: ask.askedAt,
          }),
        );
      } else if (event.type === 'answered' && !event.parking) {
        // An answer given while the task parks is the park's to record (TaskLifecycle.park).
        const { ask, decision, by, at, storedFrom } = event;
        this.write((tx) => {
          tx.questions.recordAnswer(ask.id, decision, by, at);
          if (storedFrom) tx.questions.markUsed(storedFrom);
        });
      }
    });
  }

  /** Resolves once every write so far is done (tests, shutdown). */
  idle(): Promise<unknown> {
    return this.chain;
  }

  /** The user's answer to a parked question of the task with this very tool call, not used yet. */
  storedDecision(taskId: string, callDigest: string): { askId: string; decision: AskDecision } | undefined {
    try {
      const q = this.store.read((tx) => tx.questions.storedDecision(taskId, callDigest));
      return q?.decision ? { askId: q.askId, decision: q.decision } : undefined;
    } catch (e) {
      this.log(`questions: the stored decisions could not be read (${(e as Error).message}); the agent asks again`);
      return undefined;
    }
  }

  /**
   * What the resumed session is told about the questions the user answered while the task was
   * parked or its window was closed, and about those still unanswered from a closed window (make
   * the call again: it is asked anew); empty when there are none. With the ids to mark once the
   * segment started: stated, and asked again.
   */
  decisionsToState(taskId: string): { text: string; askIds: string[]; askedAgain: string[] } {
    const agents = (q: { tool: string }) => q.tool !== CHECK_ASK_TOOL;
    const [answered, unanswered] = this.store.read((tx) => [
      tx.questions.unstated(taskId).filter(agents),
      tx.questions.interruptedOpen(taskId).filter(agents),
    ]);
    if (answered.length === 0 && unanswered.length === 0) return { text: '', askIds: [], askedAgain: [] };
    const lines = answered.map((q) =>
      q.decision === 'allow'
        ? `- ALLOWED: ${q.tool}: ${q.summary}. Make exactly this tool call again now, with this same input; it runs without asking again:\n${callBlock(q.input)}`
        : `- DENIED: ${q.tool}: ${q.summary}. Do not make this call; find another way or stop. Its input was:\n${callBlock(q.input)}`,
    );
    const open = unanswered.map(
      (q) =>
        `- NOT ANSWERED: ${q.tool}: ${q.summary}. The call did not run. If it is still needed, make exactly this tool call again now; the user is asked again:\n${callBlock(q.input)}`,
    );
    const text = [
      'The previous working segment of this task stopped while your permission question waited for the user (to hold no capacity, or because the VS Code window closed).',
      ...(lines.length > 0 ? ['The user has answered:', ...lines] : []),
      ...(open.length > 0 ? ['Not answered before the window closed:', ...open] : []),
      `(Between ${CALL_INPUT_START} and ${CALL_INPUT_END}: one field a line as "name: value"; in a value ${NEWLINE_MARK} stands for a newline, ${TAB_MARK} for a tab and \\u{…} for that character.)`,
      'Continue the task from where you left off: check what is already done, do not repeat finished steps, and finish the remaining work.',
    ].join('\n');
    return { text, askIds: answered.map((q) => q.askId), askedAgain: unanswered.map((q) => q.askId) };
  }

  /** The continuation prompt has told the session: not stated again; the unanswered ones are asked anew. */
  markStated(askIds: readonly string[], askedAgain: readonly string[] = []): Promise<unknown> {
    if (askIds.length === 0 && askedAgain.length === 0) return Promise.resolve();
    return this.write((tx) => {
      tx.questions.markStated(askIds);
      tx.questions.markAskedAgain(askedAgain);
    });
  }

  private write(change: (tx: StoreTx) => unknown): Promise<unknown> {
    this.chain = this.chain
      .then(() => this.store.mutate(change))
      .catch((e: unknown) => this.log(`questions: could not record (${e instanceof Error ? e.message : String(e)})`));
    return this.chain;
  }
}
