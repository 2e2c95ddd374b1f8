// One loopback listener per window for all segment proxies, each segment with its own secret.
import assert from 'node:assert/strict';
import { LoopbackProxyServer } from '../../src/agent/proxy/loopback-proxy-server';
import { TicketProxy } from '../../src/agent/proxy/ticket-proxy';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';

describe("a window's loopback proxy listener (shared by its segments)", () => {
  let upstream: FakeAnthropicUpstream;
  let listener: LoopbackProxyServer;
  const proxies: TicketProxy[] = [];

  const segment = async (ticketId: string) => {
    const proxy = await TicketProxy.start({
      upstreamBaseUrl: `${upstream.url}/api/anthropic`,
      apiKey: 'user-secret-key',
      ticketId,
      listener,
    });
    proxies.push(proxy);
    return proxy;
  };
  const post = (baseUrl: string) =>
    fetch(`${baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer agent-dummy' },
      body: JSON.stringify({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });

  beforeEach(async () => {
    upstream = await FakeAnthropicUpstream.start();
    listener = new LoopbackProxyServer();
  });
  afterEach(async () => {
    for (const p of proxies.splice(0)) await p.close();
    await listener.close();
    await upstream.close();
  });

  it('two segments of one window use the same port, each with its own secret and its own ticket', async () => {
    const first = await segment('T-1');
    const second = await segment('T-2');
    const [a, b] = [new URL(first.baseUrl), new URL(second.baseUrl)];
    assert.equal(a.hostname, '127.0.0.1');
    assert.equal(a.port, b.port, 'one listening port');
    assert.equal(Number(a.port), listener.listeningPort);
    assert.notEqual(a.pathname, b.pathname, 'a secret per segment');
    for (const base of [first.baseUrl, second.baseUrl]) {
      const res = await post(base);
      assert.equal(res.status, 200);
      await res.text();
    }
    assert.deepEqual(
      upstream.messageRequests().map((r) => r.headers['x-off-peak-ticket-id']),
      ['T-1', 'T-2'],
      "each secret carries its own segment's ticket",
    );
  });

  it("a segment that ended has its secret refused (404, never forwarded), while another segment's still works", async () => {
    const ended = await segment('T-ended');
    const live = await segment('T-live');
    await ended.close();
    const refused = await post(ended.baseUrl);
    assert.equal(refused.status, 404);
    await refused.text();
    assert.equal(upstream.requests.length, 0, 'nothing reached the gateway');
    const ok = await post(live.baseUrl);
    assert.equal(ok.status, 200);
    await ok.text();
    assert.equal(listener.routeCount, 1);
    // A later segment reuses the same listener.
    const next = await segment('T-next');
    assert.equal(new URL(next.baseUrl).port, new URL(live.baseUrl).port);
  });

  it('refuses a new segment once the window closed its listener', async () => {
    await segment('T-1');
    await listener.close();
    await assert.rejects(segment('T-2'), /closed/);
  });
});
