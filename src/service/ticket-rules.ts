/**
 * The ticket rules: how a gateway answer (a take, a status entry, a retake, a settle
 * acknowledgement) changes a task and its tickets, and when the ledger knows a ticket is over.
 * Each rule is a pure function over one store transaction: it reads and writes only through `tx`,
 * performs no I/O, keeps no state, and returns what the caller must do next (wake the scheduler,
 * retake, settle these tickets). The loops around them (sync, settle outbox, retaker, user
 * actions) decide when to call them; the lifecycle events' rules are in `lifecycle-rules.ts`.
 */
import { isTerminalStatus, type OffPeakTask, type SegmentEndReason, type ServerTicketState, type TicketRecord } from '../core/types';
import type { TakeResult } from '../gateway-client/client';
import type { GatewayError } from '../gateway-client/errors';
import { SettleReasonSchema, isLiveTicketState, type SettleReason, type TicketStatusEntry } from '../protocol/gateway';
import type { AfterInput } from './chains';
import type { IsolationMode, NewTaskInput, NewTicketInput, StoreReadTx, StoreTx } from '../store';

/** How long until a ticket in `state` is polled again, given the gateway's hint (the sync loop's pacing). */
export type PollDelay = (state: string, hintMs: number) => number;

export interface StatusRuleContext {
  pollDelay: PollDelay;
  /** Next poll of a live ticket whose answer carried no hint. */
  fallbackPollMs: number;
  /** A gateway instant on the local clock (clock skew corrected). */
  toLocal(serverMs: number | null | undefined): number | undefined;
}

/** What a status entry asks of the caller: wake the scheduler, retake for the task, or nothing. */
export type EntryFollowUp = 'woke' | 'retake' | 'none';

/** Prefix of a task's last_error while its retake keeps failing (cleared by the next success). */
export const RETAKE_FAILED = 'retake failed:';

/** The task's form: what the user fills in (the store's insert input minus ids and snapshots). */
export type CreateTaskInput = Pick<
  NewTaskInput,
  'title' | 'prompt' | 'permissionMode' | 'model' | 'thoughtLevel' | 'workspacePath' | 'workspaceIdentity' | 'notBefore'
> &
  AfterInput & {
    /** "Run on its own branch" (worktree) or in place (docs/flows.md#isolation); absent: in place. */
    isolation?: IsolationMode;
    /** The check command the user typed (docs/flows.md#checks); absent or blank: none. */
    checkCommand?: string | null;
  };

/** A settle answer that means "acknowledged" (a 4xx other than auth, timeout and rate limit) vs worth retrying. */
export function settleAcknowledgedBy(e: GatewayError): boolean {
  const s = e.status;
  return s !== undefined && s >= 400 && s < 500 && s !== 401 && s !== 403 && s !== 408 && s !== 429;
}

/** The reason stored with an outbox row, as the gateway knows it ('abandoned' when unreadable). */
export function settleReasonOf(stored: string | null): SettleReason {
  const parsed = SettleReasonSchema.safeParse(stored);
  return parsed.success ? parsed.data : 'abandoned';
}

/** Why a ticket taken for a task that meanwhile ended (or was deleted) is settled. */
export function settleReasonForEndedTask(task: Pick<OffPeakTask, 'status'> | undefined): SettleReason {
  if (!task) return 'deleted';
  if (task.status === 'completed' || task.status === 'failed') return task.status;
  return 'cancelled';
}

/** The ledger row of a take answer. */
export function ledgerRowOfTake(tx: StoreTx, taskId: string, take: TakeResult, pollDelay: PollDelay): NewTicketInput {
  return {
    ticketId: take.ticketId,
    taskId,
    serverState: take.state,
    queuePosition: take.state === 'queued' ? take.position : null,
    nextPollAt: isLiveTicketState(take.state) ? tx.now + pollDelay(take.state, take.nextPollAfterMs) : null,
  };
}

/**
 * Inserts the task a take was made for (its ledger row is already written). A take answered
 * with a dead ticket gives a ticketless task, retaken by the caller; the ticket is retired.
 */
