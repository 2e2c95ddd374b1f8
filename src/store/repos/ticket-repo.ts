/**
 * The `off_peak_tickets` ledger and settle outbox (docs/flows.md#ticket-ledger) inside one store transaction.
 * It records every ticket a task took, its timings and why its segment ended; it is a reliability
 * ledger, never a second source of queue truth. Rows have no cascade from tasks: a deleted task's
 * unsettled tickets stay until acknowledged or explicitly abandoned, then go (`deleteFinished`).
 */
import {
  SERVER_TICKET_STATES,
  SETTLE_STATES,
  type SegmentEndReason,
  type SegmentUsage,
  type ServerTicketState,
  type SettleState,
  type TicketRecord,
} from '../../core/types';
import { addSegmentUsage } from '../../core/usage';
import { invalidInput } from '../errors';
import { ticketFromRow } from './rows';
import { assignmentsOf, listQuery, placeholders, type SqlParam } from '../db/sql';
import { StoreRepo } from './store-repo';

export interface NewTicketInput {
  ticketId: string;
  taskId: string;
  serverState: ServerTicketState;
  queuePosition?: number | null;
  /** Defaults to the transaction's time. */
  takenAt?: number;
  nextPollAt?: number | null;
}

export interface TicketStatePatch {
  serverState: ServerTicketState;
  queuePosition?: number | null;
  readyDeadline?: number | null;
  /** The end of the 3 h active window, when the gateway says so. */
  expiresAt?: number | null;
  nextPollAt?: number | null;
  lastError?: string | null;
}

export interface TicketFilter {
  taskId?: string;
  settleState?: SettleState | readonly SettleState[];
  serverState?: ServerTicketState | readonly ServerTicketState[];
  limit?: number;
}

function checkServerState(s: unknown): ServerTicketState {
  if (!SERVER_TICKET_STATES.includes(s as ServerTicketState)) throw invalidInput(`unknown server ticket state ${JSON.stringify(s)}`);
  return s as ServerTicketState;
}

function asList<T extends string>(v: T | readonly T[]): T[] {
  return typeof v === 'string' ? [v as T] : [...(v as readonly T[])];
}

export class TicketRepo extends StoreRepo {
  /**
   * Records a take (write it BEFORE inserting the task, so an INSERT failure leaves an orphan the
   * settle flush can release). A take retried for the same task returns the same ticket: then
   * the existing row is returned and `inserted` is false.
   */
  insert(input: NewTicketInput): { ticket: TicketRecord; inserted: boolean } {
    if (typeof input.ticketId !== 'string' || input.ticketId.trim() === '') throw invalidInput('ticket id must not be empty');
    if (typeof input.taskId !== 'string' || input.taskId.trim() === '') throw invalidInput('task id must not be empty');
    const state = checkServerState(input.serverState);
    const existing = this.get(input.ticketId);
    if (existing) {
      if (existing.taskId !== input.taskId)
        throw invalidInput(`ticket ${input.ticketId} belongs to task ${existing.taskId}, not ${input.taskId}`);
      return { ticket: existing, inserted: false };
    }
    const ordinal = Number(this.db.scalar('SELECT COALESCE(MAX(ordinal), 0) + 1 FROM off_peak_tickets WHERE task_id = ?', [input.taskId]));
    const takenAt = input.takenAt ?? this.now;
    this.db.run(
      `INSERT INTO off_peak_tickets (ticket_id, task_id, ordinal, origin, server_state, queue_position, taken_at,
         ready_at, next_poll_at, last_status_at, settle_state, settle_attempts, created_at, updated_at)
       VALUES (?, ?, ?, 'take', ?, ?, ?, ?, ?, ?, 'none', 0, ?, ?)`,
      [
        input.ticketId,
        input.taskId,
        ordinal,
        state,
        input.queuePosition ?? null,
        takenAt,
        state === 'ready' ? takenAt : null,
        input.nextPollAt ?? null,
        takenAt,
        this.now,
        this.now,
      ],
    );
    return { ticket: this.get(input.ticketId)!, inserted: true };
  }

