// The gateway's smaller holes (Trust II item 12), each against the real gateway on loopback: the
// in-process server with each store, or the real process for what argv and stderr show. The
// model API is the scripted fake upstream (a test fixture).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { GatewayPaths, TICKET_HEADER } from '../../src/protocol/gateway';
import {
  errorOf,
  GATEWAY_TEST_STORES,
  gatewaySuite,
  GatewayTestClient,
  KEYS,
  spawnGateway,
  storeLabel,
  TempDir,
  ticketIdOf,
  useGatewayStore,
  type RunningGateway,
} from './gateway-helpers';

function connect(url: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** What a socket got after sending `request`: the answer's head, or '' when it was closed unanswered. */
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

function closed(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Resolves with the first of `promise` and a bounded wait (then `undefined`). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return Promise.race([promise, new Promise<undefined>((r) => setTimeout(() => r(undefined), ms))]);
}

function rawPost(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const configsRequest = (key: string) =>
  `GET ${GatewayPaths.clientConfigs} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\n\r\n`;

for (const kind of GATEWAY_TEST_STORES)
  describe(`reference gateway: Trust II lows (real server, fake upstream fixture, ${storeLabel(kind)})`, () => {
    useGatewayStore(kind);
    const suite = gatewaySuite({ upstreamApiKey: 'sk-upstream-secret' });
    const sockets: net.Socket[] = [];
    afterEach(() => {
      for (const socket of sockets.splice(0)) socket.destroy();
    });
    const readyTicket = async () => {
      const g = suite.current!;
      const id = ticketIdOf(await g.alice.take('task-alice'));
      await g.gateway.tick();
      return id;
    };

    it('item 12: of the anthropic-* headers only the named ones reach upstream (no organization, workspace or key headers)', async () => {
      const g = await suite.start();
      const ticket = await readyTicket();
      const answer = await rawPost(
        `${g.gateway.url}${GatewayPaths.anthropicMessages}?beta=true`,
        {
          authorization: `Bearer ${KEYS.alice}`,
          [TICKET_HEADER]: ticket,
          'anthropic-version': '2023-06-01',
          'anthropic-beta': 'fine-grained-tool-streaming-2025-05-14',
          'anthropic-organization-id': 'org-chosen-by-the-user',
          'anthropic-workspace-id': 'wrkspc-chosen-by-the-user',
          'anthropic-api-key': 'sk-someone-else',
          'anthropic-anything-new': 'x',
        },
        JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [] }),
      );
      assert.equal(answer.status, 200, answer.text);
      const seen = suite.upstream.messageRequests()[0].headers;
      assert.equal(seen['anthropic-version'], '2023-06-01');
      assert.equal(seen['anthropic-beta'], 'fine-grained-tool-streaming-2025-05-14');
      const anthropic = Object.keys(seen)
        .filter((name) => name.startsWith('anthropic-'))
        .sort();
      assert.deepEqual(anthropic, ['anthropic-beta', 'anthropic-version']);
    });

    it('item 12: a body naming a top-level key twice is a 400 (model request and take): nothing reaches upstream, nothing is taken or activated', async () => {
      const g = await suite.start();
      const ticket = await readyTicket();
      const headers = { authorization: `Bearer ${KEYS.alice}`, [TICKET_HEADER]: ticket, 'anthropic-version': '2023-06-01' };
      const url = `${g.gateway.url}${GatewayPaths.anthropicMessages}`;
      for (const body of [
        '{"model":"claude-haiku-4-5","max_tokens":5,"messages":[],"model":"claude-opus-4-1"}',
        '{"model":"claude-haiku-4-5","max_tokens":5,"messages":[],"mod\\u0065l":"claude-opus-4-1"}',
      ]) {
        const answer = await rawPost(url, headers, body);
        assert.equal(answer.status, 400, body);
        assert.match((JSON.parse(answer.text) as { error: { message: string } }).error.message, /"model" appears twice/);
      }
      assert.equal(suite.upstream.messageRequests().length, 0);
      assert.equal((await g.alice.stateOf(ticket)).state, 'ready', 'a refused request activates nothing');
      // The same key in nested objects is ordinary JSON (every content block has a "type").
      const nested = JSON.stringify({
        model: 'claude-haiku-4-5',
        max_tokens: 5,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
        ],
      });
      assert.equal((await rawPost(url, headers, nested)).status, 200);

      const take = await rawPost(
        `${g.gateway.url}${GatewayPaths.take}`,
        { authorization: `Bearer ${KEYS.bob}` },
        '{"task_id":"one","task_id":"two"}',
      );
      assert.equal(take.status, 400);
      assert.match((JSON.parse(take.text) as { error: { message: string } }).error.message, /"task_id" appears twice/);
      for (const task of ['one', 'two'])
        assert.equal((await g.bob.take(task)).body.reused, false, `the refused take gave bob no ticket for ${task}`);
    });

    it('item 12: outside --demo, /metrics and /healthz answer nobody unless an ops token or ops address is set; in --demo they answer', async () => {
      const g = await suite.start();
      for (const path of [GatewayPaths.metrics, GatewayPaths.healthz]) {
        const answer = await fetch(g.gateway.url + path);
        assert.equal(answer.status, 401, path);
        assert.match(((await answer.json()) as { error: { message: string } }).error.message, /OFFPEAK_GATEWAY_OPS_TOKEN|--ops-listen/);
        assert.equal(
          (await fetch(g.gateway.url + path, { headers: { authorization: `Bearer ${KEYS.alice}` } })).status,
          401,
          `${path} with a user key`,
        );
      }
      await g.close();
      const demo = await suite.start({ demo: true });
      for (const path of [GatewayPaths.metrics, GatewayPaths.healthz])
        assert.equal((await fetch(demo.gateway.url + path)).status, 200, `${path} in --demo`);
    });

    it('item 12: sockets that never finish their headers are closed after the headers timeout and leave the connection cap free', async function () {
      this.timeout(60_000);
      const g = await suite.start({ headersTimeoutMs: 500, maxConnections: 3 });
      const stalled = await Promise.all([0, 1, 2].map(() => connect(g.gateway.url)));
      sockets.push(...stalled);
      for (const socket of stalled) {
        socket.resume(); // read what the gateway answers, so its close is seen
        socket.write(`GET ${GatewayPaths.clientConfigs} HTTP/1.1\r\nhost: 127.0.0.1\r\n`); // never the blank line
      }
      await until(() => g.gateway.openConnections === 3, 'three connections');
      const allClosed = await within(Promise.all(stalled.map(closed)), 20_000);
      assert.ok(allClosed, 'the gateway closed the sockets that never finished their headers');
      const fresh = await connect(g.gateway.url);
      sockets.push(fresh);
      assert.match(await answerOrClose(fresh, configsRequest(KEYS.alice)), /^HTTP\/1\.1 200 /, 'the cap has room again');
    });

    it('item 12: one address holds at most its cap of connections that showed no key; one that authenticates stops counting', async function () {
      this.timeout(60_000);
      const g = await suite.start({ maxUnauthenticatedPerAddress: 2, maxConnections: 100 });
      const first = await connect(g.gateway.url);
      const second = await connect(g.gateway.url);
      sockets.push(first, second);
      await until(() => g.gateway.openConnections === 2, 'two connections');
      const third = await connect(g.gateway.url);
      sockets.push(third);
      assert.equal(await answerOrClose(third, configsRequest(KEYS.alice)), '', 'a third connection without a key is closed unanswered');

      assert.match(await answerOrClose(first, configsRequest(KEYS.alice)), /^HTTP\/1\.1 200 /, 'a connection inside the cap is served');
      const fourth = await connect(g.gateway.url);
      sockets.push(fourth);
      assert.match(await answerOrClose(fourth, configsRequest(KEYS.bob)), /^HTTP\/1\.1 200 /, 'room again once the first showed its key');
    });
  });

