// The tickets table as both SQL stores (SQLite, MySQL) lay it out: the column of each ticket field,
// the row a driver hands back, its conversion to the store's ticket row, and the UPDATE of a patch.
import type { TicketState } from '../../protocol/gateway';
import type { GatewayTicketRow, TicketPatch } from './store';

/** The SQL column of each ticket field, in the tables' column order. */
export const TICKET_COLUMN_OF = {
  ticketId: 'ticket_id',
  seq: 'seq',
  userId: 'user_id',
  taskId: 'task_id',
  state: 'state',
  takenAt: 'taken_at',
  readyAt: 'ready_at',
  readyDeadline: 'ready_deadline',
  activeAt: 'active_at',
  activeUntil: 'active_until',
  expiredAt: 'expired_at',
  expiredFrom: 'expired_from',
  settledAt: 'settled_at',
  settleReason: 'settle_reason',
  settledFrom: 'settled_from',
} as const satisfies Record<keyof GatewayTicketRow, string>;

type NumbersAs<T, N> = T extends number ? N : T;

/** A tickets row as its driver returns it: each field under its column, numbers as `N` (mysql2 may return BIGINTs as strings). */
export type SqlTicketRow<N = number> = {
  [K in keyof GatewayTicketRow as (typeof TICKET_COLUMN_OF)[K]]: NumbersAs<GatewayTicketRow[K], N>;
};

function num(value: number | string | null): number | null {
  return value === null ? null : Number(value);
}

/** The store's ticket row of a tickets row. */
export function fromRow(row: SqlTicketRow<number | string>): GatewayTicketRow {
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

/**
 * The UPDATE behind `TicketStore.update`: `patch`'s defined fields, and `alsoSet` (assignments
 * without parameters), written on the ticket only while its state is one of `fromStates`.
 */
export function ticketUpdate(
  ticketId: string,
  fromStates: readonly TicketState[],
  patch: TicketPatch,
  alsoSet: readonly string[] = [],
): { sql: string; params: (string | number | null)[] } {
  const fields = (Object.keys(patch) as (keyof TicketPatch)[]).filter((k) => patch[k] !== undefined);
  const sets = [...fields.map((k) => `${TICKET_COLUMN_OF[k]} = ?`), ...alsoSet].join(', ');
  return {
    sql: `UPDATE tickets SET ${sets} WHERE ticket_id = ? AND state IN (${fromStates.map(() => '?').join(',')})`,
    params: [...fields.map((k) => patch[k] as string | number | null), ticketId, ...fromStates],
  };
}
