/**
 * The lifecycle rules: how a segment's start and end (expired, usage limit, interrupted, parked),
 * a finish, a cancel, a delete, a recovery or the answer to a parked question change a task and
 * its tickets. Like the ticket rules beside them (`ticket-rules.ts`), each is a pure function over
 * one store transaction that returns what the caller must do next; `TaskLifecycle` is their caller.
 */
import { digestMatches } from '../core/ask-input';
import { isTerminalStatus, type HeldQuestion, type OffPeakTask, type ParkQuestion, type ParkResult } from '../core/types';
import type { QuestionAnsweredBy, StoreTx, TerminalDetails } from '../store';
import { detachDeadTicket, queueSettlesForTask, ticketKnownDead } from './ticket-rules';

/**
 * The segment's ticket expired (3102 or an expired status): the ticket is retired and settled,
 * the task goes back to the queue without a ticket (same session, started_at kept). True when
 * the task is queued now and needs a retake.
 */
export function expireSegment(tx: StoreTx, taskId: string, ticketId: string, reason: 'expired' | 'usage_limit' = 'expired'): boolean {
  tx.tickets.endSegment(ticketId, reason);
  tx.tickets.updateServerState(ticketId, { serverState: 'expired', nextPollAt: null });
  tx.tickets.requestSettle(ticketId, 'segment_end');
  const task = tx.tasks.get(taskId);
  if (!task || isTerminalStatus(task.status)) return false;
  tx.tasks.requeue(taskId);
  tx.tasks.clearTicket(taskId, ticketId);
  return tx.tasks.get(taskId)!.status === 'queued';
}

/**
 * The account's usage limit outlasts a short hold (docs/flows.md#usage-limits): the segment ends
 * `usage_limit` with the reset on its row, its ticket into the outbox, the task requeued (same
 * session) to retake; the gateway promotes its new ticket only after the reset.
 */
export function parkForUsageLimit(tx: StoreTx, taskId: string, ticketId: string, resetAt: number): boolean {
  tx.tickets.markUsageLimit(ticketId, resetAt);
  return expireSegment(tx, taskId, ticketId, 'usage_limit');
}

/** running (or an undispatchable queued) -> completed/failed, its tickets into the outbox. */
export function finishTask(
  tx: StoreTx,
  taskId: string,
  outcome: 'completed' | 'failed',
  details: TerminalDetails,
): { applied: boolean; settles: string[] } {
  const applied = outcome === 'completed' ? tx.tasks.complete(taskId, details) : tx.tasks.fail(taskId, details);
  return { applied, settles: applied ? queueSettlesForTask(tx, taskId, outcome) : [] };
}

export type CancelResult =
  | { kind: 'not_found' }
  | { kind: 'refused' }
  | { kind: 'terminal'; task: OffPeakTask }
  | { kind: 'cancelled'; task: OffPeakTask; settles: string[] };

/** Any live task -> cancelled, its tickets into the outbox; a terminal task is left as it is. */
export function cancelTask(tx: StoreTx, taskId: string): CancelResult {
  const task = tx.tasks.get(taskId);
  if (!task) return { kind: 'not_found' };
  if (isTerminalStatus(task.status)) return { kind: 'terminal', task };
  if (!tx.tasks.cancel(taskId)) return { kind: 'refused' };
  return { kind: 'cancelled', task: tx.tasks.get(taskId)!, settles: queueSettlesForTask(tx, taskId, 'cancelled') };
}

/**
 * Deletes the task row and its tickets that need nothing more; the unsettled ones stay in the
 * ledger (outbox) until acknowledged (`acknowledgeSettle` deletes them then).
 */
export function deleteTask(tx: StoreTx, taskId: string): { settles: string[]; deleted: boolean } {
  const settles = queueSettlesForTask(tx, taskId, 'deleted');
  const deleted = tx.tasks.delete(taskId);
  if (deleted) tx.tickets.deleteFinished(taskId);
  return { settles, deleted };
}

/** The runner launched the agent: queued & claimed -> running, the ticket's segment starts. False if the task changed meanwhile. */
export function startSegment(tx: StoreTx, taskId: string, ticketId: string, sessionId: string): boolean {
  if (!tx.tasks.markRunning(taskId, { sessionId })) return false;
  tx.tickets.startSegment(ticketId);
  return true;
}

/**
 * Recovery (docs/flows.md#recovery): a task a window that is gone left running goes back to the
 * queue, its segment ended as interrupted. With its ticket still live it is dispatched again at
 * once on it (`requeued`); with a ticket the ledger knows is over, or none, it must retake now
 * (`retake`, with the retired ticket to settle). False when the task is no longer running.
 */