  get(ticketId: string): TicketRecord | undefined {
    const row = this.db.get('SELECT * FROM off_peak_tickets WHERE ticket_id = ?', [ticketId]);
    return row ? ticketFromRow(row) : undefined;
  }

  /** A task's tickets in take order (the legacy backfill, ordinal 0, first). */
  forTask(taskId: string): TicketRecord[] {
    return this.list({ taskId });
  }

  list(filter: TicketFilter = {}): TicketRecord[] {
    const where: string[] = [];
    const params: SqlParam[] = [];
    if (filter.taskId !== undefined) {
      where.push('task_id = ?');
      params.push(filter.taskId);
    }
    if (filter.settleState !== undefined) {
      const states = asList(filter.settleState);
      for (const s of states) if (!SETTLE_STATES.includes(s)) throw invalidInput(`unknown settle state ${JSON.stringify(s)}`);
      if (states.length === 0) return [];
      where.push(`settle_state IN (${placeholders(states.length)})`);
      params.push(...states);
    }
    if (filter.serverState !== undefined) {
      const states = asList(filter.serverState);
      states.forEach(checkServerState);
      if (states.length === 0) return [];
      where.push(`server_state IN (${placeholders(states.length)})`);
      params.push(...states);
    }
    return this.db.all(...listQuery('off_peak_tickets', where, params, 'task_id, ordinal, taken_at', filter.limit)).map(ticketFromRow);
  }

  /**
   * Records a status answer. First-seen times are kept (ready_at, active_at); nothing changes a
   * ticket the gateway already settled, and a settled/abandoned outbox row keeps its settle state.
   */
  updateServerState(ticketId: string, patch: TicketStatePatch): boolean {
    const state = checkServerState(patch.serverState);
    const optional = assignmentsOf(patch, {
      queuePosition: 'queue_position',
      readyDeadline: 'ready_deadline',
      expiresAt: 'expires_at',
      nextPollAt: 'next_poll_at',
      lastError: 'last_error',
    });
    const sets = [
      'server_state = ?',
      'last_status_at = ?',
      "ready_at = CASE WHEN ? IN ('ready', 'active') THEN COALESCE(ready_at, ?) ELSE ready_at END",
      "active_at = CASE WHEN ? = 'active' THEN COALESCE(active_at, ?) ELSE active_at END",
      ...optional.sets,
      'updated_at = ?',
    ];
    const params: SqlParam[] = [state, this.now, state, this.now, state, this.now, ...optional.params, this.now];
    return (
      this.db.run(`UPDATE off_peak_tickets SET ${sets.join(', ')} WHERE ticket_id = ? AND server_state <> 'settled'`, [
        ...params,
        ticketId,
      ]) === 1
    );
  }

  /**
   * The runner started a segment on this ticket (the agent was launched). First start time wins.
   * A segment that was only interrupted (a reload, a crash) goes on when the task resumes on the
   * same live ticket: it is open again, so its real end (completed, expired...) is what it records.
   */
  startSegment(ticketId: string): boolean {
    return (
      this.db.run(
        `UPDATE off_peak_tickets SET segment_started_at = COALESCE(segment_started_at, ?), segment_ended_at = NULL, end_reason = NULL,
           gateway_unreachable_since = NULL, updated_at = ?
         WHERE ticket_id = ? AND (segment_ended_at IS NULL OR end_reason = 'interrupted')`,
        [this.now, this.now, ticketId],
      ) === 1
    );
  }

  /**
   * The gateway admitted the first model request of the segment: from now on the card may say
   * "running" rather than "waiting for admission" (docs/flows.md#segments). First time wins.
   */
  markAdmitted(ticketId: string, at: number = this.now): boolean {
    return (
      this.db.run(
        `UPDATE off_peak_tickets SET active_at = COALESCE(active_at, ?),
           server_state = CASE WHEN server_state IN ('queued', 'ready') THEN 'active' ELSE server_state END, updated_at = ?
         WHERE ticket_id = ?`,
        [at, this.now, ticketId],
      ) === 1
    );
  }

