/**
 * The user's actions on tasks, in any window: create (availability -> take with a random task id
 * -> ledger row -> task row), pause, continue, edit, cancel, delete and delete-from-History.
 * Terminal changes go through the task lifecycle; tickets to release go to the settle outbox at
 * once; a task left without a ticket is retaken.
 */
import type { Clock } from '../core/clock';
import { newTaskId } from '../core/ids';
import { historyTriggeredAt } from '../core/history';
import { PERMISSION_MODES, isTerminalStatus, type OffPeakTask } from '../core/types';
import type { GatewayClient, TakeResult } from '../gateway-client/client';
import { isGatewayError } from '../gateway-client/errors';
import { isLiveTicketState, type TicketStatusEntry } from '../protocol/gateway';
import type { TaskEdit, TaskStore } from '../store';
import type { AvailabilitySnapshot } from './availability';
import { ServiceError, toServiceError } from './errors';
import { afterLinkOf } from './chains';
import { isolateTask, linkFollowUp, type FollowUpLinkInput } from './follow-ups';
import type { Retaker } from './retaker';
import type { SettleOutbox } from './settle-outbox';
import { errorText, type BackgroundWork } from './sync-config';
import type { SyncLoop } from './sync-loop';
import type { TaskLifecycle } from './task-lifecycle';
import {
  continueTask,
  insertTakenTask,
  insertWaitingTask,
  keepCheck,
  ledgerRowOfTake,
  orphanTicket,
  type CreateTaskInput,
} from './ticket-rules';

/** `scheduled`: the task takes no ticket before its "not before" time; it is taken then. */
export type ContinueOutcome = 'reused' | 'retaken' | 'retake_pending' | 'scheduled';

export interface DeleteOptions {
  /** Also remove the agent's session transcript (kept by default: docs/flows.md#cancel-delete-history). */
  deleteSession?: boolean;
}

/** A deleted task, as it was, and whether its session goes with it. */
export interface TaskDeletion {
  task: OffPeakTask;
  deleteSession: boolean;
}

export interface TaskActionsOptions {
  store: TaskStore;
  gateway: GatewayClient;
  clock: Clock;
  availability: AvailabilitySnapshot;
  lifecycle: TaskLifecycle;
  outbox: SettleOutbox;
  retaker: Retaker;
  sync: SyncLoop;
  background: BackgroundWork;
  newTaskId?: () => string;
  /** Stops a task's agent if one runs in this window; bounded by the caller's timeout, never throws. */
  stopAgent: (taskId: string) => Promise<void>;
  onWake: (taskId: string) => void;
  onDeleted: (deletion: TaskDeletion) => void;
  log: (line: string) => void;
}

export class TaskActions {
  private readonly makeTaskId: () => string;

  constructor(private readonly options: TaskActionsOptions) {
    this.makeTaskId = options.newTaskId ?? newTaskId;
  }

  private getTask(taskId: string): OffPeakTask | undefined {
    return this.options.store.read((tx) => tx.tasks.get(taskId));
  }

