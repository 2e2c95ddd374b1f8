/**
 * The one writer of a task's lifecycle: started, admitted, segment ended (cancelled, interrupted,
 * expired), completed, failed, cancelled, deleted. The runtime (agent outcomes) and the user
 * actions both go through it, so each change is one guarded transaction with the same ticket
 * bookkeeping whoever asks. It needs only the store: what must follow (tickets to settle, a task
 * to retake) is announced to `onDidQueueWork` listeners (the window's task service), so the
 * runtime can be built before the service and neither refers to the other.
 */
import { toDisposable, type DisposableLike } from '../core/disposable';
import type { HeldQuestion, ParkQuestion, ParkResult, SegmentEndReason, SegmentUsage } from '../core/types';
import type { QuestionAnsweredBy, TaskStore, TerminalDetails } from '../store';
import {
  answerParkedQuestion,
  cancelTask,
  deleteTask,
  expireSegment,
  finishTask,
  interruptSegment,
  parkForUsageLimit,
  parkSegment,
  recoverInterruptedTask,
  startSegment,
  type CancelResult,
} from './lifecycle-rules';

/** Work a lifecycle change leaves for the service's loops. */
export type LifecycleWork =
  /** These tickets are in the settle outbox: release them now. */
  | { kind: 'settle'; ticketIds: string[] }
  /** The task is queued without a ticket: retake for it. */
  | { kind: 'retake'; taskId: string };

/** Runs a change's follow-up work; for a retake it resolves to whether a live ticket was attached. */
export type LifecycleWorkListener = (work: LifecycleWork) => void | Promise<boolean>;

export class TaskLifecycle {
  private readonly listeners = new Set<LifecycleWorkListener>();

