// The tickets table as both SQL stores lay it out (src/gateway/stores/sql-tickets.ts): the UPDATE of
// a patch, the columns MySQL reads and a row read back, as each store wrote them on its own before.
import assert from 'node:assert/strict';
import { fromRow, ticketUpdate } from '../../src/gateway/stores/sql-tickets';
import { TICKET_COLUMNS } from '../../src/gateway/stores/mysql-tickets';

describe('gateway SQL tickets: one layout for SQLite and MySQL', () => {
  it('writes the defined fields of a patch while the ticket is in one of the states', () => {
    assert.deepEqual(ticketUpdate('t1', ['queued'], { state: 'ready', readyAt: 5, readyDeadline: 9, activeAt: undefined }), {
      sql: 'UPDATE tickets SET state = ?, ready_at = ?, ready_deadline = ? WHERE ticket_id = ? AND state IN (?)',
      params: ['ready', 5, 9, 't1', 'queued'],
    });
    assert.deepEqual(
      ticketUpdate('t2', ['ready', 'active'], { state: 'settled', settledAt: 7, settleReason: 'completed', expiredFrom: null }, [
        'live_key = NULL',
      ]),
      {
        sql: 'UPDATE tickets SET state = ?, settled_at = ?, settle_reason = ?, expired_from = ?, live_key = NULL WHERE ticket_id = ? AND state IN (?,?)',
        params: ['settled', 7, 'completed', null, 't2', 'ready', 'active'],
      },
    );
  });

  it('reads the same columns in the same order, and rows back with numbers as numbers', () => {
    assert.equal(
      TICKET_COLUMNS,
      'ticket_id, seq, user_id, task_id, state, taken_at, ready_at, ready_deadline, active_at, active_until, expired_at, expired_from, settled_at, settle_reason, settled_from',
    );
    const row = {
      ticket_id: 't1',
      seq: '12',
      user_id: 'u',
      task_id: 'k',
      state: 'expired',
      taken_at: 100,
      ready_at: '200',
      ready_deadline: 300,
      active_at: null,
      active_until: null,
      expired_at: '300',
      expired_from: 'ready',
      settled_at: null,
      settle_reason: null,
      settled_from: null,
    } as const;
    assert.deepEqual(fromRow(row), {
      ticketId: 't1',
      seq: 12,
      userId: 'u',
      taskId: 'k',
      state: 'expired',
      takenAt: 100,
      readyAt: 200,
      readyDeadline: 300,
      activeAt: null,
      activeUntil: null,
      expiredAt: 300,
      expiredFrom: 'ready',
      settledAt: null,
      settleReason: null,
      settledFrom: null,
    });
  });
});
