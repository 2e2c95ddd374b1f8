import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { TicketProxy } from '../../src/agent/proxy/ticket-proxy';
import type { TicketProxyEvent, TicketProxyOptions } from '../../src/agent/proxy/ticket-proxy-types';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';

describe('local ticket proxy', () => {
  let upstream: FakeAnthropicUpstream;
  let proxy: TicketProxy;
  let events: TicketProxyEvent[];

  async function startProxy(options: { holdDefaultMs?: number; holdMaxMs?: number } = {}): Promise<void> {
    events = [];
    proxy = await TicketProxy.start({
      upstreamBaseUrl: `${upstream.url}/api/anthropic`,
      apiKey: 'user-secret-key',
      ticketId: 'T-1',
      holdDefaultMs: options.holdDefaultMs ?? 40,
      holdMaxMs: options.holdMaxMs ?? 60,
      onEvent: (e) => events.push(e),
    });
  }

  const post = (
    body: unknown = { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
    path = '/v1/messages?beta=true',
    signal?: AbortSignal,
  ) =>
    fetch(proxy.baseUrl + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer agent-dummy', 'x-api-key': 'agent-dummy' },
      body: JSON.stringify(body),
      signal,
    });

  beforeEach(async () => {
    upstream = await FakeAnthropicUpstream.start();
    await startProxy();
  });
  afterEach(async () => {
    await proxy.close();
    await upstream.close();
  });

  it('adds the user key and the ticket header, strips the agent credentials, keeps the path and query', async () => {
    const res = await post();
    assert.equal(res.status, 200);
    await res.text();
    const seen = upstream.messageRequests()[0];
    assert.equal(seen.url, '/api/anthropic/v1/messages?beta=true');
    assert.equal(seen.headers.authorization, 'Bearer user-secret-key');
    assert.equal(seen.headers['x-off-peak-ticket-id'], 'T-1');
    assert.equal(seen.headers['x-api-key'], undefined);
    assert.doesNotMatch(proxy.baseUrl, /user-secret-key|T-1/);
  });

  it('refuses requests without the secret path prefix and never forwards them', async () => {
    const port = new URL(proxy.baseUrl).port;
    const res = await fetch(`http://127.0.0.1:${port}/v1/messages`, { method: 'POST', body: '{}' });
    assert.equal(res.status, 404);
    assert.equal(upstream.requests.length, 0);
  });

  it('item 7: the secret is checked with a constant-time compare; near misses and longer secrets are refused', async () => {
    const base = new URL(proxy.baseUrl);
    const secret = base.pathname.slice(1);
    const flipped = secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A');
    const original = crypto.timingSafeEqual;
    let compares = 0;
    crypto.timingSafeEqual = (a, b) => {
      compares++;
      return original(a, b);
    };
    try {
      for (const wrong of [flipped, secret + 'x', secret.slice(0, -1), '']) {
        const res = await fetch(`${base.origin}/${wrong}/v1/messages`, { method: 'POST', body: '{}' });
        assert.equal(res.status, 404, `refused: ${wrong}`);
      }
    } finally {
      crypto.timingSafeEqual = original;
    }
    assert.ok(compares >= 4, 'every check went through timingSafeEqual');
    assert.equal(upstream.requests.length, 0);
  });

  it('answers HEAD <base> itself', async () => {
    const res = await fetch(proxy.baseUrl, { method: 'HEAD' });
    assert.equal(res.status, 200);
    assert.equal(upstream.requests.length, 0);
  });

  it('streams a 2xx SSE answer through byte for byte and reports the first admission once', async () => {
    assert.equal(proxy.state, 'waiting');
    upstream.enqueue({ kind: 'text', text: 'streamed answer', chunkChars: 3 }, { kind: 'text', text: 'again' });
    const res = await post({ model: 'm', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const text = await res.text();
    assert.equal(text, upstream.messageRequests()[0].sentBody.toString('utf8'));
    assert.equal(proxy.state, 'admitted');
    const admittedAt = proxy.firstAdmittedAt;
    assert.ok(admittedAt);
    await (await post()).text();
    assert.equal(events.filter((e) => e.type === 'admitted').length, 1);
    assert.equal(proxy.firstAdmittedAt, admittedAt);
  });

  it('reports the usage of each model answer, streamed (a 2 MB stream passed through byte for byte) and JSON', async () => {
    const usage = { input_tokens: 321, output_tokens: 45, cache_read_input_tokens: 600, cache_creation_input_tokens: 7 };
    upstream.enqueue(
      { kind: 'text', text: 'streamed answer', chunkChars: 3, usage, model: 'claude-sse' },
      { kind: 'large_stream', bytes: 2 * 1024 * 1024 },
      { kind: 'text', text: 'json answer', usage, model: 'claude-json' },
    );
    const streamed = await post({ model: 'm', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(await streamed.text(), upstream.messageRequests()[0].sentBody.toString('utf8'));
    const large = await post({ model: 'm', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'x' }] });
    const largeBytes = Buffer.from(await large.arrayBuffer());
    assert.ok(largeBytes.equals(upstream.messageRequests()[1].sentBody), 'the 2 MB stream reached the agent unchanged');
    const json = await post();
    assert.match(await json.text(), /json answer/);
    await waitUntil(() => events.filter((e) => e.type === 'usage').length === 3, 'three usage reports');
    const reports = events.flatMap((e) => (e.type === 'usage' ? [{ model: e.model, usage: e.usage }] : []));
    const counts = { inputTokens: 321, outputTokens: 45, cacheReadTokens: 600, cacheWriteTokens: 7 };
    assert.deepEqual(reports[0], { model: 'claude-sse', usage: counts });
    assert.equal(
      reports[1].usage.outputTokens,
      Number(/"output_tokens":(\d+)\}\}\n\nevent: message_stop/.exec(largeBytes.toString('utf8'))?.[1]),
      'the final message_delta count of the large stream',
    );
    assert.deepEqual(reports[2], { model: 'claude-json', usage: counts });
  });

  it('holds 3105 answers and re-probes (Retry-After capped, default when absent) until admitted', async () => {
    upstream.enqueue(
      { kind: 'error', status: 429, code: '3105', retryAfterSeconds: 3600 },
      { kind: 'error', status: 429, code: '3105' },
      { kind: 'error', status: 503, code: '3105', retryAfterSeconds: 0 },
      { kind: 'text', text: 'admitted at last' },
    );
    const res = await post();
    assert.equal(res.status, 200);
    assert.match(await res.text(), /admitted at last/);
    const holds = events.filter((e): e is Extract<TicketProxyEvent, { type: 'holding' }> => e.type === 'holding');
    assert.deepEqual(
      holds.map((h) => h.waitMs),
      [60, 40, 0],
    );
    assert.equal(upstream.messageRequests().length, 4);
    assert.ok(upstream.messageRequests().every((r) => r.rawBody === upstream.messageRequests()[0].rawBody));
    assert.equal(events.filter((e) => e.type === 'admitted').length, 1);
  });

  it('holds without limit (50 refusals in a row) and reads an HTTP-date Retry-After', async () => {
    await proxy.close();
    await startProxy({ holdDefaultMs: 1, holdMaxMs: 5_000 });
    const inTwoSeconds = new Date(Date.now() + 2_500).toUTCString();
    upstream.enqueue(
      ...Array.from({ length: 50 }, (_, i) => ({
        kind: 'error' as const,
        status: 429,
        code: '3105',
        headers: (i === 0 ? { 'retry-after': inTwoSeconds } : {}) as Record<string, string>,
      })),
      { kind: 'text', text: 'finally' },
    );
    const res = await post();
    assert.equal(res.status, 200);
    assert.match(await res.text(), /finally/);
    const holds = events.filter((e) => e.type === 'holding');
    assert.equal(holds.length, 50);
    const firstWait = (holds[0] as { waitMs: number }).waitMs;
    assert.ok(firstWait > 1 && firstWait <= 2_500, `an HTTP-date Retry-After is honoured (waited ${firstWait} ms)`);
    assert.ok(
      holds.slice(1).every((h) => (h as { waitMs: number }).waitMs === 1),
      'no Retry-After: the default wait',
    );
  });

  it('reports state "holding" while a request is held and "waiting" has not become "admitted"', async () => {
    await proxy.close();
    await startProxy({ holdDefaultMs: 10_000, holdMaxMs: 10_000 });
    upstream.enqueue({ kind: 'error', status: 429, code: '3105' });
    const controller = new AbortController();
    const pending = post(undefined, undefined, controller.signal).catch((e: Error) => e);
    await upstream.waitForMessageRequest(1);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(proxy.state, 'holding');
    assert.equal(proxy.firstAdmittedAt, null);
    proxy.cancel();
    const outcome = await pending;
    assert.ok(outcome instanceof Error, 'a cancelled hold ends the agent request');
    assert.equal(proxy.state, 'cancelled');
    assert.equal(upstream.messageRequests().length, 1, 'no re-probe after cancel');
    const after = await post();
    assert.equal(after.status, 400);
    assert.equal(upstream.messageRequests().length, 1);
  });

  describe('the start gate (docs/flows.md#segments)', () => {
    /** A gate the test opens, which tells when the proxy waits on it. */
    function startGate() {
      let open!: () => void;
      let reached!: () => void;
      const waitedOn = new Promise<void>((resolve) => (reached = resolve));
      const gate = new Promise<void>((resolve) => (open = resolve));
      const then = gate.then.bind(gate);
      gate.then = ((...args: Parameters<typeof then>) => {
        reached();
        return then(...args);
      }) as typeof gate.then;
      return { gate, open, waitedOn };
    }

    async function gatedProxy(gate: Promise<void>): Promise<void> {
      await proxy.close();
      proxy = await TicketProxy.start({
        upstreamBaseUrl: `${upstream.url}/api/anthropic`,
        apiKey: 'user-secret-key',
        ticketId: 'T-1',
        startGate: gate,
        onEvent: (e) => events.push(e),
      });
    }

    it('requests that wait at the gate go upstream once the runtime opens it', async () => {
      const { gate, open, waitedOn } = startGate();
      await gatedProxy(gate);
      const answer = post();
      await waitedOn;
      assert.equal(upstream.requests.length, 0, 'nothing went upstream while the gate was shut');
      open();
      const res = await answer;
      assert.equal(res.status, 200);
      await res.text();
      assert.equal(upstream.messageRequests().length, 1);
    });

    it('a segment cancelled while its requests wait at the gate answers them "segment over" and sends nothing', async () => {
      const { gate, waitedOn } = startGate();
      await gatedProxy(gate);
      const answer = post();
      await waitedOn;
      proxy.cancel();
      const res = await answer;
      assert.equal(res.status, 400);
      assert.equal(res.headers.get('x-should-retry'), 'false');
      await res.text();
      assert.equal(upstream.requests.length, 0);
    });
  });

  it('turns 3102 into a segment end: 400 x-should-retry false, event, later requests refused locally', async () => {
    upstream.enqueue({ kind: 'error', status: 400, code: '3102', message: 'ticket expired' });
    const res = await post();
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('x-should-retry'), 'false');
    await res.text();
    assert.deepEqual(
      events.map((e) => e.type),
      ['segment-expired'],
    );
    assert.equal(proxy.state, 'expired');
    const again = await post();
    assert.equal(again.status, 400);
    assert.equal(upstream.messageRequests().length, 1);
  });

  it('treats the legacy numeric code 3001 like 3102', async () => {
    upstream.enqueue({ kind: 'error', status: 400, body: { error: { code: 3001, message: 'old gateway' } } });
    const res = await post();
    assert.equal(res.status, 400);
    assert.equal(events[0]?.type, 'segment-expired');
  });

  it('passes other errors (plain 429, 500) through unchanged for the agent to retry', async () => {
    upstream.enqueue({ kind: 'error', status: 429, retryAfterSeconds: 7 }, { kind: 'error', status: 500, message: 'boom' });
    const first = await post();
    assert.equal(first.status, 429);
    assert.equal(first.headers.get('retry-after'), '7');
    assert.match(await first.text(), /rate_limit_error/);
    const second = await post();
    assert.equal(second.status, 500);
    assert.match(await second.text(), /boom/);
    assert.deepEqual(
      events.map((e) => e.type),
      ['upstream-error', 'upstream-error'],
    );
    assert.equal(proxy.state, 'waiting');
  });

  describe('item 4: the gateway cannot be reached', () => {
    /** A proxy in front of the fake upstream's port; `timings` shorten the outage rules. */
    async function restartProxy(options: Partial<TicketProxyOptions> = {}): Promise<void> {
      await proxy.close();
      events = [];
      proxy = await TicketProxy.start({
        upstreamBaseUrl: `${upstream.url}/api/anthropic`,
        apiKey: 'k',
        ticketId: 'T',
        outageRetryMs: 20,
        outageRetryMaxMs: 80,
        onEvent: (e) => events.push(e),
        ...options,
      });
    }

    it('item 4: holds the request while the gateway is down and sends it once it is back: the agent gets the answer, not an error', async () => {
      const port = Number(new URL(upstream.url).port);
      await restartProxy();
      await upstream.close();
      const pending = post();
      await waitUntil(() => events.some((e) => e.type === 'gateway-unreachable'), 'the outage to be noticed');
      assert.equal(proxy.state, 'holding');
      const since = proxy.gatewayUnreachableSince;
      assert.ok(since !== null);
      upstream = await FakeAnthropicUpstream.start({ port });
      const res = await pending;
      assert.equal(res.status, 200);
      assert.match(await res.text(), /FAKE-REPLY/);
      assert.equal(upstream.messageRequests().length, 1, 'sent once the gateway answered');
      assert.deepEqual(
        events.filter((e) => e.type !== 'usage').map((e) => e.type),
        ['gateway-unreachable', 'gateway-reachable', 'admitted'],
      );
      assert.deepEqual(events[1], { type: 'gateway-reachable', at: (events[1] as { at: number }).at, since });
      assert.equal(proxy.gatewayUnreachableSince, null);
    });

    it('item 4: past the maximum wait the request fails with x-should-retry false and the reason; later requests are refused locally', async () => {
      await restartProxy({ upstreamBaseUrl: 'http://127.0.0.1:1/api/anthropic', outageMaxWaitMs: 150 });
      const res = await post();
      assert.equal(res.status, 502);
      assert.equal(res.headers.get('x-should-retry'), 'false');
      const message = ((await res.json()) as { error: { message: string } }).error.message;
      assert.match(
        message,
        /^The off-peak gateway could not be reached from \d\d:\d\d to \d\d:\d\d \(150 ms, the longest a task waits for it\), so the task stopped\. Last error: .*ECONNREFUSED/,
      );
      assert.deepEqual(
        events.map((e) => e.type),
        ['gateway-unreachable', 'gateway-outage-exceeded'],
      );
      assert.equal(proxy.state, 'gateway-lost');
      assert.equal(proxy.failureReason, message);
      const later = await post();
      assert.equal(later.status, 502);
      assert.equal(((await later.json()) as { error: { message: string } }).error.message, message);
    });

    it("item 4: the ticket's end bounds the wait when it comes before the maximum", async () => {
      const ticketEnd = Date.now() + 150;
      await restartProxy({ upstreamBaseUrl: 'http://127.0.0.1:1/api/anthropic', ticketDeadline: () => ticketEnd });
      const res = await post();
      assert.equal(res.status, 502);
      assert.match(((await res.json()) as { error: { message: string } }).error.message, /\(the ticket's time ran out\)/);
      const exceeded = events.find((e) => e.type === 'gateway-outage-exceeded');
      assert.ok(exceeded && exceeded.at >= ticketEnd, 'not given up before the ticket ended');
    });
  });

  it('answers a permission question from the relay locally (never upstream); a malformed one gets a clear 400', async () => {
    await proxy.close();
    const asked: unknown[] = [];
    proxy = await TicketProxy.start({
      upstreamBaseUrl: `${upstream.url}/api/anthropic`,
      apiKey: 'user-secret-key',
      ticketId: 'T-1',
      onPermissionAsk: async (request) => {
        asked.push(request);
        return { decision: 'deny', message: 'no' };
      },
    });
    const question = { tool_name: 'Bash', input: { command: 'ls' }, tool_use_id: 'toolu_1' };
    const res = await post(question, '/offpeak/permission');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { decision: 'deny', message: 'no' });
    assert.deepEqual(asked, [question]);
    const bad = await post({ tool: 'Bash' }, '/offpeak/permission');
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /tool_name, input/);
    const wrongSecret = await fetch(proxy.baseUrl.replace(/\/[^/]+$/, '/not-the-secret') + '/offpeak/permission', {
      method: 'POST',
      body: JSON.stringify(question),
    });
    assert.equal(wrongSecret.status, 404);
    await wrongSecret.text();
    assert.equal(upstream.messageRequests().length, 0, 'nothing reached the gateway');
    assert.equal(asked.length, 1);
  });
});

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
