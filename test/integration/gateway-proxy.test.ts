// The gateway's Anthropic Messages proxy against the scripted fake upstream (a test fixture):
// byte-exact JSON/SSE passthrough, header handling, upstream errors, hang-ups and size limits.
import assert from 'node:assert/strict';
import http from 'node:http';
import { GatewayErrorSchema, GatewayPaths, TICKET_HEADER } from '../../src/protocol/gateway';
import { FakeAnthropicUpstream, parseSse } from '../fixtures/fake-anthropic-upstream';
import {
  errorOf,
  GATEWAY_TEST_STORES,
  KEYS,
  startTestGateway,
  TempDir,
  ticketIdOf,
  storeLabel,
  useGatewayStore,
  type TestGateway,
} from './gateway-helpers';

/** A raw POST that collects the exact bytes of the answer. */
function rawPost(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

for (const kind of GATEWAY_TEST_STORES)
  describe(`reference gateway: Anthropic Messages proxy (fake upstream fixture, ${storeLabel(kind)})`, () => {
    useGatewayStore(kind);
    let dir: TempDir;
    let upstream: FakeAnthropicUpstream;
    let t: TestGateway;
    let ticket: string;

    before(async () => {
      upstream = await FakeAnthropicUpstream.start();
    });
    after(async () => {
      await upstream.close();
    });
    beforeEach(async () => {
      dir = new TempDir();
      upstream.reset();
      t = await startTestGateway(dir.file('tickets.sqlite'), {
        upstreamUrl: upstream.url,
        upstreamApiKey: 'sk-upstream-secret',
        maxModelBodyBytes: 256 * 1024,
      });
      ticket = ticketIdOf(await t.alice.take('task-proxy'));
      await t.gateway.tick();
    });
    afterEach(async () => {
      await t.close();
      dir.remove();
    });

    const modelHeaders = () => ({
      authorization: `Bearer ${KEYS.alice}`,
      [TICKET_HEADER]: ticket,
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'fine-grained-tool-streaming-2025-05-14',
      'x-claude-code-session-id': 'session-123',
    });

    it('HEAD /api/anthropic answers 200 without auth (the probe Claude Code sends first)', async () => {
      for (const path of [GatewayPaths.anthropicBase, `${GatewayPaths.anthropicBase}/`]) {
        const res = await fetch(t.gateway.url + path, { method: 'HEAD' });
        assert.equal(res.status, 200);
        assert.ok(Number(res.headers.get('x-off-peak-server-time')) > 0);
      }
    });

    it('forwards JSON with and without ?beta=true: body byte for byte, Anthropic headers kept, our auth and ticket replaced', async () => {
      upstream.enqueue({ kind: 'text', text: 'first' }, { kind: 'text', text: 'second' });
      const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'héllo ✓' }] }); // a listed model: the body goes byte for byte
      const withBeta = await rawPost(`${t.gateway.url}${GatewayPaths.anthropicMessages}?beta=true`, modelHeaders(), body);
      const without = await rawPost(`${t.gateway.url}${GatewayPaths.anthropicMessages}`, modelHeaders(), body);
      assert.equal(withBeta.status, 200);
      assert.equal(without.status, 200);
      const [first, second] = upstream.messageRequests();
      assert.equal(first.url, '/v1/messages?beta=true');
      assert.equal(second.url, '/v1/messages');
      assert.equal(first.rawBody, body);
      assert.equal(first.headers['anthropic-version'], '2023-06-01');
      assert.equal(first.headers['anthropic-beta'], 'fine-grained-tool-streaming-2025-05-14');
      assert.equal(first.headers['x-claude-code-session-id'], 'session-123');
      assert.equal(first.headers['x-api-key'], 'sk-upstream-secret');
      assert.equal(first.headers.authorization, undefined, "the user's key never leaves the gateway");
      assert.equal(first.headers[TICKET_HEADER], undefined);
      assert.equal(Buffer.compare(withBeta.bytes, first.sentBody), 0, 'JSON answer byte-exact');
      assert.match(String(withBeta.headers['request-id']), /^req_fake/, "upstream's response headers come through");
      assert.ok(withBeta.headers['x-off-peak-server-time']);
      assert.equal(JSON.parse(without.bytes.toString()).content[0].text, 'second');
    });

    it('SSE passthrough is byte-exact (a 2 MB stream and a tool_use turn)', async () => {
      upstream.enqueue(
        { kind: 'large_stream', bytes: 2 * 1024 * 1024 },
        { kind: 'tool_use', name: 'Bash', input: { command: 'ls -la' }, text: 'Let me look.' },
      );
      const body = JSON.stringify({ model: 'm', stream: true, max_tokens: 5, messages: [{ role: 'user', content: 'go' }] });
      const big = await rawPost(`${t.gateway.url}${GatewayPaths.anthropicMessages}?beta=true`, modelHeaders(), body);
      assert.equal(big.status, 200);
      assert.equal(big.headers['content-type'], 'text/event-stream');
      const sent = upstream.messageRequests()[0].sentBody;
      assert.ok(sent.length >= 2 * 1024 * 1024);
      assert.equal(big.bytes.length, sent.length);
      assert.equal(Buffer.compare(big.bytes, sent), 0, 'every byte identical');
      const tool = await rawPost(`${t.gateway.url}${GatewayPaths.anthropicMessages}?beta=true`, modelHeaders(), body);
      assert.equal(Buffer.compare(tool.bytes, upstream.messageRequests()[1].sentBody), 0);
      assert.ok(
        parseSse(tool.bytes.toString()).some(
          (e) => e.event === 'content_block_start' && (e.data as { content_block: { type: string } }).content_block.type === 'tool_use',
        ),
      );
    });

    it('backpressure: a client that stops reading stalls the upstream instead of the gateway buffering the stream', async function () {
      this.timeout(150_000);
      const total = 24 * 1024 * 1024;
      upstream.enqueue({ kind: 'large_stream', bytes: total, deltaChars: 16 * 1024 });
      const received: Buffer[] = [];
      let ended = false;
      const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
        const req = http.request(
          `${t.gateway.url}${GatewayPaths.anthropicMessages}`,
          { method: 'POST', headers: modelHeaders() },
          (res) => {
            res.pause(); // read nothing for now
            resolve(res);
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ model: 'm', stream: true, messages: [] }));
      });
      const done = new Promise<void>((resolve, reject) => {
        response.on('end', () => {
          ended = true;
          resolve();
        });
        response.on('error', reject);
      });
      await upstream.waitForMessageRequest(1);
      // Wait until the upstream cannot write any more (its progress stops).
      let last = -1;
      for (let i = 0; i < 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const now = upstream.messageRequests()[0].sentBytes;
        if (now === last) break;
        last = now;
      }
      const stalledAt = upstream.messageRequests()[0].sentBytes;
      assert.ok(stalledAt < total, `upstream stalled at ${stalledAt} of ${total} bytes`);
      assert.equal(upstream.messageRequests()[0].completed, false);
      response.on('data', (c: Buffer) => received.push(c));
      response.resume();
      await done;
      assert.equal(ended, true);
      assert.equal(Buffer.concat(received).length, upstream.messageRequests()[0].sentBytes);
      assert.equal(upstream.messageRequests()[0].completed, true);
    });

    it('a client that hangs up aborts the upstream request and frees the model slot', async () => {
      upstream.enqueue({ kind: 'hang' });
      const controller = new AbortController();
      const res = await fetch(`${t.gateway.url}${GatewayPaths.anthropicMessages}?beta=true`, {
        method: 'POST',
        headers: modelHeaders(),
        body: JSON.stringify({ model: 'm', stream: true, messages: [] }),
        signal: controller.signal,
      });
      assert.equal(res.status, 200);
      const reader = res.body?.getReader();
      const first = await reader?.read(); // message_start arrived through the gateway
      assert.match(Buffer.from(first?.value ?? []).toString(), /message_start/);
      assert.equal(t.gateway.authority.modelRequestsInFlight, 1);
      controller.abort();
      await upstream.waitFor((requests) => requests.some((r) => r.replyKind === 'hang' && r.clientClosed));
      assert.equal(upstream.messageRequests()[0].completed, false);
      // The slot is free again: the next request is admitted and answered.
      for (let i = 0; i < 100 && t.gateway.authority.modelRequestsInFlight > 0; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(t.gateway.authority.modelRequestsInFlight, 0);
      assert.equal((await t.alice.message(ticket)).status, 200);
      assert.equal(t.gateway.metrics.count.clientAborts.get(), 1);
    });

    it('upstream errors pass through unchanged (status, body, Retry-After)', async () => {
      upstream.enqueue(
        { kind: 'error', status: 529, message: 'overloaded' },
        { kind: 'error', status: 429, retryAfterSeconds: 9, message: 'slow down' },
      );
      const overloaded = await t.alice.message(ticket);
      assert.equal(overloaded.status, 529);
      assert.deepEqual(overloaded.body, { type: 'error', error: { type: 'overloaded_error', message: 'overloaded' } });
      const limited = await t.alice.message(ticket);
      assert.equal(limited.status, 429);
      assert.equal(limited.headers.get('retry-after'), '9');
      assert.equal(errorOf(limited).code, undefined, 'an upstream 429 is not turned into a business code');
    });

    it('an unreachable upstream is 502 upstream_unavailable in the one error shape; no upstream configured is 503', async () => {
      const dead = new TempDir();
      const other = await startTestGateway(dead.file('x.sqlite'), { upstreamUrl: 'http://127.0.0.1:9' });
      const noUpstream = await startTestGateway(dead.file('y.sqlite'), {});
      try {
        const id = ticketIdOf(await other.alice.take('t'));
        await other.gateway.tick();
        const answer = await other.alice.message(id);
        assert.equal(answer.status, 502);
        assert.equal(GatewayErrorSchema.parse(answer.body).error.code, 'upstream_unavailable');
        const id2 = ticketIdOf(await noUpstream.alice.take('t'));
        await noUpstream.gateway.tick();
        const none = await noUpstream.alice.message(id2);
        assert.equal(none.status, 503);
        assert.equal(errorOf(none).code, 'upstream_not_configured');
        assert.equal((await noUpstream.alice.stateOf(id2)).state, 'ready', 'not activated when nothing could be forwarded');
      } finally {
        await other.close();
        await noUpstream.close();
        dead.remove();
      }
    });

    it('a model request body over the limit is 413 and never reaches upstream', async () => {
      const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(300 * 1024) }] });
      const answer = await rawPost(`${t.gateway.url}${GatewayPaths.anthropicMessages}`, modelHeaders(), body);
      assert.equal(answer.status, 413);
      assert.equal(JSON.parse(answer.bytes.toString()).error.code, 'request_too_large');
      assert.equal(upstream.messageRequests().length, 0);
    });

    it('count_tokens is forwarded under the same admission', async () => {
      const answer = await t.alice.request(
        'POST',
        `${GatewayPaths.anthropicMessages}/count_tokens?beta=true`,
        { model: 'm', messages: [] },
        { [TICKET_HEADER]: ticket },
      );
      assert.equal(answer.status, 200);
      assert.ok((answer.body as { input_tokens: number }).input_tokens > 0);
      const refused = await t.alice.request('POST', `${GatewayPaths.anthropicMessages}/count_tokens`, { model: 'm', messages: [] });
      assert.equal(refused.status, 400);
      assert.equal(errorOf(refused).code, '3102');
    });
  });