export function insertTakenTask(tx: StoreTx, taskId: string, form: CreateTaskInput, take: TakeResult, pollDelay: PollDelay): OffPeakTask {
  const live = isLiveTicketState(take.state);
  const inserted = tx.tasks.insert({
    ...formColumns(taskId, form),
    serverTicketId: live ? take.ticketId : null,
    registeredAt: live ? tx.now : null,
    schedulable: take.state === 'ready' || take.state === 'active',
    queuePosition: take.state === 'queued' ? take.position : null,
    nextPollAt: live ? tx.now + pollDelay(take.state, take.nextPollAfterMs) : null,
  });
  if (!live) retireDeadTicket(tx, take.ticketId, take.state);
  return inserted;
}

/**
 * A task created to start later (docs/flows.md#schedules-and-chains): stored without a ticket; the
 * sync loop takes one at `notBefore`, so its place in the gateway's FIFO counts from then.
 */
export function insertWaitingTask(tx: StoreTx, taskId: string, form: CreateTaskInput, after: NewTaskInput['after']): OffPeakTask {
  return tx.tasks.insert({ ...formColumns(taskId, form), notBefore: form.notBefore ?? null, after });
}

/**
 * A task's check, in the transaction that inserts it (docs/flows.md#checks). A check field sent
 * empty is a box the user emptied: the folder's last command is forgotten, so the form does not
 * offer it again; no field at all (a follow-up) leaves it.
 */
export function keepCheck(tx: StoreTx, task: OffPeakTask, input: CreateTaskInput): void {
  const command = input.checkCommand?.trim();
  if (command) tx.checks.insert(task.id, command, task.workspaceKey);
  else if (typeof input.checkCommand === 'string') tx.checks.forgetCommand(task.workspaceKey);
}

/** The task row's columns from the create form. */
function formColumns(taskId: string, form: CreateTaskInput): NewTaskInput {
  return {
    id: taskId,
    title: form.title,
    prompt: form.prompt,
    permissionMode: form.permissionMode,
    model: form.model ?? null,
    thoughtLevel: form.thoughtLevel ?? null,
    workspacePath: form.workspacePath,
    workspaceIdentity: form.workspaceIdentity ?? null,
  };
}

/** The task row could not be inserted after its take: its ticket is an orphan, settled through the outbox. */
export function orphanTicket(tx: StoreTx, ticketId: string, error: string): void {
  tx.tickets.endSegment(ticketId, 'orphan', error);
  tx.tickets.requestSettle(ticketId, 'orphan');
}

/**
 * Applies one status entry for a task's ticket. The ledger always records it; the task follows
 * only while the ticket is its current one and the task is not terminal.
 */
export function applyStatusEntry(tx: StoreTx, taskId: string, entry: TicketStatusEntry, ctx: StatusRuleContext): EntryFollowUp {
  const ticketId = entry.ticket_id;
  const nextPollAt = tx.now + ctx.pollDelay(entry.state, entry.next_poll_after_ms ?? ctx.fallbackPollMs);
  if (!tx.tickets.get(ticketId)) {
    // a ticket the ledger does not know yet (written by an older build): record it now
    tx.tickets.insert({ ticketId, taskId, serverState: entry.state, nextPollAt });
  }
  const task = tx.tasks.get(taskId);
  const current = task && !isTerminalStatus(task.status) && task.serverTicketId === ticketId ? task : undefined;
  /** What every state past `queued` writes: no queue position, and when to look again. */
  const unqueued = { queuePosition: null, nextPollAt };

  switch (entry.state) {
    case 'queued':
      tx.tickets.updateServerState(ticketId, { serverState: 'queued', queuePosition: entry.position, nextPollAt });
      // The account's usage limit (or headroom) keeps it queued: its card and the status bar say until when (docs/flows.md#usage-limits).
      tx.tickets.markUsageLimit(ticketId, ctx.toLocal(entry.promotion_held_until) ?? null);
      if (current) tx.tasks.applySnapshot(taskId, ticketId, { schedulable: false, queuePosition: entry.position, nextPollAt });
      return 'none';
    case 'ready': {
      tx.tickets.updateServerState(ticketId, { ...unqueued, serverState: 'ready', readyDeadline: ctx.toLocal(entry.ready_deadline) });
      if (!current) return 'none';
      tx.tasks.applySnapshot(taskId, ticketId, { ...unqueued, schedulable: true });
      return current.status === 'queued' && !current.schedulable ? 'woke' : 'none';
    }
    case 'active': {
      tx.tickets.updateServerState(ticketId, { ...unqueued, serverState: 'active', expiresAt: ctx.toLocal(entry.active_until) });
      if (!current) return 'none';
      // A queued task whose ticket is still active (after a restart) may be dispatched again at
      // once with it, so it is schedulable; for a running one active only clears the position.
      const requeued = current.status === 'queued';
      tx.tasks.applySnapshot(taskId, ticketId, requeued ? { ...unqueued, schedulable: true } : unqueued);
      return requeued && !current.schedulable ? 'woke' : 'none';
    }
    case 'expired':
    case 'settled':
    case 'not_found': {
      if (current && (current.status === 'running' || current.status === 'awaiting')) {
        // Running: nothing changes but what the gateway said (docs/flows.md#sync). The runtime's
        // outcome decides how the segment ends and why the ticket is settled: a request admitted
        // before the end may still be answered and the task complete; otherwise the agent's next
        // model call gets 3102 and the segment ends as expired. Stop polling a dead ticket.
        tx.tickets.updateServerState(ticketId, { serverState: entry.state, nextPollAt: null });
        tx.tasks.applySnapshot(taskId, ticketId, { schedulable: false, queuePosition: null, nextPollAt: null });
        return 'none';
      }
      retireDeadTicket(tx, ticketId, entry.state);
      if (!current) return 'none';
      if (current.status === 'queued') {
        // expired, or settled/not_found behind our back: same task id, new ticket
        tx.tasks.clearTicket(taskId, ticketId);
        return 'retake';
      }
      // paused: wait for Continue (it retakes). Stop polling a dead ticket.
      tx.tasks.applySnapshot(taskId, ticketId, { schedulable: false, queuePosition: null, nextPollAt: null });
      return 'none';
    }
  }
}