export function recoverInterruptedTask(tx: StoreTx, taskId: string): { kind: 'requeued' } | { kind: 'retake'; settle: string[] } | false {
  const ticketId = tx.tasks.get(taskId)?.serverTicketId ?? null;
  if (!interruptSegment(tx, taskId, ticketId)) return false;
  if (ticketId && !ticketKnownDead(tx, ticketId)) return { kind: 'requeued' };
  if (ticketId) detachDeadTicket(tx, taskId, ticketId);
  return { kind: 'retake', settle: ticketId && tx.tickets.get(ticketId)?.settleState === 'pending' ? [ticketId] : [] };
}

/**
 * The host shut down under a running segment (or died: recovery): back to queued with the
 * same session and the same ticket, the segment ended as interrupted. False when the task is no
 * longer running (cancelled or ended meanwhile: its segment was closed then).
 */
export function interruptSegment(tx: StoreTx, taskId: string, ticketId?: string | null, held: readonly HeldQuestion[] = []): boolean {
  const ticket = ticketId ?? tx.tasks.get(taskId)?.serverTicketId;
  if (!tx.tasks.requeue(taskId)) return false;
  if (ticket) tx.tickets.endSegment(ticket, 'interrupted');
  holdOpenQuestions(tx, taskId, held);
  return true;
}

/**
 * The questions open when the task's window closed (docs/flows.md#a-question-across-a-reload):
 * each is kept `interrupted`, answerable from any window, with the answer that reached the
 * closing window while its agent stopped, or one another window left for it in the shared table
 * (for the input it shows); a crashed window's questions (in the record without an answer) too.
 */
function holdOpenQuestions(tx: StoreTx, taskId: string, held: readonly HeldQuestion[]): void {
  for (const { question: q } of held) {
    recordAsked(tx, taskId, q);
  }
  const left = new Map(tx.asks.takeAnswersLeft(taskId).map((a) => [a.id, a]));
  for (const q of tx.questions.forTask(taskId)) {
    if (q.decision !== null || q.parkedAt !== null || q.answeredBy !== null) continue;
    tx.questions.markInterrupted(q.askId);
    const shared = left.get(q.askId);
    const answer =
      held.find((h) => h.question.askId === q.askId)?.answer ??
      (shared?.answer && digestMatches(q.input, shared.answerDigest ?? '')
        ? { decision: shared.answer, by: 'other-window' as const }
        : undefined);
    if (answer) tx.questions.answerParked(q.askId, answer.decision, answer.by);
  }
}

/**
 * Nobody answered the question in time (docs/flows.md#questions-park-the-task): the segment ends
 * `parked`, its ticket goes to the settle outbox (the capacity goes to others), and the task waits
 * in needs_input without a ticket. An answer that came while the agent stopped is recorded and
 * the task is requeued at once instead (the caller retakes).
 */
export function parkSegment(
  tx: StoreTx,
  taskId: string,
  ticketId: string,
  q: ParkQuestion,
  answer?: { decision: 'allow' | 'deny'; by: QuestionAnsweredBy },
): ParkResult {
  tx.tickets.endSegment(ticketId, 'parked');
  tx.tickets.requestSettle(ticketId, 'segment_end');
  recordAsked(tx, taskId, q);
  tx.questions.markParked(q.askId);
  if (answer) {
    tx.questions.answerParked(q.askId, answer.decision, answer.by);
    if (!tx.tasks.requeue(taskId)) return 'gone';
    tx.tasks.clearTicket(taskId, ticketId);
    return 'requeued';
  }
  if (!tx.tasks.park(taskId)) return 'gone';
  return 'parked';
}

/**
 * The first answer to a parked question, from any window: recorded with who answered, and the
 * task goes back to the queue without a ticket (the caller retakes; the same session resumes).
 */
export function answerParkedQuestion(
  tx: StoreTx,
  taskId: string,
  askId: string,
  decision: 'allow' | 'deny',
  by: QuestionAnsweredBy,
): 'accepted' | 'already-answered' | 'unknown' {
  const q = tx.questions.get(askId);
  if (!q || q.taskId !== taskId || q.parkedAt === null) return 'unknown';
  if (q.decision !== null) return 'already-answered';
  const status = tx.tasks.get(taskId)?.status;
  if (q.answeredBy === 'interrupted') {
    // Kept across its window's close: the task is queued already; its resumed session is told the answer.
    if (status !== 'queued' && status !== 'paused') return 'unknown';
    tx.questions.answerParked(askId, decision, by);
    return 'accepted';
  }
  if (status !== 'needs_input') return 'unknown';
  tx.questions.answerParked(askId, decision, by);
  tx.tasks.answerParked(taskId);
  return 'accepted';
}

/** A question into the decision record, as it was asked. */
function recordAsked(tx: StoreTx, taskId: string, q: ParkQuestion): void {
  tx.questions.recordAsked({
    askId: q.askId,
    taskId,
    tool: q.tool,
    summary: q.summary,
    input: q.input,
    callDigest: q.callDigest,
    askedAt: q.askedAt,
  });
}
