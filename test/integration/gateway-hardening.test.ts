// Regression tests for the gateway's hardening against one greedy user, unlisted models, headers
// passing through, and open operations endpoints. Real gateway on loopback, SQLite file, and the
// scripted fake upstream (a test fixture standing in for the model API).
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { GatewayPaths, TICKET_HEADER } from '../../src/protocol/gateway';
import type { GatewayConfig } from '../../src/gateway/config';
import {
  errorOf,
  GATEWAY_TEST_STORES,
  gatewaySuite,
  KEYS,
  longPollsWaiting,
  storeLabel,
  ticketIdOf,
  useGatewayStore,
  type TestGateway,
} from './gateway-helpers';

/** A raw request that collects the answer's status, headers and bytes. */
function rawRequest(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A socket's fate after it sent `request`: the first bytes of the answer, or '' when closed unanswered. */
function answerOrClose(socket: net.Socket, request: string): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (c: Buffer) => {
      text += c.toString();
      if (text.includes('\r\n\r\n')) resolve(text);
    });
    socket.on('close', () => resolve(text));
    socket.on('error', () => undefined);
    socket.write(request);
  });
}

function connect(url: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The suite's operations token: outside --demo /metrics and /healthz need one (or an ops address). */
const OPS_TOKEN = 'ops-token-0123456789';
const OPS_AUTH = { authorization: `Bearer ${OPS_TOKEN}` };

async function metricValue(url: string, name: string, headers: Record<string, string> = OPS_AUTH): Promise<number> {
  const text = await (await fetch(url + GatewayPaths.metrics, { headers })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
}

const ANTHROPIC_VERSION = { 'anthropic-version': '2023-06-01' };

for (const kind of GATEWAY_TEST_STORES)
  describe(`reference gateway hardening (real server, fake upstream fixture, ${storeLabel(kind)})`, () => {
    useGatewayStore(kind);
    const suite = gatewaySuite({ upstreamApiKey: 'sk-upstream-secret', statusMaxWaitMs: 60_000, opsToken: OPS_TOKEN });
    const sockets: net.Socket[] = [];
    afterEach(() => {
      for (const socket of sockets.splice(0)) socket.destroy();
    });
    const start = (overrides: Partial<GatewayConfig> = {}) => suite.start(overrides);
    /** Alice and Bob each hold a ready ticket. */
    const readyTickets = async (g: TestGateway) => {
      const alice = ticketIdOf(await g.alice.take('task-alice'));
      const bob = ticketIdOf(await g.bob.take('task-bob'));
      await g.gateway.tick();
      return { alice, bob };
    };

    describe('item 8: one user cannot starve the others', () => {
      it("item 8: one user's long-poll flood does not exceed the per-user cap, and another user's long-poll still waits", async function () {
        this.timeout(30_000);
        const g = await start({ maxLongPollsPerUser: 3 });
        const a = ticketIdOf(await g.alice.take('task-A'));
        const b = ticketIdOf(await g.bob.take('task-B'));
        let answered = 0;
        const flood = Array.from({ length: 10 }, () =>
          g.alice.status([a], 60_000).then((answer) => {
            answered += 1;
            return answer;
          }),
        );
        await until(() => answered >= 7, 'the polls over the cap to be answered');
        assert.equal(answered, 7, 'the 7 polls over the cap are answered at once');
        assert.equal(g.gateway.pendingLongPolls, 3, 'alice holds exactly the cap');
        const bobs = g.bob.status([b], 60_000);
        await longPollsWaiting(g.gateway, 4);
        assert.equal(g.gateway.pendingLongPolls, 4, "bob's long-poll waits beside alice's");
        await g.gateway.tick();
        const answers = await Promise.all(flood);
        assert.ok(answers.every((x) => x.status === 200 && x.body.tickets.length === 1));
        assert.equal((await bobs).body.tickets[0].state, 'ready');
      });

      it("item 8: a status request's repeated ticket ids are answered once each", async () => {
        const g = await start();
        const a = ticketIdOf(await g.alice.take('task-A'));
        const b = ticketIdOf(await g.alice.take('task-B'));
        const answer = await g.alice.status([a, b, a, a, b]);
        assert.equal(answer.status, 200);
        assert.deepEqual(
          answer.body.tickets.map((x) => x.ticket_id),
          [a, b],
        );
      });

      it('item 8: a change to one ticket re-reads only the long-polls that watch it', async function () {
        this.timeout(30_000);
        const g = await start();
        const { alice, bob } = await readyTickets(g);
        const alicePolls = Array.from({ length: 5 }, () => g.alice.status([alice], 60_000));
        const bobPoll = g.bob.status([bob], 60_000);
        await longPollsWaiting(g.gateway, 6);
        const before = await metricValue(g.gateway.url, 'offpeak_long_poll_rechecks_total');
        await g.bob.settle(bob);
        assert.equal((await bobPoll).body.tickets[0].state, 'settled');
        const after = await metricValue(g.gateway.url, 'offpeak_long_poll_rechecks_total');
        assert.equal(after - before, 1, "only bob's poll was re-read");
        assert.equal(g.gateway.pendingLongPolls, 5, "alice's polls still wait");
        await g.alice.settle(alice);
        assert.ok((await Promise.all(alicePolls)).every((x) => x.body.tickets[0].state === 'settled'));
      });

      it("item 8: one user's model requests beyond the per-user limit get 3105 while another user's are admitted", async () => {
        const g = await start({ maxConcurrentModelRequests: 4, maxModelRequestsPerUser: 1 });
        const { alice, bob } = await readyTickets(g);
        suite.upstream.enqueue({ kind: 'hang' });
        const controller = new AbortController();
        const hanging = await fetch(`${g.gateway.url}${GatewayPaths.anthropicMessages}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${KEYS.alice}`,
            [TICKET_HEADER]: alice,
            'content-type': 'application/json',
            ...ANTHROPIC_VERSION,
          },
          body: JSON.stringify({ model: 'claude-sonnet-4-5', stream: true, messages: [] }),
          signal: controller.signal,
        });
        assert.equal(hanging.status, 200);
        try {
          const second = await g.alice.message(alice);
          assert.equal(second.status, 429);
          assert.equal(errorOf(second).code, '3105');
          assert.ok(Number(second.headers.get('retry-after')) >= 1);
          assert.equal((await g.bob.message(bob)).status, 200, 'bob is admitted beside alice');
        } finally {
          controller.abort();
        }
      });

      it('item 8: a model request whose body stalls holds no model slot and is cut after the body-read timeout', async function () {
        this.timeout(30_000);
        const g = await start({ maxConcurrentModelRequests: 1, bodyReadTimeoutMs: 500 });
        const { alice, bob } = await readyTickets(g);
        const socket = await connect(g.gateway.url);
        sockets.push(socket);
        const head = [
          `POST ${GatewayPaths.anthropicMessages} HTTP/1.1`,
          'host: 127.0.0.1',
          `authorization: Bearer ${KEYS.alice}`,
          `${TICKET_HEADER}: ${alice}`,
          'content-type: application/json',
          'content-length: 1000',
          '',
          '{"model":"claude-sonnet-4-5","messages":[',
        ].join('\r\n');
        const stalled = answerOrClose(socket, head);
        await until(() => g.gateway.activeRequests >= 1, 'the stalled request to arrive');
        assert.equal(g.gateway.authority.modelRequestsInFlight, 0, 'no slot while the body is unread');
        assert.equal((await g.bob.message(bob)).status, 200, "bob gets the only slot while alice's body stalls");
        assert.match(await stalled, /^HTTP\/1\.1 408 /);
        assert.equal(suite.upstream.messageRequests().length, 1, 'only bob reached upstream');
      });

      it('item 8: connections beyond the server-wide cap are refused; the ones inside it are served', async function () {
        this.timeout(30_000);
        const g = await start({ maxConnections: 2 });
        const first = await connect(g.gateway.url);
        const second = await connect(g.gateway.url);
        sockets.push(first, second);
        await until(() => g.gateway.openConnections === 2, 'two connections');
        const third = await connect(g.gateway.url);
        sockets.push(third);
        const health = `GET ${GatewayPaths.healthz} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${OPS_AUTH.authorization}\r\n\r\n`;
        assert.equal(await answerOrClose(third, health), '', 'the third connection is closed unanswered');
        assert.match(await answerOrClose(first, health), /^HTTP\/1\.1 200 /, 'a connection inside the cap is served');
        second.destroy();
        await until(() => g.gateway.openConnections === 1, 'the second connection to close');
        const fourth = await connect(g.gateway.url);
        sockets.push(fourth);
        assert.match(await answerOrClose(fourth, health), /^HTTP\/1\.1 200 /, 'room again once one closed');
      });
    });

    describe('item 9: models outside the allow-list', () => {
      it('item 9: by default a model outside --models reaches upstream as the default model; a listed model goes byte for byte', async () => {
        const g = await start({
          models: [
            { id: 'claude-sonnet-4-5', display_name: 'Sonnet' },
            { id: 'claude-haiku-4-5', display_name: 'Haiku' },
          ],
          defaultModel: 'claude-haiku-4-5',
        });
        const { alice } = await readyTickets(g);
        const unlisted = await g.alice.message(alice, {
          model: 'claude-own-default-20990101',
          max_tokens: 16,
          messages: [{ role: 'user', content: 'hi' }],
        });
        assert.equal(unlisted.status, 200);
        const listedBody = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hé' }] });
        assert.equal((await g.alice.message(alice, listedBody as unknown as Record<string, unknown>)).status, 200);
        const [first, second] = suite.upstream.messageRequests();
        assert.equal((first.body as { model: string }).model, 'claude-haiku-4-5');
        assert.deepEqual((first.body as { messages: unknown }).messages, [{ role: 'user', content: 'hi' }]);
        assert.equal(second.rawBody, listedBody);
      });

      it('item 9: with --unknown-model reject, a model outside --models is a clear 400, never reaches upstream and activates nothing', async () => {
        const g = await start({ unknownModel: 'reject' });
        const { alice } = await readyTickets(g);
        const refused = await g.alice.message(alice, { model: 'claude-own-default-20990101', max_tokens: 16, messages: [] });
        assert.equal(refused.status, 400);
        assert.equal(errorOf(refused).code, 'invalid_request');
        assert.match(errorOf(refused).message, /claude-own-default-20990101.*not offered.*claude-sonnet-4-5/);
        const noModel = await g.alice.message(alice, { max_tokens: 16, messages: [] });
        assert.equal(noModel.status, 400);
        assert.equal(suite.upstream.messageRequests().length, 0);
        assert.equal((await g.alice.stateOf(alice)).state, 'ready');
        assert.equal((await g.alice.message(alice, { model: 'claude-opus-4-1', max_tokens: 16, messages: [] })).status, 200);
      });
    });

    describe('item 10: headers are allow-listed both ways', () => {
      it('item 10: only allow-listed headers reach upstream (no cookies, no forwarding headers, no Connection-named headers)', async () => {
        const g = await start();
        const { alice } = await readyTickets(g);
        const answer = await rawRequest(
          `${g.gateway.url}${GatewayPaths.anthropicMessages}?beta=true`,
          'POST',
          {
            authorization: `Bearer ${KEYS.alice}`,
            [TICKET_HEADER]: alice,
            'content-type': 'application/json',
            'anthropic-version': '2023-06-01',
            'anthropic-beta': 'named-in-connection',
            'anthropic-dangerous-direct-browser-access': 'true',
            connection: 'keep-alive, anthropic-beta, x-hop-secret',
            'x-hop-secret': 'hop',
            cookie: 'session=alice-cookie',
            'x-forwarded-for': '10.9.8.7',
            forwarded: 'for=10.9.8.7',
            'x-real-ip': '10.9.8.7',
            via: '1.1 someone',
            'x-internal-thing': 'internal',
            'user-agent': 'claude-cli/2.0',
            'x-claude-code-session-id': 'session-1',
          },
          JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [] }),
        );
        assert.equal(answer.status, 200);
        const seen = suite.upstream.messageRequests()[0].headers;
        assert.equal(seen['anthropic-version'], '2023-06-01');
        assert.equal(seen['anthropic-dangerous-direct-browser-access'], 'true');
        assert.equal(seen['content-type'], 'application/json');
        assert.equal(seen['user-agent'], 'claude-cli/2.0');
        assert.equal(seen['x-claude-code-session-id'], 'session-1');
        assert.equal(seen['x-api-key'], 'sk-upstream-secret');
        for (const name of [
          'cookie',
          'x-forwarded-for',
          'forwarded',
          'x-real-ip',
          'via',
          'x-internal-thing',
          'x-hop-secret',
          'anthropic-beta',
          'authorization',
          TICKET_HEADER,
        ]) {
          assert.equal(seen[name], undefined, `${name} must not reach upstream`);
        }
      });

      it('item 10: upstream set-cookie and organization headers never reach the user; request id, retry and rate-limit reset headers do', async () => {
        const g = await start();
        const { alice } = await readyTickets(g);
        suite.upstream.enqueue({
          kind: 'raw',
          status: 200,
          headers: {
            'content-type': 'application/json',
            'set-cookie': 'upstream-session=secret; Path=/',
            'anthropic-organization-id': 'org-of-the-gateway',
            'anthropic-ratelimit-tokens-remaining': '12345',
            'anthropic-ratelimit-tokens-reset': '2026-01-05T02:01:00Z',
            'retry-after': '7',
            'x-should-retry': 'true',
            'x-upstream-internal': 'internal',
            'cf-ray': 'abc',
          },
          chunks: ['{"type":"message","content":[]}'],
        });
        const answer = await g.alice.message(alice, { model: 'claude-sonnet-4-5', max_tokens: 5, messages: [] });
        assert.equal(answer.status, 200);
        assert.match(String(answer.headers.get('request-id')), /^req_fake/);
        assert.equal(answer.headers.get('retry-after'), '7');
        assert.equal(answer.headers.get('x-should-retry'), 'true');
        assert.equal(answer.headers.get('anthropic-ratelimit-tokens-reset'), '2026-01-05T02:01:00Z');
        assert.equal(answer.headers.get('content-type'), 'application/json');
        for (const name of [
          'set-cookie',
          'anthropic-organization-id',
          'anthropic-ratelimit-tokens-remaining',
          'x-upstream-internal',
          'cf-ray',
        ]) {
          assert.equal(answer.headers.get(name), null, `${name} must not reach the user`);
        }
      });
    });

    describe('item 11: operations endpoints', () => {
      it('item 11: with an ops token, /metrics and /healthz answer only to that bearer token', async () => {
        const g = await start({ opsToken: OPS_TOKEN });
        for (const path of [GatewayPaths.metrics, GatewayPaths.healthz]) {
          assert.equal((await fetch(g.gateway.url + path)).status, 401, `${path} without a token`);
          assert.equal(
            (await fetch(g.gateway.url + path, { headers: { authorization: `Bearer ${KEYS.alice}` } })).status,
            401,
            `${path} with a user key`,
          );
          assert.equal(
            (await fetch(g.gateway.url + path, { headers: { authorization: 'Bearer ops-token-0123456789' } })).status,
            200,
            `${path} with the ops token`,
          );
        }
      });

      it('item 11: with a separate ops address, /metrics and /healthz are served there and not on the API address', async () => {
        const g = await start({ opsListen: '127.0.0.1:0', opsToken: null });
        const ops = g.gateway.opsUrl;
        assert.ok(ops && ops !== g.gateway.url);
        for (const path of [GatewayPaths.metrics, GatewayPaths.healthz]) {
          assert.equal((await fetch(g.gateway.url + path)).status, 404, `${path} on the API address`);
          assert.equal((await fetch(ops + path)).status, 200, `${path} on the ops address`);
        }
        assert.equal(
          (await fetch(ops + GatewayPaths.clientConfigs, { headers: { authorization: `Bearer ${KEYS.alice}` } })).status,
          404,
          'the ops address serves no API',
        );
      });
    });
  });