  /** `followUp`: the task is a follow-up, linked in the same transaction that inserts it (docs/flows.md#follow-up). */
  async create(input: CreateTaskInput, followUp?: FollowUpLinkInput): Promise<OffPeakTask> {
    const { store, gateway, availability, outbox, sync, background } = this.options;
    validateCreate(input);
    if (!(await gateway.hasApiKey())) throw new ServiceError('no_api_key', 'Cannot create the task: no gateway API key is set.');
    if ((input.notBefore ?? 0) > this.options.clock.now() || input.afterTaskId !== undefined) return this.createWaiting(input, followUp);

    if (!availability.isFresh()) await availability.refresh();
    const a = availability.state;
    if (a.status === 'disabled') {
      if (a.reason === 'not_eligible')
        throw new ServiceError('not_eligible', 'Cannot create the task: your plan is not eligible for off-peak tasks.');
      throw new ServiceError(
        'limit_reached',
        `Cannot create the task: no off-peak ticket can be taken${a.nextTakeAt ? ` until ${new Date(a.nextTakeAt).toISOString()}` : ' right now'}.`,
        { nextTakeAt: a.nextTakeAt },
      );
    }
    if (a.status === 'error' || a.status === 'unknown') {
      throw new ServiceError(
        'gateway_unavailable',
        `Cannot create the task now: ${a.status === 'error' ? a.message : 'availability unknown'}`,
      );
    }

    const taskId = this.makeTaskId();
    let take: TakeResult;
    try {
      take = await this.takeRetrySafe(taskId);
    } catch (e) {
      if (isGatewayError(e) && e.kind === 'limit_reached') availability.noteLimitReached(e.nextTakeAt);
      throw toServiceError('create the task', e);
    }

    const pollDelay = sync.ruleContext.pollDelay;
    // The ledger row first, persisted on its own: if the INSERT below fails, the outbox still
    // knows the ticket and settles it (an orphan ticket).
    try {
      await store.mutate((tx) => tx.tickets.insert(ledgerRowOfTake(tx, taskId, take, pollDelay)));
    } catch (e) {
      const owner = this.safeOwnerOf(take.ticketId);
      if (owner !== undefined && owner !== taskId) {
        // The answer names a ticket another task holds: never settle someone else's ticket.
        throw new ServiceError(
          'gateway_rejected',
          `Cannot create the task: the gateway answered with ticket ${take.ticketId}, which belongs to another task.`,
          { cause: e },
        );
      }
      background.track(outbox.settleUnrecorded(take.ticketId));
      throw toServiceError('create the task', e);
    }

    let task: OffPeakTask;
    try {
      task = await store.mutate((tx) => {
        const inserted = insertTakenTask(tx, taskId, input, take, pollDelay);
        if (followUp) linkFollowUp(tx, taskId, followUp);
        isolateTask(tx, taskId, input, followUp);
        keepCheck(tx, inserted, input);
        return inserted;
      });
    } catch (e) {
      await store
        .mutate((tx) => orphanTicket(tx, take.ticketId, errorText(e)))
        .catch(() => background.track(outbox.settleUnrecorded(take.ticketId)));
      outbox.settleSoon([take.ticketId]);
      throw toServiceError('create the task', e);
    }

    if (!isLiveTicketState(take.state)) {
      // An abnormal take answer: the task exists without a ticket; retake now, and if that
      // fails the sync keeps retrying. Never left stalled.
      background.track(this.options.retaker.retake(taskId));
    } else if (task.schedulable) {
      this.options.onWake(taskId);
    }
    sync.plan({ restartLongPoll: true });
    return task;
  }

  /**
   * A task that starts later: stored now without a ticket; the lease holder's sync takes its
   * ticket at `notBefore`, and once the task it waits for completed (docs/flows.md#schedules-and-chains).
   * Availability is the take's business then.
   */
  private async createWaiting(input: CreateTaskInput, followUp: FollowUpLinkInput | undefined): Promise<OffPeakTask> {
    const taskId = this.makeTaskId();
    let task: OffPeakTask;
    try {
      task = await this.options.store.mutate((tx) => {
        const inserted = insertWaitingTask(tx, taskId, input, afterLinkOf(tx, taskId, input));
        if (followUp) linkFollowUp(tx, taskId, followUp);
        // Continuing in the followed task's branch, it gets that task's worktree when it goes.
        if (!inserted.continueInBranch) isolateTask(tx, taskId, input, followUp);
        keepCheck(tx, inserted, input);
        return inserted;
      });
    } catch (e) {
      throw toServiceError('create the task', e);
    }
    this.options.sync.plan();
    return task;
  }

  /** queued & unclaimed -> paused. Only local dispatch stops; the ticket keeps its place. */
  async pause(taskId: string): Promise<OffPeakTask> {
    const ok = await this.options.store.mutate((tx) => tx.tasks.pause(taskId));
    if (!ok) throw this.refusal(taskId, 'pause', 'only a queued task that is not being dispatched can be paused');
    return this.getTask(taskId)!;
  }