describe('reference gateway: users and keys on the command line (real process)', function () {
  this.timeout(120_000);
  const running: RunningGateway[] = [];
  const dir = new TempDir();
  after(() => dir.remove());
  afterEach(async () => {
    for (const g of running.splice(0)) {
      g.child.kill('SIGTERM');
      await g.exited;
    }
  });

  it('item 12: --user id:key warns that the key is in argv; users with apiKeySha256 in the config file start without the warning', async () => {
    const key = 'flag-key-0123456789';
    const flagged = await spawnGateway(['--port', '0', '--store', 'memory', '--log-level', 'silent', '--user', `flagged:${key}`]);
    running.push(flagged);
    assert.match(flagged.stderr(), /warning: --user puts API keys on the command line.*apiKeySha256/);
    assert.equal((await new GatewayTestClient(flagged.url, key).configs()).status, 200, 'the flag still works');

    const config = dir.file('gateway.json');
    writeFileSync(config, JSON.stringify({ users: [{ id: 'hashed', apiKeySha256: createHash('sha256').update(key).digest('hex') }] }));
    const hashed = await spawnGateway(['--port', '0', '--store', 'memory', '--log-level', 'silent', '--config', config]);
    running.push(hashed);
    assert.doesNotMatch(hashed.stderr(), /warning/);
    const configs = await new GatewayTestClient(hashed.url, key).configs();
    assert.equal(configs.status, 200, 'the key works through its hash');
    assert.equal(errorOf(await new GatewayTestClient(hashed.url, 'some-other-key-0123').configs()).code, 'unauthorized');
  });
});
