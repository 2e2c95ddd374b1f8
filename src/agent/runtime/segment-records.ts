/**
 * What a running segment writes through the task lifecycle (docs/flows.md#segments): its proxy's
 * events as they come (admission, token usage, a gateway outage, the usage limit) and, at its end,
 * its outcome, with the task's changed files counted after every segment:
 *   completed -> completed (+ files_changed), failed -> failed with the reason,
 *   segment expired (3102) -> requeue + retake with the same task id, resume later,
 *   cancelled -> already cancelled by the user action (the segment is just closed),
 *   interrupted (host shutting down) -> back to queued, same session and ticket,
 *   parked (a question nobody answered in time) -> needs_input, ticket settled, resumes once answered.
 * A task that ended (completed, failed, cancelled) having changed nothing on its own branch leaves
 * no worktree and branch (`dropEmptyWorktree`, docs/flows.md#isolation).
 */
import type { Clock } from '../../core/clock';
import type { OffPeakTask } from '../../core/types';
import type { TaskStore } from '../../store';
import type { TicketProxyEvent } from '../proxy/ticket-proxy-types';
import type { UsageRecorder } from '../proxy/usage-recorder';
import type { AskBroker, PendingAsk } from '../questions/asks';
import { parkQuestionOf, type QuestionRecorder } from '../questions/question-record';
import { countFilesChanged } from '../workplace/files-changed';
import { listTaskChangesWithCount } from '../workplace/task-changes';
import { dropEmptyWorktree, type Workplace } from '../workplace/task-workplace';
import type { RuntimeEvent } from './runtime-events';
import { taskLogsDir } from './segment-logs';
import type { SegmentOutcome } from './segment-outcome';
import type { TaskLifecyclePort } from './task-runtime-options';

/** The runtime's parts the records are written with. */
export interface SegmentRecordsDeps {
  store: TaskStore;
  lifecycle: TaskLifecyclePort;
  runtimeDir: string;
  clock: Clock;
  asks: AskBroker;
  questions: QuestionRecorder;
  usage: UsageRecorder;
  onEvent?: (event: RuntimeEvent) => void;
  log: (line: string) => void;
}

export class SegmentRecords {
  /** Questions the task parks on while its agent stops, by ask id. */
  readonly parking = new Map<string, PendingAsk>();
  /** Questions open when the window began to close, by task id: kept for the resumed session. */
  readonly held = new Map<string, PendingAsk[]>();

  constructor(private readonly deps: SegmentRecordsDeps) {}

  /** What the segment's proxy saw, written to the ledger and reported (`told`: the decisions the resumed session is told). */
  proxyEvent(taskId: string, ticketId: string, event: TicketProxyEvent, told: { askIds: string[]; askedAgain: string[] }): void {
    if (event.type === 'admitted') {
      void this.deps.questions.markStated(told.askIds, told.askedAgain);
      this.deps.lifecycle
        .markAdmitted(ticketId, event.at)
        .catch((err: unknown) => this.deps.log(`runtime: recording admission failed: ${(err as Error).message}`));
      this.deps.onEvent?.({ type: 'admitted', taskId, ticketId, at: event.at });
    } else if (event.type === 'holding') {
      this.deps.onEvent?.({ type: 'holding', taskId, ticketId, waitMs: event.waitMs, at: event.at });
    } else if (event.type === 'usage') {
      this.deps.usage.add(ticketId, event.model, event.usage);
    } else if (event.type === 'window-share') {
      // Credited to the account's previous answer's ticket, which may be another task's (docs/flows.md#capacity-and-cost).
      const { reading } = event;
      this.deps.usage.noteReading(ticketId, {
        at: event.at,
        utilization5h: reading.utilization5h,
        utilization7d: reading.utilization7d,
        reset5hAt: reading.reset5hAt,
        reset7dAt: reading.reset7dAt,
      });
      if (reading.ticketId !== null) this.deps.usage.addShare(reading.ticketId, { fiveHour: reading.fiveHour, sevenDay: reading.sevenDay });
    } else if (event.type === 'usage-limit') {
      this.deps.lifecycle
        .markUsageLimit?.(ticketId, event.resetAt)
        .catch((err: unknown) => this.deps.log(`runtime: recording the usage limit failed: ${(err as Error).message}`));
      this.deps.onEvent?.({ type: 'usage-limit', taskId, ticketId, resetAt: event.resetAt, park: event.park, at: event.at });
    } else if (event.type === 'gateway-unreachable' || event.type === 'gateway-reachable') {
      // In the ledger, so every window's card says "Gateway unreachable since …" (docs/flows.md#segments).
      const since = event.type === 'gateway-unreachable' ? event.since : null;
      if (event.type === 'gateway-unreachable')
        this.deps.log(`segment: the gateway cannot be reached (${event.error}); its requests are held`);
      this.deps.lifecycle
        .markGatewayUnreachable(ticketId, since)
        .catch((err: unknown) => this.deps.log(`runtime: recording the gateway outage failed: ${(err as Error).message}`));
      this.deps.onEvent?.({ type: 'gateway-unreachable', taskId, ticketId, since, at: event.at });
    }
  }