  /**
   * The segment's proxy cannot reach the gateway since `since` (its requests are held), or can
   * again (null). Only an open segment; written only when it changes.
   */
  markGatewayUnreachable(ticketId: string, since: number | null): boolean {
    return (
      this.db.run(
        `UPDATE off_peak_tickets SET gateway_unreachable_since = ?, updated_at = ?
         WHERE ticket_id = ? AND segment_started_at IS NOT NULL AND segment_ended_at IS NULL AND gateway_unreachable_since IS NOT ?`,
        [since, this.now, ticketId, since],
      ) === 1
    );
  }

  /** The account's usage limit holds the segment's requests until `resetAt` (null: it lifted); written only when it changes. */
  markUsageLimit(ticketId: string, resetAt: number | null): boolean {
    return (
      this.db.run(
        `UPDATE off_peak_tickets SET usage_limit_reset_at = ?, updated_at = ? WHERE ticket_id = ? AND usage_limit_reset_at IS NOT ?`,
        [resetAt, this.now, ticketId, resetAt],
      ) === 1
    );
  }

  /**
   * Adds what model answers of the segment used (the runtime sums them between writes): token
   * counts and answers are added, the models merged in the order first seen. False when the
   * ticket is unknown or the usage is not a set of counts.
   */
  addUsage(ticketId: string, added: SegmentUsage): boolean {
    const counts = [added.inputTokens, added.outputTokens, added.cacheReadTokens, added.cacheWriteTokens, added.requests];
    if (!counts.every((n) => Number.isSafeInteger(n) && n >= 0)) throw invalidInput('token usage must be non-negative integers');
    const current = this.get(ticketId);
    if (!current) return false;
    const amounts = [added.costUsd, added.windowShare?.fiveHour, added.windowShare?.sevenDay];
    if (!amounts.every((n) => n === undefined || (Number.isFinite(n) && n >= 0)))
      throw invalidInput('cost and window share must be non-negative');
    const { model } = addSegmentUsage(current.usage, added);
    // An amount stays NULL until some answer reports one (docs/flows.md#capacity-and-cost).
    const plus = (column: string) => `${column} = CASE WHEN ? IS NULL THEN ${column} ELSE COALESCE(${column}, 0) + ? END`;
    const pairs = amounts.flatMap((n) => [n ?? null, n ?? null]);
    const r = added.account;
    if (r)
      this.db.run(
        `UPDATE off_peak_tickets SET account_read_at = ?, account_u5h = ?, account_u7d = ?, account_reset_5h = ?, account_reset_7d = ?
         WHERE ticket_id = ? AND (account_read_at IS NULL OR account_read_at <= ?)`,
        [r.at, r.utilization5h, r.utilization7d, r.reset5hAt, r.reset7dAt, ticketId, r.at],
      );
    return (
      this.db.run(
        `UPDATE off_peak_tickets SET usage_model = ?, usage_input_tokens = COALESCE(usage_input_tokens, 0) + ?,
           usage_output_tokens = COALESCE(usage_output_tokens, 0) + ?, usage_cache_read_tokens = COALESCE(usage_cache_read_tokens, 0) + ?,
           usage_cache_write_tokens = COALESCE(usage_cache_write_tokens, 0) + ?, usage_requests = COALESCE(usage_requests, 0) + ?,
           ${plus('usage_cost_usd')}, ${plus('usage_share_5h')}, ${plus('usage_share_7d')}, updated_at = ?
         WHERE ticket_id = ?`,
        [model, ...counts, ...pairs, this.now, ticketId],
      ) === 1
    );
  }

  /** Ends the segment on this ticket (once): why, and the error if any. */
  endSegment(ticketId: string, reason: SegmentEndReason, error?: string | null): boolean {
    return (
      this.db.run(
        `UPDATE off_peak_tickets SET segment_ended_at = ?, end_reason = ?, last_error = COALESCE(?, last_error), gateway_unreachable_since = NULL, updated_at = ?
         WHERE ticket_id = ? AND end_reason IS NULL`,
        [this.now, reason, error ?? null, this.now, ticketId],
      ) === 1
    );
  }

