// Fuzz: 10,000+ malformed or hostile gateway answers fed straight into the client's parsing (an
// injected fetch, for speed). Each must end in either a protocol-valid result or a GatewayError
// with a known kind and a readable message: never another exception, never a hang.
// The end-to-end variant (through the fault proxy, the real gateway and the service, checking the
// rows) is in test/integration/service-fuzz.test.ts.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ManualClock } from '../../src/core/clock';
import { GatewayClient, GatewayError } from '../../src/gateway-client/client';
import type { GatewayErrorKind } from '../../src/gateway-client/errors';
import type { FetchLike } from '../../src/gateway-client/transport';
import { hostileAnswer, type HostileAnswer } from '../fixtures/hostile-answers';

const KINDS: readonly GatewayErrorKind[] = [
  'no_api_key',
  'not_eligible',
  'ticket_invalid',
  'limit_reached',
  'no_capacity',
  'unauthorized',
  'rejected',
  'server_error',
  'network',
  'timeout',
  'aborted',
  'bad_response',
];

const endpoints = ['take', 'status', 'availability', 'settle', 'configs'] as const;

describe('gateway client fuzz', function () {
  this.timeout(240_000);

  it('10,000 hostile answers: every one parses or fails with a clear GatewayError', async () => {
    let current: HostileAnswer | undefined;
    const fetch: FetchLike = async () => {
      const a = current!;
      if (a.kind === 'reset')
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
      return new Response(a.body, { status: a.status, headers: a.headers });
    };
    const client = new GatewayClient({
      baseUrl: 'http://gateway.test',
      apiKey: () => 'k',
      clock: new ManualClock(1_800_000_000_000),
      fetch,
    });
    const tally = new Map<string, number>();
    let runs = 0;

    await fc.assert(
      fc.asyncProperty(hostileAnswer(), fc.constantFrom(...endpoints), async (answer, endpoint) => {
        runs++;
        current = answer;
        let outcome: string;
        try {
          switch (endpoint) {
            case 'take': {
              const t = await client.take('task-fuzz');
              assert.equal(typeof t.ticketId, 'string');
              assert.equal(t.taskId, 'task-fuzz');
              break;
            }
            case 'status': {
              const s = await client.status(['t-1', 't-2']);
              assert.deepEqual(new Set(s.tickets.map((x) => x.ticket_id)), new Set(['t-1', 't-2']));
              break;
            }
            case 'availability': {
              const a = await client.availability();
              assert.equal(typeof a.canTake, 'boolean');
              break;
            }
            case 'settle': {
              const s = await client.settle('t-1', 'completed');
              assert.equal(s.ticket_id, 't-1');
              break;
            }
            case 'configs':
              await client.configs();
              break;
          }
          outcome = 'ok';
        } catch (e) {
          if (!(e instanceof GatewayError)) throw new Error(`non-GatewayError escaped for ${endpoint}: ${String(e)}`);
          assert.ok(KINDS.includes(e.kind));
          assert.ok(e.message.startsWith(`Gateway ${endpoint}: `), e.message);
          assert.ok(e.message.length < 800, 'message stays readable');
          if (answer.status >= 500) assert.equal(e.kind, 'server_error');
          outcome = e.kind;
        }
        tally.set(outcome, (tally.get(outcome) ?? 0) + 1);
      }),
      { numRuns: 10_000, seed: 20261129 },
    );
    assert.equal(runs, 10_000);
    // the generator must really reach the interesting outcomes, not just one of them
    for (const kind of ['bad_response', 'server_error', 'rejected', 'network', 'ok']) {
      assert.ok((tally.get(kind) ?? 0) > 0, `outcome ${kind} reached: ${JSON.stringify([...tally])}`);
    }
  });
});