/** Ledger bookkeeping for a ticket the gateway says is over (`undefined`: we did not just ask). */
export function retireDeadTicket(tx: StoreTx, ticketId: string, state: ServerTicketState | undefined): void {
  switch (state) {
    case 'settled':
      tx.tickets.updateServerState(ticketId, { serverState: 'settled', nextPollAt: null });
      tx.tickets.markSettled(ticketId); // the gateway already released it
      tx.tickets.endSegment(ticketId, 'retaken');
      return;
    case 'not_found':
      tx.tickets.updateServerState(ticketId, { serverState: 'not_found', nextPollAt: null });
      tx.tickets.abandonSettle(ticketId, 'not_found'); // nothing left to release
      tx.tickets.endSegment(ticketId, 'retaken');
      return;
    case 'expired':
      tx.tickets.updateServerState(ticketId, { serverState: 'expired', nextPollAt: null });
      tx.tickets.requestSettle(ticketId, 'segment_end');
      tx.tickets.endSegment(ticketId, 'expired');
      return;
    default:
      // state unknown (a dead ticket we did not just ask about): settle it to be sure
      tx.tickets.requestSettle(ticketId, 'segment_end');
      tx.tickets.endSegment(ticketId, 'retaken');
  }
}

/**
 * paused -> queued with what Continue learnt of the ticket: the status entry if it asked, and
 * whether the ticket counts as alive. A dead ticket is retired and detached (the caller retakes).
 * False when the task is no longer paused.
 */
export function continueTask(
  tx: StoreTx,
  taskId: string,
  ticketId: string | null,
  entry: TicketStatusEntry | undefined,
  alive: boolean,
  ctx: StatusRuleContext,
): boolean {
  if (!tx.tasks.continue(taskId)) return false;
  if (entry && ticketId) applyStatusEntry(tx, taskId, entry, ctx);
  if (!alive && ticketId) {
    if (!entry) retireDeadTicket(tx, ticketId, undefined);
    tx.tasks.clearTicket(taskId, ticketId);
  }
  return true;
}

/**
 * What a retake's answer did: `ready` (attached and schedulable now: wake the scheduler),
 * `attached`, `dead` (the answer was a dead ticket: retired, retry later), `gone` (the task ended
 * or was deleted meanwhile: the ticket goes to the outbox), `conflict` (the ticket was retired
 * already or is another task's: retry later).
 */
export type RetakeOutcome = 'attached' | 'ready' | 'dead' | 'gone' | 'conflict';