  /**
   * Takes back a ticket that was given up (settle requested or done, segment ended) because the
   * gateway, the admission truth, hands it back live: settle and end fields cleared, state set.
   */
  revive(ticketId: string, serverState: ServerTicketState): boolean {
    if (!SERVER_TICKET_STATES.includes(serverState)) throw invalidInput(`unknown server state ${serverState}`);
    return (
      this.db.run(
        `UPDATE off_peak_tickets SET settle_state = 'none', settle_reason = NULL, next_settle_at = NULL, settled_at = NULL,
           server_state = ?, end_reason = NULL, segment_ended_at = NULL, updated_at = ?
         WHERE ticket_id = ?`,
        [serverState, this.now, ticketId],
      ) === 1
    );
  }

  /** Puts the ticket in the settle outbox (terminal task, retake, delete, orphan take). */
  requestSettle(ticketId: string, reason: string): boolean {
    return (
      this.db.run(
        `UPDATE off_peak_tickets SET settle_state = 'pending', settle_reason = ?, next_settle_at = ?, updated_at = ?
         WHERE ticket_id = ? AND settle_state = 'none'`,
        [reason, this.now, this.now, ticketId],
      ) === 1
    );
  }

  /** Outbox rows due now, oldest first (at most `limit`, default 100: one batch). */
  pendingSettles(limit = 100): TicketRecord[] {
    return this.db
      .all(
        `SELECT * FROM off_peak_tickets WHERE settle_state = 'pending' AND (next_settle_at IS NULL OR next_settle_at <= ?)
         ORDER BY COALESCE(next_settle_at, 0), ticket_id LIMIT ?`,
        [this.now, limit],
      )
      .map(ticketFromRow);
  }

  /** A settle attempt failed (network/5xx): keep it pending and try again at `nextAttemptAt`. */
  recordSettleFailure(ticketId: string, error: string, nextAttemptAt: number): boolean {
    return (
      this.db.run(
        `UPDATE off_peak_tickets SET settle_attempts = settle_attempts + 1, last_error = ?, next_settle_at = ?, updated_at = ?
         WHERE ticket_id = ? AND settle_state = 'pending'`,
        [error, nextAttemptAt, this.now, ticketId],
      ) === 1
    );
  }

  /** The gateway acknowledged the settle (2xx, or an idempotent 4xx ack). */
  markSettled(ticketId: string): boolean {
    return (
      this.db.run(
        `UPDATE off_peak_tickets SET settle_state = 'settled', server_state = 'settled', settled_at = COALESCE(settled_at, ?),
           settle_attempts = settle_attempts + 1, next_settle_at = NULL, updated_at = ?
         WHERE ticket_id = ? AND settle_state IN ('none', 'pending')`,
        [this.now, this.now, ticketId],
      ) === 1
    );
  }

  /**
   * Deletes a task's tickets that need nothing more (settled or abandoned): what is left of a
   * deleted task once its settles are done. Returns how many went.
   */
  deleteFinished(taskId: string): number {
    return this.db.run(`DELETE FROM off_peak_tickets WHERE task_id = ? AND settle_state IN ('settled', 'abandoned')`, [taskId]);
  }

  /** Gives up settling explicitly (kept for audit, never retried). */
  abandonSettle(ticketId: string, reason: string): boolean {
    return (
      this.db.run(
        `UPDATE off_peak_tickets SET settle_state = 'abandoned', settle_reason = ?, next_settle_at = NULL, updated_at = ?
         WHERE ticket_id = ? AND settle_state IN ('none', 'pending')`,
        [reason, this.now, ticketId],
      ) === 1
    );
  }

  /** Tickets worth polling: not settled locally and not known dead on the server. */
  live(limit = 100): TicketRecord[] {
    return this.db
      .all(
        `SELECT * FROM off_peak_tickets WHERE settle_state = 'none' AND server_state IN ('queued', 'ready', 'active')
         ORDER BY COALESCE(next_poll_at, 0), ticket_id LIMIT ?`,
        [limit],
      )
      .map(ticketFromRow);
  }
}
