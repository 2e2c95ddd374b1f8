// The reference gateway's credential passthrough (passClientCredential; personal mode's login,
// docs/architecture.md#personal-mode): a model request that shows its gateway key in x-offpeak-key
// goes upstream with the client's own Authorization, untouched, and nothing of the gateway's; a
// request that authenticates the usual way (its Authorization IS the gateway key) goes up with the
// gateway's model key, never with the client's header. The local key never goes upstream.
// Real gateway on loopback; the model API is the scripted fixture.
import assert from 'node:assert/strict';
import { systemClock } from '../../src/core/clock';
import { GatewayClient } from '../../src/gateway-client/client';
import { startGateway, type GatewayServer } from '../../src/gateway/http/server';
import { LOCAL_KEY_HEADER, TICKET_HEADER } from '../../src/protocol/gateway';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';

const LOCAL_KEY = 'opk-local-passthrough-test-key-0001';
const LOGIN = 'sk-ant-oat01-FAKE-login-of-the-agent';

describe('gateway: passClientCredential', function () {
  this.timeout(30_000);
  let upstream: FakeAnthropicUpstream;
  let gateway: GatewayServer;

  beforeEach(async () => {
    upstream = await FakeAnthropicUpstream.start();
    upstream.setDefaultReply({ kind: 'text', text: 'ok' });
    gateway = await startGateway({
      config: {
        port: 0,
        store: 'memory',
        alwaysOpen: true,
        promoteIntervalMs: 0,
        users: [{ id: 'me', apiKey: LOCAL_KEY }],
        upstreamUrl: upstream.url,
        passClientCredential: true,
        logLevel: 'silent',
      },
      upstreamApiKey: async () => 'sk-ant-api03-model-key',
    });
  });
  afterEach(async () => {
    await gateway.close(0);
    await upstream.close();
  });

  async function admittedTicket(taskId: string): Promise<string> {
    const client = new GatewayClient({ baseUrl: gateway.url, apiKey: () => LOCAL_KEY, clock: systemClock });
    const take = await client.take(taskId);
    await gateway.tick();
    return take.ticketId;
  }

  const messages = (headers: Record<string, string>) =>
    fetch(`${gateway.url}/api/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-beta': 'oauth-2025-04-20', ...headers },
      body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });

  it("x-offpeak-key + the agent's own Authorization: the login goes upstream unchanged (with its betas), no model key and no local key", async () => {
    const ticket = await admittedTicket('t1');
    const res = await messages({ [LOCAL_KEY_HEADER]: LOCAL_KEY, authorization: `Bearer ${LOGIN}`, [TICKET_HEADER]: ticket });
    assert.equal(res.status, 200, await res.text());
    const seen = upstream.messageRequests()[0].headers;
    assert.equal(seen.authorization, `Bearer ${LOGIN}`);
    assert.equal(seen['anthropic-beta'], 'oauth-2025-04-20');
    assert.equal(seen['x-api-key'], undefined);
    assert.equal(seen[LOCAL_KEY_HEADER], undefined);
    assert.ok(!JSON.stringify(seen).includes(LOCAL_KEY));
  });

  it('the usual Bearer gateway key: upstream gets the model key, never the Authorization the client sent (its gateway key)', async () => {
    const ticket = await admittedTicket('t2');
    const res = await messages({ authorization: `Bearer ${LOCAL_KEY}`, [TICKET_HEADER]: ticket });
    assert.equal(res.status, 200, await res.text());
    const seen = upstream.messageRequests()[0].headers;
    assert.equal(seen['x-api-key'], 'sk-ant-api03-model-key');
    assert.equal(seen.authorization, undefined);
    assert.ok(!JSON.stringify(seen).includes(LOCAL_KEY));
  });
});
