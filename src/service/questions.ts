// Permission questions, as the user answers them in any window (docs/flows.md#questions-in-every-window):
// the open questions of every window's agents (through the relay the engine wires: only the
// asking window can reach its agent) and the questions parked tasks wait on, which are answered
// here in the DB, from any window, and the task queued to resume (docs/flows.md#questions-park-the-task).
// Parking itself is TaskLifecycle.park, written by the asking window's runtime.
import { askInputDigest, digestMatches } from '../core/ask-input';
import type { AnswerResult, AskDecision, PendingAsk, UnansweredQuestion } from '../core/ask-types';
import type { DisposableLike } from '../core/disposable';
import type { TaskStore } from '../store';
import type { TaskLifecycle } from './task-lifecycle';

/** The open questions of the agents of every window (the engine's shared asks). */
export interface AskRelay {
  pending(taskId?: string): PendingAsk[];
  /** `unknown`: no agent of any window holds this question open. */
  answer(taskId: string, askId: string, decision: AskDecision, inputDigest: string): Promise<AnswerResult>;
  onChange(listener: () => void): DisposableLike;
}

export interface TaskQuestionsOptions {
  store: TaskStore;
  lifecycle: TaskLifecycle;
  relay: AskRelay;
  /** The machine setting `offPeak.unansweredQuestion`, read at each listing. */
  unanswered: () => UnansweredQuestion;
}

export class TaskQuestions {
  constructor(private readonly options: TaskQuestionsOptions) {}

  /**
   * The open permission questions of every window's agents, and the questions parked tasks wait
   * on (docs/flows.md#questions-park-the-task), oldest first.
   */
  pendingAsks(taskId?: string): PendingAsk[] {
    // Another window's question parks or denies by the same machine setting as this window's.
    const open = this.options.relay.pending(taskId).map((a) => (a.onDeadline ? a : { ...a, onDeadline: this.options.unanswered() }));
    return [...open, ...this.parkedAsks(taskId)].sort((a, b) => a.askedAt - b.askedAt);
  }

  /**
   * Answers a permission question (the first answer wins: host, terminal or deadline); one asked
   * in another window gets the answer through the shared DB; one a task parked on is answered in
   * the DB, from any window, and the task is queued to resume. `inputDigest` names the input shown
   * where the answer was given (docs/flows.md#what-a-question-shows): another input's is refused.
   */
  async answerAsk(taskId: string, askId: string, decision: AskDecision, inputDigest: string): Promise<AnswerResult> {
    const result = await this.options.relay.answer(taskId, askId, decision, inputDigest);
    if (result !== 'unknown') return result;
    const parked = this.parkedAsks(taskId).find((a) => a.id === askId);
    if (parked && !digestMatches(parked.input, inputDigest)) return 'input-mismatch';
    return this.options.lifecycle.answerParked(taskId, askId, decision, 'host');
  }

  /** Fires when a permission question is asked or answered in any window; fires until the returned subscription is disposed. */
  onAsksChange(listener: () => void): DisposableLike {
    return this.options.relay.onChange(listener);
  }

  private parkedAsks(taskId?: string): PendingAsk[] {
    try {
      return this.options.store.read((tx) => {
        // Parked questions of parked tasks; those kept across a window's close while their task waits to resume.
        const waiting = new Map(
          tx.tasks.list({ status: ['needs_input', 'queued', 'paused'], ...(taskId ? { ids: [taskId] } : {}) }).map((t) => [t.id, t.status]),
        );
        const listed = tx.questions.parkedOpen([...waiting.keys()]).filter((q) => {
          const status = waiting.get(q.taskId);
          return q.answeredBy === 'interrupted' ? status === 'queued' || status === 'paused' : status === 'needs_input';
        });
        return listed.map((q) => ({
          id: q.askId,
          taskId: q.taskId,
          tool: q.tool,
          summary: q.summary,
          input: q.input,
          inputDigest: askInputDigest(q.input),
          askedAt: q.askedAt,
          deadlineAt: q.parkedAt ?? q.askedAt,
          onDeadline: 'park' as const,
          callDigest: q.callDigest,
          parkedAt: q.parkedAt ?? q.askedAt,
          ...(q.answeredBy === 'interrupted' ? { interrupted: true } : {}),
        }));
      });
    } catch {
      return [];
    }
  }
}