  /**
   * paused -> queued. An alive ticket is reused at no cost; a dead or missing one is retaken
   * with the same task id. A failed status check counts as alive (no quota spent on a guess;
   * the sync repairs it if it was dead after all).
   */
  async continue(taskId: string): Promise<{ task: OffPeakTask; ticket: ContinueOutcome; error?: string }> {
    const { store, gateway, sync, retaker } = this.options;
    const task = this.getTask(taskId);
    if (!task) throw new ServiceError('not_found', `No task ${taskId}.`);
    if (task.status !== 'paused')
      throw new ServiceError('not_allowed', `Cannot continue a ${task.status} task: only a paused task can be continued.`);

    const ticketId = task.serverTicketId;
    const ledger = ticketId ? store.read((tx) => tx.tickets.get(ticketId)) : undefined;
    let entry: TicketStatusEntry | undefined;
    let alive: boolean;
    if (!ticketId) alive = false;
    else if (ledger && (ledger.settleState !== 'none' || !isLiveTicketState(ledger.serverState))) alive = false;
    else {
      try {
        entry = (await gateway.status([ticketId])).tickets[0];
        alive = isLiveTicketState(entry.state);
      } catch (e) {
        this.options.log(`continue ${taskId}: status check failed, treating the ticket as alive: ${errorText(e)}`);
        alive = true;
      }
    }

    const ctx = sync.ruleContext;
    const ok = await store.mutate((tx) => continueTask(tx, taskId, ticketId, entry, alive, ctx));
    if (!ok) throw this.refusal(taskId, 'continue', 'only a paused task can be continued');

    if (!ticketId && ((task.notBefore ?? 0) > this.options.clock.now() || task.afterTaskId)) {
      // Not taken yet and waiting for its time or its chain: the sync takes its ticket then, as if it had never paused.
      sync.plan();
      return { task: this.getTask(taskId)!, ticket: 'scheduled' };
    }
    if (alive) {
      const now = this.getTask(taskId)!;
      if (now.schedulable) this.options.onWake(taskId);
      sync.plan();
      return { task: now, ticket: 'reused' };
    }
    const retaken = await retaker.retake(taskId);
    sync.plan({ restartLongPoll: true });
    const after = this.getTask(taskId)!;
    return retaken ? { task: after, ticket: 'retaken' } : { task: after, ticket: 'retake_pending', error: after.lastError ?? undefined };
  }

  /** Edits the form of a queued or paused task. The workspace cannot be changed. */
  async edit(taskId: string, patch: TaskEdit): Promise<OffPeakTask> {
    for (const key of Object.keys(patch)) {
      if (key.startsWith('workspace')) throw new ServiceError('invalid_input', 'The workspace of a task cannot be changed.');
    }
    let ok: boolean;
    try {
      ok = await this.options.store.mutate((tx) => tx.tasks.edit(taskId, patch));
    } catch (e) {
      throw toServiceError('edit the task', e);
    }
    if (!ok && patch.notBefore !== undefined && this.getTask(taskId)?.serverTicketId)
      throw new ServiceError('not_allowed', 'Its ticket was taken meanwhile: its start time can no longer be moved.');
    if (!ok) throw this.refusal(taskId, 'edit', 'only a queued or paused task can be edited');
    // A moved start time moves the sync's one timer (this window's own write wakes nothing else).
    if (patch.notBefore !== undefined) this.options.sync.plan();
    return this.getTask(taskId)!;
  }

  /**
   * Cancel: the terminal state first (so a late agent result cannot overwrite it), then stop the
   * agent best-effort, then settle asynchronously through the outbox. Idempotent on a terminal task.
   */
  async cancel(taskId: string): Promise<OffPeakTask> {
    const result = await this.options.lifecycle.cancel(taskId, this.options.stopAgent);
    if (result.kind === 'not_found') throw new ServiceError('not_found', `No task ${taskId}.`);
    if (result.kind === 'refused') throw this.refusal(taskId, 'cancel', 'the task changed meanwhile');
    return result.task;
  }