  /** Writes how the segment ended through the lifecycle, then reports it (`segment-ended`). */
  async apply(task: OffPeakTask, place: Workplace, ticketId: string, outcome: SegmentOutcome): Promise<void> {
    const { lifecycle } = this.deps;
    const taskId = task.id;
    switch (outcome.kind) {
      case 'completed':
        await lifecycle.complete(taskId, { filesChanged: await this.filesChanged(task, place) });
        break;
      case 'failed':
        await lifecycle.fail(taskId, { failureReason: outcome.reason, filesChanged: await this.filesChanged(task, place) });
        break;
      case 'segment-expired':
        // Requeued without a ticket; the window's task service retakes with the same task id.
        await this.filesChanged(task, place); // the card's list, counted after every segment
        await lifecycle.expireSegment(taskId, ticketId);
        break;
      case 'cancelled':
        // Counted on its own branch, so a cancelled task that changed nothing leaves no branch.
        if (place.isolation?.mode === 'worktree') await this.filesChanged(task, place);
        await lifecycle.endSegment(ticketId, 'cancelled');
        break;
      case 'usage-limited':
        // Ended without failing, ticket settled; the new ticket waits in the gateway's queue until the reset.
        await this.filesChanged(task, place);
        await (lifecycle.parkForUsageLimit
          ? lifecycle.parkForUsageLimit(taskId, ticketId, outcome.resetAt)
          : lifecycle.expireSegment(taskId, ticketId));
        break;
      case 'interrupted': {
        // The ticket stays live: the scheduler dispatches the task again at once with it.
        await this.deps.questions.idle(); // the questions' own records first
        const held = (this.held.get(taskId) ?? []).map((ask) => ({
          question: parkQuestionOf(ask),
          answer: this.deps.asks.takeParkingAnswer(ask.id),
        }));
        await lifecycle.interrupt(taskId, ticketId, held);
        break;
      }
      case 'parked': {
        const ask = this.parking.get(outcome.askId);
        this.parking.delete(outcome.askId);
        if (!ask) break;
        await this.deps.questions.idle(); // the question's own record first
        const result = await lifecycle.park(taskId, ticketId, parkQuestionOf(ask), this.deps.asks.takeParkingAnswer(ask.id));
        this.deps.log(
          `runtime: ${taskId} ${result === 'parked' ? 'parked: it waits for the answer' : result === 'requeued' ? 'was answered while it parked: queued again' : 'ended while it parked'}`,
        );
        break;
      }
    }
    if (outcome.kind === 'completed' || outcome.kind === 'failed' || outcome.kind === 'cancelled') {
      const left = await dropEmptyWorktree(this.deps.store, taskId).catch((err: unknown) => [(err as Error).message]);
      if (left.length > 0) this.deps.log(`runtime: the empty worktree of ${taskId} stays: could not remove ${left.join(' and ')}`);
    }
    // A segment that ended otherwise while it parked (expired, cancelled) leaves nothing to park on.
    for (const [askId, ask] of this.parking) if (ask.taskId === taskId) this.parking.delete(askId);
    this.held.delete(taskId);
    this.deps.onEvent?.({ type: 'segment-ended', taskId, ticketId, outcome, at: this.deps.clock.now() });
  }

  /**
   * The task's changed files with line counts, written to its isolation row for the card and
   * the review (docs/flows.md#review); their number, or the plain count when the list is unknown.
   */
  private async filesChanged(task: OffPeakTask, place: Workplace): Promise<number | null> {
    const taskDir = taskLogsDir(this.deps.runtimeDir, task.id);
    if (!place.isolation) return countFilesChanged(place.changes.folder, taskDir);
    const listed = await listTaskChangesWithCount({ ...place.changes, taskDir }).catch((err: unknown) => {
      this.deps.log(`runtime: the changed files of ${task.id} could not be listed: ${(err as Error).message}`);
      return null;
    });
    await this.deps.store.mutate((tx) => tx.isolation.recordChanges(task.id, listed?.changes ?? null)).catch(() => undefined);
    return listed ? listed.count : countFilesChanged(place.changes.folder, taskDir);
  }
}