/** Records a retake answer for the task and attaches the ticket when it can. */
export function attachRetakenTicket(tx: StoreTx, taskId: string, take: TakeResult, pollDelay: PollDelay): RetakeOutcome {
  const known = tx.tickets.get(take.ticketId);
  if (known && known.settleState !== 'none') {
    // Another task's ticket can never be this task's.
    if (known.taskId !== taskId || !isLiveTicketState(take.state)) return 'conflict';
    // We had given this ticket up (a not_found/settled/expired status answer, a pending
    // settle), yet the gateway, the admission truth, hands it back live for this very task:
    // take it back rather than stall. If it really is over, the next status answer retires it.
    tx.tickets.revive(take.ticketId, take.state);
  }
  tx.tickets.insert(ledgerRowOfTake(tx, taskId, take, pollDelay));
  if (known)
    tx.tickets.updateServerState(take.ticketId, { serverState: take.state, queuePosition: take.state === 'queued' ? take.position : null });
  const task = tx.tasks.get(taskId);
  if (!task || isTerminalStatus(task.status)) {
    // cancelled or deleted while the take was in flight
    tx.tickets.requestSettle(take.ticketId, settleReasonForEndedTask(task));
    return 'gone';
  }
  if (!isLiveTicketState(take.state)) {
    retireDeadTicket(tx, take.ticketId, take.state);
    return 'dead';
  }
  const previous = task.serverTicketId;
  if (previous && previous !== take.ticketId) retireDeadTicket(tx, previous, undefined);
  const schedulable = take.state === 'ready' || take.state === 'active';
  tx.tasks.setTicket(taskId, take.ticketId, {
    schedulable,
    queuePosition: take.state === 'queued' ? take.position : null,
    nextPollAt: tx.now + pollDelay(take.state, take.nextPollAfterMs),
  });
  tx.tasks.clearLastError(taskId, RETAKE_FAILED);
  return schedulable && task.status === 'queued' ? 'ready' : 'attached';
}

/** End the task's open segment and put every not-yet-queued ticket of it in the outbox; returns the tickets to settle. */
export function queueSettlesForTask(tx: StoreTx, taskId: string, reason: SettleReason): string[] {
  const endReason: SegmentEndReason =
    reason === 'completed' || reason === 'failed' || reason === 'cancelled' || reason === 'deleted' ? reason : 'interrupted';
  const ids: string[] = [];
  for (const t of tx.tickets.forTask(taskId)) {
    if (t.segmentStartedAt !== null && t.segmentEndedAt === null) tx.tickets.endSegment(t.ticketId, endReason);
    if (t.settleState === 'none') tx.tickets.requestSettle(t.ticketId, reason);
    if (t.settleState === 'none' || t.settleState === 'pending') ids.push(t.ticketId);
  }
  return ids;
}

/**
 * The gateway acknowledged a settle; a terminal task with no ticket left open is settled too, and
 * the ticket of a deleted task goes (nothing shows it).
 */
export function acknowledgeSettle(tx: StoreTx, ticket: Pick<TicketRecord, 'ticketId' | 'taskId'>): void {
  tx.tickets.markSettled(ticket.ticketId);
  const task = tx.tasks.get(ticket.taskId);
  if (!task) tx.tickets.deleteFinished(ticket.taskId);
  else if (isTerminalStatus(task.status)) {
    const open = tx.tickets.forTask(ticket.taskId).some((t) => t.settleState === 'none' || t.settleState === 'pending');
    if (!open) tx.tasks.markSettled(ticket.taskId);
  }
}

/**
 * Whether the ledger knows the ticket is over: the gateway said so, its settle is under way, or
 * its deadline has passed (the active window's end, or the ready deadline of a ticket never
 * admitted): a deadline that has passed reads as expired at the gateway too.
 */
export function ticketKnownDead(tx: StoreReadTx, ticketId: string): boolean {
  const ticket = tx.tickets.get(ticketId);
  if (!ticket) return false;
  if (ticket.settleState !== 'none' || !isLiveTicketState(ticket.serverState)) return true;
  const deadline = ticket.serverState === 'active' ? ticket.expiresAt : ticket.serverState === 'ready' ? ticket.readyDeadline : null;
  return deadline !== null && deadline <= tx.now;
}

/**
 * A queued task still points at a ticket the ledger knows is over: the ticket is retired (its
 * settle queued unless already under way) and detached, so the task retakes. False when the task
 * no longer points at it.
 */
export function detachDeadTicket(tx: StoreTx, taskId: string, ticketId: string): boolean {
  const ticket = tx.tickets.get(ticketId);
  if (ticket && ticket.settleState === 'none') {
    const state = isLiveTicketState(ticket.serverState) ? 'expired' : (ticket.serverState as ServerTicketState);
    retireDeadTicket(tx, ticketId, state);
  }
  return tx.tasks.clearTicket(taskId, ticketId);
}
