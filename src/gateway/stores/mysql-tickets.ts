// The MySQL tickets table's rows: the columns read, their conversion to the store's ticket rows
// (mysql2 may hand BIGINTs back as strings), and the live key that makes a take retry-safe.
import { createHash } from 'node:crypto';
import type { SettleReason, TicketState } from '../../protocol/gateway';
import type { GatewayTicketRow } from './store';

export interface TicketRow {
  ticket_id: string;
  seq: number | string;
  user_id: string;
  task_id: string;
  state: TicketState;
  taken_at: number | string;
  ready_at: number | string | null;
  ready_deadline: number | string | null;
  active_at: number | string | null;
  active_until: number | string | null;
  expired_at: number | string | null;
  expired_from: 'ready' | 'active' | null;
  settled_at: number | string | null;
  settle_reason: SettleReason | null;
  settled_from: 'queued' | 'ready' | 'active' | 'expired' | null;
}

export const TICKET_COLUMNS =
  'ticket_id, seq, user_id, task_id, state, taken_at, ready_at, ready_deadline, active_at, active_until, expired_at, expired_from, settled_at, settle_reason, settled_from';

function num(value: number | string | null): number | null {
  return value === null ? null : Number(value);
}

export function fromRow(row: TicketRow): GatewayTicketRow {
  return {
    ticketId: row.ticket_id,
    seq: Number(row.seq),
    userId: row.user_id,
    taskId: row.task_id,
    state: row.state,
    takenAt: Number(row.taken_at),
    readyAt: num(row.ready_at),
    readyDeadline: num(row.ready_deadline),
    activeAt: num(row.active_at),
    activeUntil: num(row.active_until),
    expiredAt: num(row.expired_at),
    expiredFrom: row.expired_from,
    settledAt: num(row.settled_at),
    settleReason: row.settle_reason,
    settledFrom: row.settled_from,
  };
}

/** The unique key of a live (user, task): fixed width whatever the ids' lengths. */
export function liveKey(userId: string, taskId: string): string {
  return createHash('sha256').update(`${userId}\u0000${taskId}`).digest('hex');
}
