// The gateway's OpenAI Responses API proxy (the route Codex's requests take, docs/flows.md#segments)
// against the scripted fake Responses upstream (a TEST FIXTURE): the stream forwarded as sent, the
// same ticket checks as Anthropic Messages, the header allow-lists each way, and personal mode's
// pass-through of the agent's own login (the local authority runs this gateway with passClientCredential).
import assert from 'node:assert/strict';
import http from 'node:http';
import { GatewayPaths, LOCAL_KEY_HEADER, TICKET_HEADER } from '../../src/protocol/gateway';
import { startGateway, type GatewayServer } from '../../src/gateway/http/server';
import { parseSse } from '../fixtures/fake-anthropic-upstream';
import { codexLimitHeaders, FakeResponsesUpstream } from '../fixtures/fake-responses-upstream';
import { GatewayClient } from '../../src/gateway-client/client';
import { systemClock } from '../../src/core/clock';
import {
  errorOf,
  GATEWAY_TEST_STORES,
  KEYS,
  startTestGateway,
  storeLabel,
  TempDir,
  ticketIdOf,
  useGatewayStore,
  type TestGateway,
} from './gateway-helpers';

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

const BODY = JSON.stringify({
  model: 'gpt-test',
  stream: true,
  input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
});

for (const kind of GATEWAY_TEST_STORES)
  describe(`reference gateway: OpenAI Responses proxy (fake Responses upstream fixture, ${storeLabel(kind)})`, () => {
    useGatewayStore(kind);
    let dir: TempDir;
    let upstream: FakeResponsesUpstream;
    let t: TestGateway;
    let ticket: string;

    before(async () => {
      upstream = await FakeResponsesUpstream.start();
    });
    after(async () => {
      await upstream.close();
    });
    beforeEach(async () => {
      dir = new TempDir();
      upstream.reset();
      t = await startTestGateway(dir.file('tickets.sqlite'), {
        openaiUpstreamUrl: upstream.url,
        openaiUpstreamApiKey: 'sk-openai-upstream-secret',
      });
      ticket = ticketIdOf(await t.alice.take('task-codex'));
      await t.gateway.tick();
    });
    afterEach(async () => {
      await t.close();
      dir.remove();
    });

    const codexHeaders = () => ({
      authorization: `Bearer ${KEYS.alice}`,
      [TICKET_HEADER]: ticket,
      'session-id': 'thread-1',
      'thread-id': 'thread-1',
      originator: 'codex_cli_rs',
      'x-codex-turn-metadata': '{"thread_id":"thread-1"}',
      'x-client-request-id': 'req-1',
      // These choose an account or carry the user's browser state: never upstream.
      'openai-organization': 'org-of-the-user',
      'openai-project': 'proj-of-the-user',
      cookie: 'session=secret',
    });

    it('streams POST /api/openai/v1/responses from the upstream as sent, with the gateway key and the allowed headers only', async () => {
      upstream.enqueue({ kind: 'text', text: 'Hello from the fake', usage: { input_tokens: 100, cached_tokens: 60, output_tokens: 9 } });
      const res = await rawPost(t.gateway.url + GatewayPaths.openaiResponses, codexHeaders(), BODY);
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /text\/event-stream/);
      const events = parseSse(res.bytes.toString('utf8'));
      assert.equal(events.at(-1)?.event, 'response.completed');
      const usage = (events.at(-1)!.data as { response: { usage: { input_tokens_details: { cached_tokens: number } } } }).response.usage;
      assert.equal(usage.input_tokens_details.cached_tokens, 60);

      const [seen] = upstream.responseRequests();
      assert.equal(seen.path, '/v1/responses');
      assert.equal(seen.headers.authorization, 'Bearer sk-openai-upstream-secret');
      assert.equal(seen.headers['thread-id'], 'thread-1');
      assert.equal(seen.headers['session-id'], 'thread-1');
      assert.equal(seen.headers.originator, 'codex_cli_rs');
      assert.equal(seen.headers['x-codex-turn-metadata'], '{"thread_id":"thread-1"}');
      for (const name of [TICKET_HEADER, 'openai-organization', 'openai-project', 'cookie'])
        assert.equal(seen.headers[name], undefined, name);
      assert.deepEqual(seen.body, JSON.parse(BODY));
    });

    it('answers the user with the reset headers of a refusal but not the account behind the key or its remaining budget', async () => {
      upstream.enqueue({
        kind: 'error',
        status: 429,
        resetsInSeconds: 120,
        headers: {
          'openai-organization': 'org-of-the-gateway',
          'x-ratelimit-remaining-tokens': '5',
          'x-ratelimit-reset-tokens': '2s',
          'x-request-id': 'req_upstream_1',
        },
      });
      const res = await rawPost(t.gateway.url + GatewayPaths.openaiResponses, codexHeaders(), BODY);
      assert.equal(res.status, 429);
      assert.equal(res.headers['x-codex-primary-reset-after-seconds'], '120');
      assert.equal(res.headers['x-ratelimit-reset-tokens'], '2s');
      assert.equal(res.headers['x-request-id'], 'req_upstream_1');
      assert.equal(res.headers['retry-after'], '120');
      for (const name of ['openai-organization', 'x-ratelimit-remaining-tokens', 'x-codex-primary-used-percent'])
        assert.equal(res.headers[name], undefined, name);
      assert.equal((JSON.parse(res.bytes.toString('utf8')) as { error: { type: string } }).error.type, 'usage_limit_reached');
    });

    it("checks the ticket as for Anthropic Messages: none, or another user's, is refused and nothing goes upstream", async () => {
      const none = await rawPost(t.gateway.url + GatewayPaths.openaiResponses, { authorization: `Bearer ${KEYS.alice}` }, BODY);
      assert.ok(none.status >= 400, `status ${none.status}`);
      const bobs = await rawPost(
        t.gateway.url + GatewayPaths.openaiResponses,
        { ...codexHeaders(), authorization: `Bearer ${KEYS.bob}` },
        BODY,
      );
      assert.ok(bobs.status >= 400, `status ${bobs.status}`);
      assert.match(errorOf({ status: bobs.status, headers: new Headers(), body: JSON.parse(bobs.bytes.toString('utf8')) }).code, /^\d+$/);
      assert.equal(upstream.responseRequests().length, 0);
    });
  });

