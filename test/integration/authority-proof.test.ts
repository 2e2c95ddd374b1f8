// Personal mode's channel proves itself before any credential crosses it (issue 38 item 2;
// docs/security.md#windows-named-pipes): a server at the published name that does not hold the
// local key receives nothing secret, and a window takes over instead of following it; another
// user's opens that never prove themselves do not use up the authority's connection bucket.
// Injected: the impostor is a plain Node server this test binds at the name authority.json
// publishes (on Linux only this user could; on Windows any local user can create a pipe whose
// name is free). Runs in the Windows lane too (named pipes under Wine).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { systemClock } from '../../src/core/clock';
import { GatewayClient } from '../../src/gateway-client/client';
import { authorityPaths, readOrCreateLocalKey, writeDiscovery } from '../../src/personal/authority-files';
import { LocalAuthority, type LocalAuthorityOptions } from '../../src/personal/local-authority';
import { FileLock } from '../../src/store/db/file-lock';
import { TicketProxy } from '../../src/agent/proxy/ticket-proxy';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';

const until = async (what: string, ok: () => boolean, tries = 1500) => {
  for (let i = 0; i < tries && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(ok(), what);
};

/** A server that does not hold the key: records every byte it is sent, answers anything (a proof it cannot make, then HTTP 200). */
class Impostor {
  readonly received: Buffer[] = [];
  connections = 0;
  private readonly servers: net.Server[] = [];
  private readonly sockets = new Set<net.Socket>();

  async listen(address: string): Promise<void> {
    const server = net.createServer((socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
      let answered = 0;
      socket.on('data', (chunk: Buffer) => {
        this.received.push(chunk);
        if (answered++ === 0 && !chunk.toString('latin1').startsWith('GET') && !chunk.toString('latin1').startsWith('POST'))
          socket.write(randomBytes(64));
        else socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(address, resolve);
    });
    this.servers.push(server);
  }

  text(): string {
    return Buffer.concat(this.received).toString('latin1');
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(this.servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}

/** Names another user could pick: a pipe under the product's prefix on Windows, a socket in personal/ (injected) elsewhere. */
function impostorAddress(personalDir: string, what: string): string {
  const id = randomBytes(16).toString('hex');
  return process.platform === 'win32' ? `\\\\.\\pipe\\offpeak-${id}-${what}` : path.join(personalDir, `${what}-${id}.sock`);
}

describe('the local authority proves itself before any credential', function () {
  this.timeout(120_000);
  let storageDir: string;
  const closing: (() => Promise<unknown> | unknown)[] = [];

  beforeEach(() => (storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-proof-'))));
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
    fs.rmSync(storageDir, { recursive: true, force: true });
  });

  const options = (over: Partial<LocalAuthorityOptions> = {}): LocalAuthorityOptions => ({
    storageDir,
    settings: () => ({ hours: 'always', modelBaseUrl: 'http://127.0.0.1:9' }),
    modelApiKey: async () => undefined,
    durable: false,
    readyTimeoutMs: 60_000,
    ...over,
  });

  it('item 2: a server without the key bound at the published name receives no credential, and a window takes over instead of following it', async () => {
    const paths = authorityPaths(storageDir);
    const key = readOrCreateLocalKey(paths);
    // The window that ran the authority is gone, its lock not yet seen free; another user's server
    // now holds the names authority.json still publishes.
    const held = new FileLock(paths.lock, { staleMs: 600_000, acquireTimeoutMs: 0 }).tryAcquire();
    assert.ok(held);
    const impostor = new Impostor();
    closing.push(() => impostor.close());
    const address = impostorAddress(paths.dir, 'authority');
    const presence = impostorAddress(paths.dir, 'presence');
    await impostor.listen(address);
    await impostor.listen(presence);
    writeDiscovery(paths, { version: 2, address, presence, pid: process.pid, startedAt: Date.now() }, () => true);

    let window: LocalAuthority | undefined;
    const starting = LocalAuthority.start(options()).then((w) => (window = w));
    closing.push(() => starting.then((w) => w.dispose()));
    await until('the window tried the published name', () => impostor.connections > 0);
    held.release();
    await starting;
    assert.ok(window);
    await until('the window took over', () => window!.serving);

    const client = new GatewayClient({ baseUrl: window.url, channel: window.connect, apiKey: () => window!.key, clock: systemClock });
    assert.deepEqual((await client.availability()).offPeakWindow, { open: true }, "the window's own authority answers");
    assert.notEqual(window.socketPath, address, 'not at the name the impostor holds');
    const seen = impostor.text();
    assert.ok(!seen.includes(key), 'the impostor never saw the local key');
    assert.ok(!/authorization|x-offpeak-key|x-api-key/i.test(seen), 'nor any credential header');
  });

  it("item 2: a running segment's requests follow the authority to the name of its next start; an impostor at the old name receives neither the local key nor the Claude login", async () => {
    const upstream = await FakeAnthropicUpstream.start();
    closing.push(() => upstream.close());
    const runner = await LocalAuthority.start(options({ settings: () => ({ hours: 'always', modelBaseUrl: upstream.url }) }));
    closing.push(() => runner.dispose());
    const window = await LocalAuthority.start(options({ settings: () => ({ hours: 'always', modelBaseUrl: upstream.url }) }));
    closing.push(() => window.dispose());
    assert.equal(window.serving, false);
    const client = new GatewayClient({ baseUrl: window.url, channel: window.connect, apiKey: () => window.key, clock: systemClock });
    const ticketId = (await client.take('task-1')).ticketId;
    // The segment's proxy, as segment-runner.ts starts it with the agent's own login (personal mode).
    const proxy = await TicketProxy.start({
      upstreamBaseUrl: `${window.url}/api/anthropic`,
      upstreamChannel: window.connect,
      apiKey: window.key,
      passAgentCredential: true,
      ticketId,
      holdDefaultMs: 50,
      holdMaxMs: 200,
    });
    closing.push(() => proxy.close());
    const login = `sk-ant-oat01-${randomBytes(12).toString('hex')}`;
    const ask = async () => {
      const answer = await fetch(`${proxy.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${login}` },
        body: JSON.stringify({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
      });
      await answer.arrayBuffer();
      return answer.status;
    };
    assert.equal(await ask(), 200);

    const old = runner.socketPath;
    await runner.dispose();
    await until('the window took over', () => window.serving);
    assert.notEqual(window.socketPath, old, 'each start of the authority listens on a name of its own');
    const impostor = new Impostor();
    closing.push(() => impostor.close());
    await impostor.listen(old);

    assert.equal(await ask(), 200, "answered by the window's authority");
    assert.equal(upstream.messageRequests().length, 2);
    assert.equal(upstream.messageRequests()[1].headers.authorization, `Bearer ${login}`, 'the login reached the model API');
    const seen = impostor.text();
    assert.ok(!seen.includes(window.key) && !seen.includes(login), 'the impostor saw neither');
  });

  it("item 2: another user's opens that never prove themselves do not use up the connection bucket, and are closed", async () => {
    const authority = await LocalAuthority.start(options());
    closing.push(() => authority.dispose());
    // More than the gateway lets one address hold before it authenticates (128; a pipe has no address).
    const opens: net.Socket[] = [];
    for (let i = 0; i < 160; i++) {
      const socket = net.connect({ path: authority.socketPath });
      socket.on('error', () => undefined);
      opens.push(socket);
    }
    closing.push(() => opens.forEach((s) => s.destroy()));
    await Promise.all(
      opens.map((s) => new Promise((resolve) => (s.connecting ? s.once('connect', resolve).once('close', resolve) : resolve(undefined)))),
    );
    const client = new GatewayClient({
      baseUrl: authority.url,
      channel: authority.connect,
      apiKey: () => authority.key,
      clock: systemClock,
    });
    assert.deepEqual((await client.availability()).offPeakWindow, { open: true }, "the window's call goes through");
    await until('the unproven opens are closed', () => opens.every((s) => s.destroyed || s.readableEnded), 3000);
  });
});
