// The form's Model list offers what the model API in use serves (docs/flows.md#what-the-panel-says):
// the real reference gateway on loopback (team mode) and personal mode's real local authority ask
// a scripted model upstream (TEST FIXTURE: test/fixtures/fake-anthropic-upstream.ts, standing in
// for the model API) for its `GET /v1/models`; the real gateway client reads the gateway's
// models route; the real panel hands the list to the webview. A failed or empty list leaves the
// default alone, answered 200 with nothing logged above info.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock, systemClock } from '../../src/core/clock';
import { GatewayClient } from '../../src/gateway-client/client';
import type { GatewayConfig } from '../../src/gateway/config';
import { createLogger } from '../../src/gateway/http/logger';
import { GatewayServer } from '../../src/gateway/http/server';
import { modelChoices } from '../../src/panel/model-choices';
import { setupView } from '../../src/panel/setup-line';
import { LocalAuthority } from '../../src/personal/local-authority';
import { GatewayPaths } from '../../src/protocol/gateway';
import { anthropicModelList, FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';
import { connect } from './panel-link';
import { World } from './service-harness';

const USER_KEY = 'sk-offpeak-models-user';
const UPSTREAM_KEY = 'sk-ant-gateway-upstream-key';
const SERVED = [
  { id: 'claude-opus-4-5-20251101', display_name: 'Claude Opus 4.5' },
  { id: 'claude-haiku-4-5-20251001', display_name: 'Claude Haiku 4.5' },
];

describe('the Model list: what the model API serves', function () {
  this.timeout(60_000);
  let upstream: FakeAnthropicUpstream;
  const closing: (() => Promise<unknown>)[] = [];
  const logged: { level: string; msg: string }[] = [];
  const log = createLogger('debug', (line) => void logged.push(JSON.parse(line) as { level: string; msg: string }));

  beforeEach(async () => {
    upstream = await FakeAnthropicUpstream.start();
    logged.length = 0;
    closing.push(() => upstream.close());
  });
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  async function teamGateway(config: Partial<GatewayConfig> = {}): Promise<{ gateway: GatewayServer; client: GatewayClient }> {
    const gateway = await GatewayServer.start({
      config: {
        port: 0,
        store: 'memory',
        promoteIntervalMs: 0,
        users: [{ id: 'u1', apiKey: USER_KEY, plan: 'coding' }],
        upstreamUrl: upstream.url,
        upstreamApiKey: UPSTREAM_KEY,
        models: [],
        ...config,
      },
      clock: new ManualClock(Date.UTC(2026, 11, 2, 2, 0)),
      log,
    });
    closing.push(() => gateway.close(500));
    return { gateway, client: new GatewayClient({ baseUrl: gateway.url, apiKey: () => USER_KEY, clock: systemClock }) };
  }

  const modelAsks = () => upstream.requests.filter((r) => r.method === 'GET' && r.path === '/v1/models');
  const noisy = () => logged.filter((l) => l.level === 'warn' || l.level === 'error');

  it("team mode without an allow-list: the gateway's models route lists what its upstream serves, asked with the gateway's key; the panel's form offers them after the default", async () => {
    upstream.setModelList({ status: 200, body: anthropicModelList(SERVED) });
    const { gateway, client } = await teamGateway();
    const configs = await client.configs();
    const choices = await modelChoices(client, configs);
    assert.deepEqual(
      choices,
      SERVED.map((m) => m.id),
    );
    assert.deepEqual(await client.models(), SERVED);
    const [ask] = modelAsks();
    assert.equal(ask.headers['x-api-key'], UPSTREAM_KEY, "the gateway's own key goes upstream");
    assert.equal(ask.headers['anthropic-version'], '2023-06-01');
    assert.notEqual(ask.headers.authorization, `Bearer ${USER_KEY}`, "the user's gateway key never leaves the gateway");
    assert.equal(modelAsks().length, 1, 'the second ask is answered from the kept list');

    const world = await World.start();
    closing.push(() => world.close());
    await world.openWindow();
    const link = connect({
      service: world.windows[0].service,
      store: world.windows[0].store,
      clock: world.clock,
      hasApiKey: () => true,
      models: () => choices,
      setup: async () =>
        setupView({
          mode: 'gateway',
          gatewayUrl: gateway.url,
          agentSetting: 'reference',
          agent: 'reference',
          modelCredential: 'claudeLogin',
          baseUrl: '',
          hasModelKey: false,
          hours: 'always',
          hoursOpenAt: null,
        }),
    });
    closing.push(async () => link.close());
    link.webview.channel.ready();
    for (let i = 0; i < 400 && !link.webview.states.at(-1)?.setup; i++) await new Promise((r) => setTimeout(r, 5));
    const state = link.webview.states.at(-1);
    assert.deepEqual(
      state?.models,
      SERVED.map((m) => m.id),
    );
    assert.equal(state?.setup?.defaultModelText, 'Gateway default');
  });

  it('the models route is authenticated like the other client routes: no key or a wrong key gets 401, and the upstream is not asked', async () => {
    upstream.setModelList({ status: 200, body: anthropicModelList(SERVED) });
    const { gateway } = await teamGateway();
    const anonymous = await fetch(gateway.url + GatewayPaths.clientModels);
    assert.equal(anonymous.status, 401);
    const wrong = new GatewayClient({ baseUrl: gateway.url, apiKey: () => 'sk-offpeak-not-a-user', clock: systemClock });
    await assert.rejects(wrong.models(), /401|unknown API key/);
    const posted = await fetch(gateway.url + GatewayPaths.clientModels, {
      method: 'POST',
      headers: { authorization: `Bearer ${USER_KEY}` },
    });
    assert.equal(posted.status, 405);
    assert.equal(modelAsks().length, 0);
  });

  it('team mode with an allow-list (--models): the list is the allow-list, the upstream is not asked', async () => {
    upstream.setModelList({ status: 200, body: anthropicModelList(SERVED) });
    const { client } = await teamGateway({ models: [{ id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5' }] });
    assert.deepEqual(await modelChoices(client, await client.configs()), ['claude-sonnet-4-5']);
    assert.equal(modelAsks().length, 0);
  });

  const failures: [string, () => void][] = [
    ['answers 500', () => upstream.setModelList({ status: 500, body: { type: 'error', error: { type: 'api_error', message: 'boom' } } })],
    ['has no list route (404)', () => upstream.setModelList(undefined)],
    ['answers another shape', () => upstream.setModelList({ status: 200, body: { models: ['x'] } })],
    ['lists nothing', () => upstream.setModelList({ status: 200, body: anthropicModelList([]) })],
  ];
  for (const [how, script] of failures) {
    it(`an upstream that ${how}: the route answers an empty list, the form offers the default alone, nothing logged above info`, async () => {
      script();
      const { client } = await teamGateway();
      assert.deepEqual(await client.models(), []);
      assert.deepEqual(await modelChoices(client, await client.configs()), []);
      assert.equal(modelAsks().length, 1, 'the upstream was asked');
      assert.deepEqual(noisy(), []);
    });
  }

  it('an unreachable upstream or none configured: an empty list, no error', async () => {
    const unreachable = await teamGateway({ upstreamUrl: 'http://127.0.0.1:9' });
    assert.deepEqual(await unreachable.client.models(), []);
    const none = await teamGateway({ upstreamUrl: null });
    assert.deepEqual(await none.client.models(), []);
    assert.deepEqual(noisy(), []);
  });

  it('entries a Model list must not offer are dropped (spaces, quotes, control characters, repeats); names are plain text', async () => {
    upstream.setModelList({
      status: 200,
      body: anthropicModelList([
        { id: 'claude-ok-1', display_name: 'OK\u001b[31m red\u0007' },
        { id: 'has space' },
        { id: '"quoted"' },
        { id: 'bell\u0007' },
        { id: 'claude-ok-1' },
        { id: '' },
      ]),
    });
    const { client } = await teamGateway();
    assert.deepEqual(await client.models(), [{ id: 'claude-ok-1', display_name: 'OK red' }]);
  });

  describe('personal mode', () => {
    let storageDir: string;
    beforeEach(() => {
      storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-models-personal-'));
    });
    afterEach(() => fs.rmSync(storageDir, { recursive: true, force: true }));

    async function authority(modelKey: () => string | undefined): Promise<GatewayClient> {
      const a = await LocalAuthority.start({
        storageDir,
        settings: () => ({ hours: 'always', modelBaseUrl: upstream.url }),
        modelApiKey: async () => modelKey(),
        durable: false,
      });
      closing.push(() => a.dispose());
      return new GatewayClient({ baseUrl: a.url, channel: a.connect, apiKey: () => a.key, clock: systemClock });
    }

    it("the local authority asks the configured model API's GET /v1/models with the user's model API key", async () => {
      upstream.setModelList({ status: 200, body: anthropicModelList(SERVED) });
      const client = await authority(() => 'sk-ant-users-own-key');
      assert.deepEqual(
        await modelChoices(client, await client.configs()),
        SERVED.map((m) => m.id),
      );
      const [ask] = modelAsks();
      assert.equal(ask.headers['x-api-key'], 'sk-ant-users-own-key');
    });

    it('no model API key set (e.g. Claude Code with its own login): the default alone, the model API not asked; once a key is set, its list', async () => {
      upstream.setModelList({ status: 200, body: anthropicModelList(SERVED) });
      const modelKey: { value?: string } = {};
      const client = await authority(() => modelKey.value);
      assert.deepEqual(await modelChoices(client, await client.configs()), []);
      assert.equal(modelAsks().length, 0);
      modelKey.value = 'sk-ant-set-later';
      assert.deepEqual(
        await modelChoices(client, await client.configs()),
        SERVED.map((m) => m.id),
      );
    });

    it('item 5: a model API that refuses the model key when its list is asked (401, e.g. after offPeak.personal.baseUrl changed): the window hears the status, to show the fix', async () => {
      upstream.setModelList({
        status: 401,
        body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } },
      });
      const client = await authority(() => 'sk-ant-wrong-key');
      const refused: number[] = [];
      assert.deepEqual(await modelChoices(client, await client.configs(), (status) => refused.push(status)), []);
      assert.deepEqual(refused, [401]);
    });
  });

  it("item 5: team mode says nothing of its own upstream key being refused (the gateway admin's, not the user's)", async () => {
    upstream.setModelList({ status: 401, body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } });
    const { client } = await teamGateway();
    const refused: number[] = [];
    assert.deepEqual(await modelChoices(client, await client.configs(), (status) => refused.push(status)), []);
    assert.deepEqual(refused, []);
  });
});