describe('gateway: OpenAI Responses with passClientCredential (the local authority of personal mode)', function () {
  this.timeout(30_000);
  const LOCAL_KEY = 'opk-local-responses-test-key-0001';
  let upstream: FakeResponsesUpstream;
  let gateway: GatewayServer;

  beforeEach(async () => {
    upstream = await FakeResponsesUpstream.start();
    gateway = await startGateway({
      config: {
        port: 0,
        store: 'memory',
        alwaysOpen: true,
        promoteIntervalMs: 0,
        users: [{ id: 'me', apiKey: LOCAL_KEY }],
        openaiUpstreamUrl: upstream.url,
        passClientCredential: true,
        logLevel: 'silent',
      },
    });
  });
  afterEach(async () => {
    await gateway.close(0);
    await upstream.close();
  });

  it("sends Codex's own ChatGPT login (Authorization and its account id) upstream untouched, and never the local key", async () => {
    const client = new GatewayClient({ baseUrl: gateway.url, apiKey: () => LOCAL_KEY, clock: systemClock });
    const ticket = (await client.take('codex-login')).ticketId;
    await gateway.tick();
    const res = await rawPost(
      gateway.url + GatewayPaths.openaiResponses,
      {
        [LOCAL_KEY_HEADER]: LOCAL_KEY,
        authorization: 'Bearer chatgpt-login-token',
        'chatgpt-account-id': 'acct-1',
        [TICKET_HEADER]: ticket,
      },
      BODY,
    );
    assert.equal(res.status, 200);
    const [seen] = upstream.responseRequests();
    assert.equal(seen.headers.authorization, 'Bearer chatgpt-login-token');
    assert.equal(seen.headers['chatgpt-account-id'], 'acct-1');
    assert.equal(seen.headers[LOCAL_KEY_HEADER], undefined);
    assert.ok(!JSON.stringify(seen.headers).includes(LOCAL_KEY));
  });
});

describe('gateway: a Codex usage limit holds the account (accountLimits, as personal mode runs it; SQLite file)', () => {
  useGatewayStore('sqlite');
  let dir: TempDir;
  let upstream: FakeResponsesUpstream;
  let t: TestGateway;

  beforeEach(async () => {
    dir = new TempDir();
    upstream = await FakeResponsesUpstream.start();
    t = await startTestGateway(dir.file('tickets.sqlite'), {
      accountLimits: true,
      openaiUpstreamUrl: upstream.url,
      openaiUpstreamApiKey: 'sk-openai-upstream-secret',
    });
  });
  afterEach(async () => {
    await t.close();
    await upstream.close();
    dir.remove();
  });

  it("item 5: Codex's 429 with its 5-hour window used up is answered 3105 with the reset, later requests are held at the gateway with nothing upstream, and at the reset they go on", async () => {
    const ticket = ticketIdOf(await t.alice.take('task-codex-limit'));
    await t.gateway.tick();
    const headers = { authorization: `Bearer ${KEYS.alice}`, [TICKET_HEADER]: ticket };
    const resetAt = Math.ceil(t.clock.now() / 1000) * 1000 + 90_000;
    upstream.enqueue(
      { kind: 'error', status: 429, headers: codexLimitHeaders(90, t.clock.now()) },
      { kind: 'text', text: 'after the reset' },
    );
    for (const _ of [1, 2]) {
      const held = await rawPost(t.gateway.url + GatewayPaths.openaiResponses, headers, BODY);
      const error = errorOf({ status: held.status, headers: new Headers(), body: JSON.parse(held.bytes.toString('utf8')) }) as {
        code: string;
        limit_reset_at?: number;
      };
      assert.deepEqual([held.status, error.code, error.limit_reset_at], [429, '3105', resetAt]);
    }
    assert.equal(upstream.responseRequests().length, 1, 'only the refused request reached the upstream');
    t.clock.advance(resetAt - t.clock.now());
    const after = await rawPost(t.gateway.url + GatewayPaths.openaiResponses, headers, BODY);
    assert.equal(after.status, 200);
    assert.equal(upstream.responseRequests().length, 2);
  });
});