  /**
   * Delete: a live task is cancelled first; then the row goes. Its unsettled tickets stay in the
   * ledger (no cascade) until the gateway acknowledges them. Deleting a missing task is a no-op.
   */
  async delete(taskId: string, options: DeleteOptions = {}): Promise<boolean> {
    const task = this.getTask(taskId);
    if (!task) return false;
    if (!isTerminalStatus(task.status)) await this.cancel(taskId);
    if (await this.options.lifecycle.delete(taskId)) this.options.onDeleted({ task, deleteSession: options.deleteSession === true });
    return true;
  }

  /**
   * Hide the task's History row: a tombstone only (no confirmation, no undo; the task, session
   * and ledger are untouched). Idempotent, keeping the first time; nothing is written for a task
   * that never started (it has no History row).
   */
  async deleteFromHistory(
    taskId: string,
  ): Promise<{ hidden: boolean; historyDeletedAt: number | null; reason?: 'never_started' | 'already_hidden' }> {
    const written = await this.options.store.mutate((tx) => tx.tasks.deleteHistory(taskId));
    const task = this.getTask(taskId);
    if (!task) throw new ServiceError('not_found', `No task ${taskId}.`);
    if (written) return { hidden: true, historyDeletedAt: task.historyDeletedAt };
    if (historyTriggeredAt(task) === null) return { hidden: false, historyDeletedAt: null, reason: 'never_started' };
    return { hidden: true, historyDeletedAt: task.historyDeletedAt, reason: 'already_hidden' };
  }

  /** Take, retrying once at once on a lost answer: the take is retry-safe per task id. */
  private async takeRetrySafe(taskId: string): Promise<TakeResult> {
    const { gateway } = this.options;
    try {
      return await gateway.take(taskId);
    } catch (e) {
      if (!isGatewayError(e) || !(e.retryable && e.kind !== 'no_capacity')) throw e;
      this.options.log(`take for ${taskId} failed (${e.kind}); retrying once with the same task id`);
      return await gateway.take(taskId);
    }
  }

  /** Which task the ledger says holds this ticket (undefined when unknown or the store cannot be read). */
  private safeOwnerOf(ticketId: string): string | undefined {
    try {
      return this.options.store.read((tx) => tx.tickets.get(ticketId)?.taskId);
    } catch {
      return undefined;
    }
  }

  private refusal(taskId: string, action: string, why: string): ServiceError {
    const task = this.getTask(taskId);
    if (!task) return new ServiceError('not_found', `No task ${taskId}.`);
    return new ServiceError('not_allowed', `Cannot ${action} a ${task.status} task: ${why}.`);
  }
}

/** The check command the user typed, kept with the task and as the folder's last one (docs/flows.md#checks). */
function validateCreate(input: CreateTaskInput): void {
  const bad = (m: string) => new ServiceError('invalid_input', m);
  if (!input || typeof input !== 'object') throw bad('Task input is missing.');
  if (typeof input.prompt !== 'string' || input.prompt.trim() === '') throw bad('The prompt must not be empty.');
  if (typeof input.title !== 'string') throw bad('The title must be a string.');
  if (typeof input.workspacePath !== 'string' || input.workspacePath.trim() === '') throw bad('The workspace path must not be empty.');
  if (!PERMISSION_MODES.includes(input.permissionMode)) throw bad(`The permission mode must be one of ${PERMISSION_MODES.join(', ')}.`);
  if (input.isolation !== undefined && input.isolation !== 'worktree' && input.isolation !== 'inPlace')
    throw bad('The isolation must be "worktree" or "inPlace".');
  // Checked before the take, so bad input never spends a ticket.
  for (const [name, value] of [
    ['model', input.model],
    ['thought level', input.thoughtLevel],
    ['workspace identity', input.workspaceIdentity],
  ] as const) {
    if (value !== undefined && value !== null && typeof value !== 'string') throw bad(`The ${name} must be text.`);
  }
}
