import assert from 'node:assert/strict';
import {
  BusinessCode,
  GatewayErrorSchema,
  GatewayPaths,
  MAX_STATUS_IDS,
  StatusRequestSchema,
  StatusResponseSchema,
  TakeResponseSchema,
  isTicketInvalidCode,
  readErrorCode,
} from '../../src/protocol/gateway';

describe('gateway protocol schemas', () => {
  it('accepts 1..100 ticket ids and rejects zero or 101', () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);
    assert.equal(StatusRequestSchema.safeParse({ ticket_ids: ids(1) }).success, true);
    assert.equal(StatusRequestSchema.safeParse({ ticket_ids: ids(MAX_STATUS_IDS) }).success, true);
    assert.equal(StatusRequestSchema.safeParse({ ticket_ids: ids(MAX_STATUS_IDS + 1) }).success, false);
    assert.equal(StatusRequestSchema.safeParse({ ticket_ids: [] }).success, false);
    assert.equal(StatusRequestSchema.safeParse({ ticket_ids: ['a'], wait_ms: -1 }).success, false);
  });

  it('parses every per-ticket state of a status answer', () => {
    const answer = {
      server_time: 10,
      next_poll_after_ms: 1000,
      tickets: [
        { ticket_id: 'a', task_id: 'x', state: 'queued', position: 1, taken_at: 1, next_poll_after_ms: 1000 },
        { ticket_id: 'b', task_id: 'x', state: 'ready', taken_at: 1, ready_at: 2, ready_deadline: 3, next_poll_after_ms: 1000 },
        {
          ticket_id: 'c',
          task_id: 'x',
          state: 'active',
          taken_at: 1,
          ready_at: 2,
          active_at: 3,
          active_until: 4,
          next_poll_after_ms: 1000,
        },
        { ticket_id: 'd', task_id: 'x', state: 'expired', taken_at: 1, expired_at: 5, expired_from: 'ready', next_poll_after_ms: null },
        { ticket_id: 'e', task_id: 'x', state: 'settled', taken_at: 1, settled_at: 5, reason: 'completed', next_poll_after_ms: null },
        { ticket_id: 'f', state: 'not_found', next_poll_after_ms: null },
      ],
    };
    const parsed = StatusResponseSchema.parse(answer);
    assert.deepEqual(
      parsed.tickets.map((t) => t.state),
      ['queued', 'ready', 'active', 'expired', 'settled', 'not_found'],
    );
    assert.equal(
      StatusResponseSchema.safeParse({
        ...answer,
        tickets: [{ ticket_id: 'a', task_id: 'x', state: 'queued', taken_at: 1, next_poll_after_ms: 1 }],
      }).success,
      false,
      'queued needs a position',
    );
  });

  it('a take answer is only ever a live state', () => {
    const take = {
      server_time: 1,
      ticket_id: 't',
      task_id: 'x',
      state: 'queued',
      position: 3,
      ready_deadline: null,
      active_until: null,
      next_poll_after_ms: 5000,
      reused: false,
    };
    assert.equal(TakeResponseSchema.safeParse(take).success, true);
    assert.equal(TakeResponseSchema.safeParse({ ...take, state: 'expired' }).success, false);
  });

  it('reads business codes from ours, legacy numeric and bare bodies', () => {
    const ours = { type: 'error', error: { type: 'invalid_request_error', code: '3102', message: 'expired' }, server_time: 1 };
    assert.equal(GatewayErrorSchema.parse(ours).error.code, BusinessCode.TicketInvalid);
    assert.equal(readErrorCode(ours), '3102');
    assert.equal(readErrorCode(JSON.stringify({ error: { code: 3001 } })), '3001');
    assert.equal(readErrorCode({ code: '3105' }), '3105');
    assert.equal(readErrorCode({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }), undefined);
    assert.equal(readErrorCode('not json'), undefined);
    assert.equal(isTicketInvalidCode('3001'), true);
    assert.equal(isTicketInvalidCode(3102), true);
    assert.equal(isTicketInvalidCode('3105'), false);
  });

  it('encodes ticket ids into the settle path', () => {
    assert.equal(GatewayPaths.settle('a/b c'), '/api/v1/off-peak/ticket/a%2Fb%20c/settle');
  });
});
