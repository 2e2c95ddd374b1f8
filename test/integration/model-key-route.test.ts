// The model route of an interactive reference-agent session (docs/flows.md#open-session): a real
// loopback listener in front of the scripted fake model upstream (a fixture standing in for the
// model API). The agent's own credentials never pass; the user's model key is added, read at each
// request; without a key the request is refused and not forwarded.
import assert from 'node:assert/strict';
import { LoopbackProxyServer } from '../../src/agent/proxy/loopback-proxy-server';
import { openModelKeyRoute } from '../../src/agent/proxy/model-key-proxy';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';

describe('model route of an interactive session (real listener, fake upstream)', () => {
  let upstream: FakeAnthropicUpstream;
  let listener: LoopbackProxyServer;
  beforeEach(async () => {
    upstream = await FakeAnthropicUpstream.start();
    listener = new LoopbackProxyServer();
  });
  afterEach(async () => {
    await listener.close();
    await upstream.close();
  });

  const ask = (baseUrl: string) =>
    fetch(`${baseUrl}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer offpeak-proxy-dummy',
        'x-api-key': 'agent-chosen',
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    });

  it("forwards with the user's key in place of the agent's credentials, read at each request; refuses without a key", async () => {
    let key: string | undefined = 'sk-own-1';
    const route = await openModelKeyRoute(listener, { baseUrl: upstream.url, apiKey: async () => key });
    upstream.enqueue({ kind: 'text', text: 'one' }, { kind: 'text', text: 'two' });
    assert.equal((await ask(route.baseUrl)).status, 200);
    key = 'sk-own-2';
    assert.equal((await ask(route.baseUrl)).status, 200);
    const [first, second] = upstream.messageRequests();
    assert.deepEqual(
      [first.headers['x-api-key'], first.headers.authorization, second.headers['x-api-key']],
      ['sk-own-1', undefined, 'sk-own-2'],
    );

    key = undefined;
    const refused = await ask(route.baseUrl);
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('x-should-retry'), 'false');
    assert.match(await refused.text(), /Set Model API Key/);
    assert.equal(upstream.messageRequests().length, 2, 'nothing forwarded without a key');
  });
});
