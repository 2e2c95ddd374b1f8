// A task that names no model (the form's "Gateway default") runs on the model the gateway names
// as its default in its configs, through a real HostEngine, the real reference gateway and the
// reference agent, in front of the scripted fake model upstream.
import assert from 'node:assert/strict';
import path from 'node:path';
import { systemClock } from '../../src/core/clock';
import { isTerminalStatus } from '../../src/core/types';
import { HostEngine } from '../../src/engine/host-engine';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { waitFor } from './test-engine';
import { referenceAgentArgv } from '../support/source-bundle';

describe('default model (host engine, real gateway)', function () {
  this.timeout(90_000);
  let world: GatewayWorld;
  let engine: HostEngine | undefined;

  afterEach(async () => {
    await engine?.dispose();
    engine = undefined;
    await world.close();
  });

  it("item 9: a task without a model runs on the gateway's default model", async () => {
    world = await startWorld({
      models: [
        { id: 'model-first', display_name: 'First' },
        { id: 'model-default', display_name: 'Default' },
      ],
      defaultModel: 'model-default',
      // Refuse other models rather than map them, so only the extension's choice can succeed.
      unknownModel: 'reject',
    });
    world.upstream.setDefaultReply({ kind: 'text', text: 'done' });
    engine = await HostEngine.start({
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: async () => USER_KEY,
      clock: systemClock,
      windowId: 'window-1',
      workspaceKeys: () => [],
      agent: () => 'reference',
      referenceAgent: { command: process.execPath, argsPrefix: referenceAgentArgv(), env: { OFFPEAK_AGENT_RETRY_BASE_MS: '50' } },
      claudeCommand: () => 'claude',
      keepAwake: () => false,
      sync: { longPollMs: 2_000, fallbackPollMs: 300, coalesceMs: 300 },
    });
    const live = engine;
    await live.service.availability.refresh();
    const ws = makeGitWorkspace(world.root);
    const task = await live.service.create({ title: 'no model', prompt: 'say hi', permissionMode: 'plan', workspacePath: ws, model: null });
    const done = await waitFor(
      () => {
        const t = live.service.getTask(task.id);
        return t && isTerminalStatus(t.status) ? t : undefined;
      },
      'the task to finish',
      60_000,
    );
    assert.equal(done.status, 'completed', `failure: ${done.failureReason ?? ''}`);
    const models = world.upstream.messageRequests().map((r) => (r.body as { model?: string }).model);
    assert.ok(models.length > 0, 'the agent reached the model');
    assert.deepEqual([...new Set(models)], ['model-default']);
  });
});
