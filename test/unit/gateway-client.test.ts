// Gateway client parsing and error mapping, fed canned HTTP answers through an injected fetch so
// every gateway answer shape (and the ways it can go wrong) is checked quickly and exactly.
// The same client against the real gateway is exercised in test/integration/service*.test.ts.
import assert from 'node:assert/strict';
import net from 'node:net';
import { ManualClock } from '../../src/core/clock';
import { GatewayClient, GatewayError } from '../../src/gateway-client/client';
import type { FetchLike } from '../../src/gateway-client/transport';

const NOW = 1_800_000_000_000;

interface Canned {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

function clientAnswering(
  answer: Canned | ((url: string, init?: RequestInit) => Canned | Promise<Canned>),
  opts: { key?: string | undefined; skew?: number } = {},
) {
  const clock = new ManualClock(NOW);
  const calls: { url: string; method: string; body: unknown; auth: string | null }[] = [];
  const fetch: FetchLike = async (input, init) => {
    const request = input instanceof Request ? input : new Request(String(input), init);
    const text = await request.text();
    calls.push({
      url: request.url,
      method: request.method,
      body: text ? JSON.parse(text) : undefined,
      auth: request.headers.get('authorization'),
    });
    const a = typeof answer === 'function' ? await answer(request.url, init) : answer;
    return new Response(a.body, { status: a.status, headers: { 'content-type': 'application/json', ...a.headers } });
  };
  const client = new GatewayClient({
    baseUrl: 'http://gateway.test/',
    apiKey: () => ('key' in opts ? opts.key : 'sk-test'),
    clock,
    fetch,
    timeouts: { readMs: 200, takeMs: 200, statusMs: 200, settleMs: 200 },
  });
  return { client, clock, calls };
}

const errorBody = (code: string, extra: Record<string, unknown> = {}, serverTime = NOW) =>
  JSON.stringify({
    type: 'error',
    error: { type: 'invalid_request_error', code, message: `m-${code}`, ...extra },
    server_time: serverTime,
  });

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

async function failure(p: Promise<unknown>): Promise<GatewayError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof GatewayError, `expected GatewayError, got ${String(e)}`);
    assert.ok(e.message.length > 10, 'message says something');
    return e;
  }
  assert.fail('expected the call to fail');
}

const takeAnswer = (o: Record<string, unknown> = {}) =>
  JSON.stringify({
    server_time: NOW,
    ticket_id: 't-1',
    task_id: 'task-1',
    state: 'queued',
    position: 3,
    ready_deadline: null,
    active_until: null,
    next_poll_after_ms: 5000,
    reused: false,
    ...o,
  });