  constructor(
    private readonly store: TaskStore,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /** Called after each change that left work (outside the transaction); returns the unsubscribe. */
  onDidQueueWork(listener: LifecycleWorkListener): DisposableLike {
    this.listeners.add(listener);
    return toDisposable(() => this.listeners.delete(listener));
  }

  /** The agent runs: queued & claimed -> running, the segment starts. False when the task was paused or cancelled meanwhile. */
  markStarted(taskId: string, ticketId: string, sessionId: string): Promise<boolean> {
    return this.store.mutate((tx) => startSegment(tx, taskId, ticketId, sessionId));
  }

  /** The gateway admitted the segment's first model request (card: "running", not "waiting for admission"). */
  async markAdmitted(ticketId: string, at?: number): Promise<void> {
    await this.store.mutate((tx) => tx.tickets.markAdmitted(ticketId, at ?? tx.now));
  }

  /** The segment's proxy cannot reach the gateway since `since`, or can again (null): the card says so in every window. */
  async markGatewayUnreachable(ticketId: string, since: number | null): Promise<void> {
    await this.store.mutate((tx) => tx.tickets.markGatewayUnreachable(ticketId, since));
  }

  /** Adds what the segment's model answers used to its ledger row (the runtime sums them between writes). */
  async recordUsage(ticketId: string, usage: SegmentUsage): Promise<void> {
    await this.store.mutate((tx) => tx.tickets.addUsage(ticketId, usage));
  }

  /** The segment ended for another reason than expiry, interruption or a terminal state (e.g. the user cancelled). */
  async endSegment(ticketId: string, reason: SegmentEndReason, error?: string): Promise<void> {
    await this.store.mutate((tx) => tx.tickets.endSegment(ticketId, reason, error ?? null));
  }

  /**
   * The host shut down under the segment: back to queued with the same session and the same (live)
   * ticket; the questions open then are kept (docs/flows.md#a-question-across-a-reload).
   */
  async interrupt(taskId: string, ticketId: string, held: readonly HeldQuestion[] = []): Promise<void> {
    await this.store.mutate((tx) => interruptSegment(tx, taskId, ticketId, held));
  }

  /**
   * Recovery: tasks a window that is gone left running go back to the queue; returns those
   * requeued. One whose ticket is known to be over retakes at once, not at the next sync cycle
   * (docs/flows.md#recovery).
   */
  async requeueInterrupted(taskIds: readonly string[]): Promise<string[]> {
    const outcomes = await this.store.mutate((tx) => taskIds.map((id) => ({ id, outcome: recoverInterruptedTask(tx, id) })));
    const retakes = outcomes.flatMap((o) => (o.outcome && o.outcome.kind === 'retake' ? [{ id: o.id, settle: o.outcome.settle }] : []));
    this.emit({ kind: 'settle', ticketIds: retakes.flatMap((r) => r.settle) });
    // Not awaited: the caller (recovery) only needs the tasks back in the queue.
    for (const r of retakes) void Promise.all(this.emit({ kind: 'retake', taskId: r.id }).map((p) => p.catch(() => false)));
    return outcomes.filter((o) => o.outcome !== false).map((o) => o.id);
  }

  /**
   * 3102 (or an expired status) ended the segment: requeue (keeping session and started_at),
   * the old ticket into the outbox, and a retake with the same task id. Resolves once the retake
   * was tried, to whether a new ticket was attached (if not, the sync keeps retrying).
   */
  async expireSegment(taskId: string, ticketId: string): Promise<boolean> {
    const requeued = await this.store.mutate((tx) => expireSegment(tx, taskId, ticketId));
    this.emit({ kind: 'settle', ticketIds: [ticketId] });
    if (!requeued) return false;
    const attached = await Promise.all(this.emit({ kind: 'retake', taskId }).map((p) => p.catch(() => false)));
    return attached.includes(true);
  }

  /** The account's usage limit holds the segment's requests until `resetAt` (null: lifted): every window's card says so. */
  async markUsageLimit(ticketId: string, resetAt: number | null): Promise<void> {
    await this.store.mutate((tx) => tx.tickets.markUsageLimit(ticketId, resetAt));
  }

  /**
   * The usage limit resets later than a hold is worth: the segment ends without failing, its
   * ticket is settled, and the task retakes at once; its new ticket waits in the gateway's queue,
   * which promotes nothing before the reset (docs/flows.md#usage-limits).
   */
  async parkForUsageLimit(taskId: string, ticketId: string, resetAt: number): Promise<boolean> {
    const requeued = await this.store.mutate((tx) => parkForUsageLimit(tx, taskId, ticketId, resetAt));
    this.emit({ kind: 'settle', ticketIds: [ticketId] });
    if (requeued) this.retakeInBackground(taskId);
    return requeued;
  }

  /**
   * Nobody answered the question in time: the segment ends, its ticket is settled, the task waits
   * in needs_input (docs/flows.md#questions-park-the-task). An answer given while the agent stopped
   * requeues it at once instead (and retakes).
   */
  async park(
    taskId: string,
    ticketId: string,
    question: ParkQuestion,
    answer?: { decision: 'allow' | 'deny'; by: QuestionAnsweredBy },
  ): Promise<ParkResult> {
    const result = await this.store.mutate((tx) => parkSegment(tx, taskId, ticketId, question, answer));
    this.emit({ kind: 'settle', ticketIds: [ticketId] });
    if (result === 'requeued') this.retakeInBackground(taskId);
    return result;
  }

  /**
   * The first answer to a parked question (any window): recorded, and the task is queued and
   * takes a new ticket; the same session resumes with the decision.
   */
  async answerParked(
    taskId: string,
    askId: string,
    decision: 'allow' | 'deny',
    by: QuestionAnsweredBy = 'host',
  ): Promise<'accepted' | 'already-answered' | 'unknown'> {
    const { result, ticketless } = await this.store.mutate((tx) => {
      const result = answerParkedQuestion(tx, taskId, askId, decision, by);
      // A question kept across its window's close leaves its queued task with the ticket it has.
      return { result, ticketless: !tx.tasks.get(taskId)?.serverTicketId };
    });
    if (result === 'accepted' && ticketless) this.retakeInBackground(taskId);
    return result;
  }

  /** running -> completed, and its tickets into the settle outbox, in one mutation. */
  complete(taskId: string, details: TerminalDetails = {}): Promise<boolean> {
    return this.finish(taskId, 'completed', details);
  }

  /** running (or an undispatchable queued) -> failed, and its tickets into the settle outbox. */
  fail(taskId: string, details: TerminalDetails = {}): Promise<boolean> {
    return this.finish(taskId, 'failed', details);
  }

  /**
   * Any live task -> cancelled. The terminal state is written first (so a late agent result
   * cannot overwrite it), then `stopAgent` runs, then the tickets are released.
   */
  async cancel(taskId: string, stopAgent: (taskId: string) => Promise<void>): Promise<CancelResult> {
    const result = await this.store.mutate((tx) => cancelTask(tx, taskId));
    if (result.kind !== 'cancelled') return result;
    await stopAgent(taskId);
    this.emit({ kind: 'settle', ticketIds: result.settles });
    return result;
  }

  /** Deletes a terminal task's row; its unsettled tickets stay in the outbox until acknowledged. */
  async delete(taskId: string): Promise<boolean> {
    const { settles, deleted } = await this.store.mutate((tx) => deleteTask(tx, taskId));
    this.emit({ kind: 'settle', ticketIds: settles });
    return deleted;
  }

  private async finish(taskId: string, outcome: 'completed' | 'failed', details: TerminalDetails): Promise<boolean> {
    const result = await this.store.mutate((tx) => finishTask(tx, taskId, outcome, details));
    this.emit({ kind: 'settle', ticketIds: result.settles });
    return result.applied;
  }

  /** Asks the service to retake for the task; a failure is left to the sync, which keeps retrying. */
  private retakeInBackground(taskId: string): void {
    for (const pending of this.emit({ kind: 'retake', taskId }))
      pending.catch((e: unknown) => this.log(`retake of ${taskId} failed: ${e instanceof Error ? e.message : String(e)}`));
  }

  /** A listener's failure must never break the change that was already written. Returns the listeners' pending work. */
  private emit(work: LifecycleWork): Promise<boolean>[] {
    if (work.kind === 'settle' && work.ticketIds.length === 0) return [];
    const pending: Promise<boolean>[] = [];
    for (const listener of [...this.listeners]) {
      try {
        const result = listener(work);
        if (result) pending.push(result);
      } catch (e) {
        this.log(`a lifecycle listener failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    return pending;
  }
}