describe('gateway client: answers and error mapping', () => {
  it('sends the caller key as a Bearer token and parses a take', async () => {
    const { client, calls } = clientAnswering({ status: 200, body: takeAnswer() });
    const t = await client.take('task-1');
    assert.equal(t.ticketId, 't-1');
    assert.equal(t.position, 3);
    assert.equal(calls[0].auth, 'Bearer sk-test');
    assert.equal(calls[0].url, 'http://gateway.test/api/v1/off-peak/ticket');
    assert.deepEqual(calls[0].body, { task_id: 'task-1' });
  });

  it('no key: no_api_key and nothing is sent', async () => {
    const { client, calls } = clientAnswering({ status: 200, body: takeAnswer() }, { key: undefined });
    const e = await failure(client.take('task-1'));
    assert.equal(e.kind, 'no_api_key');
    assert.equal(calls.length, 0);
  });

  const codes: [string, number, string][] = [
    ['3101', 403, 'not_eligible'],
    ['unauthorized', 401, 'unauthorized'],
    ['3101', 400, 'not_eligible'],
    ['3102', 400, 'ticket_invalid'],
    ['3001', 400, 'ticket_invalid'],
    ['3103', 429, 'limit_reached'],
    ['3105', 429, 'no_capacity'],
    ['invalid_request', 400, 'rejected'],
    ['internal', 500, 'server_error'],
    ['3103', 503, 'server_error'],
  ];
  for (const [code, status, kind] of codes) {
    it(`HTTP ${status} code ${code} -> ${kind}`, async () => {
      const { client } = clientAnswering({ status, body: errorBody(code) });
      const e = await failure(client.take('task-1'));
      assert.equal(e.kind, kind);
      assert.equal(e.status, status);
      assert.equal(e.code, code);
    });
  }

  it('3103 carries next_take_at converted to the local clock', async () => {
    // the server clock runs 60 s ahead of ours
    const { client } = clientAnswering({ status: 429, body: errorBody('3103', { next_take_at: NOW + 60_000 + 5_000 }, NOW + 60_000) });
    const e = await failure(client.take('task-1'));
    assert.equal(e.kind, 'limit_reached');
    assert.equal(e.nextTakeAt, NOW + 5_000);
  });

  it('3105 carries Retry-After in ms', async () => {
    const { client } = clientAnswering({ status: 429, body: errorBody('3105'), headers: { 'retry-after': '7' } });
    const e = await failure(client.take('task-1'));
    assert.equal(e.retryAfterMs, 7000);
    assert.equal(e.retryable, true);
  });

  it('a 5xx with an HTML body is a server_error quoting the body', async () => {
    const { client } = clientAnswering({ status: 502, body: '<html>Bad Gateway</html>' });
    const e = await failure(client.availability());
    assert.equal(e.kind, 'server_error');
    assert.match(e.message, /Bad Gateway/);
    assert.equal(e.retryable, true);
  });

  it('a 200 that is not JSON is bad_response', async () => {
    const { client } = clientAnswering({ status: 200, body: '{"server_time": 1, ' });
    const e = await failure(client.availability());
    assert.equal(e.kind, 'bad_response');
    assert.match(e.message, /not JSON/);
  });

  it('a 200 with the wrong shape names the field', async () => {
    const { client } = clientAnswering({
      status: 200,
      body: JSON.stringify({ server_time: NOW, can_take: 'yes', can_take_number: 1, next_take_at: null, reason: null }),
    });
    const e = await failure(client.availability());
    assert.equal(e.kind, 'bad_response');
    assert.match(e.message, /can_take/);
  });

  it('a take answer for another task is refused', async () => {
    const { client } = clientAnswering({ status: 200, body: takeAnswer({ task_id: 'someone-else' }) });
    const e = await failure(client.take('task-1'));
    assert.equal(e.kind, 'bad_response');
  });

  it('accepts abnormal take states so the service can repair them', async () => {
    for (const state of ['active', 'expired', 'settled', 'not_found']) {
      const { client } = clientAnswering({ status: 200, body: takeAnswer({ state, position: null }) });
      assert.equal((await client.take('task-1')).state, state);
    }
  });

  it('status answers must cover exactly the tickets asked for', async () => {
    const entry = (id: string) => ({ ticket_id: id, state: 'not_found', next_poll_after_ms: null });
    const answer = (tickets: unknown[]) => ({ status: 200, body: JSON.stringify({ server_time: NOW, tickets, next_poll_after_ms: null }) });
    assert.equal((await clientAnswering(answer([entry('a'), entry('b')])).client.status(['a', 'b'])).tickets.length, 2);
    assert.equal((await failure(clientAnswering(answer([entry('a')])).client.status(['a', 'b']))).kind, 'bad_response');
    assert.equal((await failure(clientAnswering(answer([entry('a'), entry('a')])).client.status(['a', 'b']))).kind, 'bad_response');
    assert.equal((await failure(clientAnswering(answer([entry('a'), entry('x')])).client.status(['a', 'b']))).kind, 'bad_response');
  });

  it('status with wait_ms sends it and allows for it in the timeout', async () => {
    const { client, calls } = clientAnswering(async () => {
      await new Promise((r) => setTimeout(r, 300)); // longer than statusMs alone
      return {
        status: 200,
        body: JSON.stringify({
          server_time: NOW,
          tickets: [{ ticket_id: 'a', state: 'not_found', next_poll_after_ms: null }],
          next_poll_after_ms: null,
        }),
      };
    });
    await client.status(['a'], { waitMs: 400 });
    assert.deepEqual(calls[0].body, { ticket_ids: ['a'], wait_ms: 400 });
  });

  it('a call that never answers times out with kind timeout', async () => {
    const { client } = clientAnswering(() => new Promise<Canned>(() => {}));
    const e = await failure(client.settle('t-1', 'completed'));
    assert.equal(e.kind, 'timeout');
  });

  it('a refused connection is kind network', async () => {
    const port = await closedPort();
    const client = new GatewayClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: () => 'k',
      clock: new ManualClock(NOW),
      timeouts: { settleMs: 2000 },
    });
    const e = await failure(client.settle('t-1', 'completed'));
    assert.equal(e.kind, 'network');
    assert.match(e.message, /ECONNREFUSED|fetch failed/);
  });

  it('tracks server clock skew from server_time', async () => {
    const { client } = clientAnswering({
      status: 200,
      body: JSON.stringify({
        server_time: NOW - 30_000,
        can_take: false,
        can_take_number: 0,
        next_take_at: NOW - 30_000 + 90_000,
        reason: 'quota',
      }),
    });
    const a = await client.availability();
    assert.equal(client.serverClock.skewMs, -30_000);
    assert.equal(a.nextTakeAt, NOW + 90_000);
    assert.equal(client.serverClock.serverNow(), NOW - 30_000);
  });

  it('a long-poll answer (stamped when the server answered, seconds after the request) does not move the skew estimate; a plain status does', async () => {
    const { client, clock } = clientAnswering(async () => {
      clock.advance(10_000); // the long-poll waited 10 s; the server and this machine agree on the time
      return {
        status: 200,
        body: JSON.stringify({
          server_time: clock.now(),
          tickets: [{ ticket_id: 'a', state: 'not_found', next_poll_after_ms: null }],
          next_poll_after_ms: null,
        }),
      };
    });
    await client.status(['a'], { waitMs: 10_000 });
    assert.equal(client.serverClock.skewMs, 0, 'the midpoint of a long-poll would have said +5 s');
    await client.status(['a']);
    assert.equal(client.serverClock.skewMs, 5_000, 'a plain answer is a sample (here it took 10 s, so its midpoint is 5 s off)');
  });
});
