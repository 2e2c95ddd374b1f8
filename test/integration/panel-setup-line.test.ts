// The panel's "what will happen" line (docs/flows.md#what-the-panel-says) over the real webview
// protocol (a MessageChannel, the real TaskService on a sql.js file and the real reference gateway
// on loopback): the mode, the agent, whose credential, the model API's host and when tasks run,
// in team mode and in personal mode, as the webview receives (and validates) them and words them.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { hoursNextOpening } from '../../src/personal/personal-config';
import { machineSettingKeys, setupView, type SetupInputs } from '../../src/panel/setup-line';
import type { SetupView } from '../../src/protocol/webview';
import { setupRunsText } from '../../webview/format';
import { connect } from './panel-link';
import { World } from './service-harness';

async function until<T>(what: string, fn: () => T | undefined): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('panel: the mode / agent / credential line', () => {
  let world: World;
  let link: ReturnType<typeof connect> | undefined;

  beforeEach(async () => {
    world = await World.start();
    await world.openWindow();
  });
  afterEach(async () => {
    link?.close();
    link = undefined;
    await world.close();
  });

  async function lineFor(inputs: SetupInputs): Promise<SetupView> {
    link = connect({
      service: world.windows[0].service,
      store: world.windows[0].store,
      clock: world.clock,
      hasApiKey: () => true,
      setup: async () => setupView(inputs),
    });
    link.webview.channel.ready();
    return until('a snapshot with the line', () => link!.webview.states.at(-1)?.setup);
  }

  const base: SetupInputs = {
    mode: 'gateway',
    gatewayUrl: '',
    agentSetting: 'auto',
    agent: 'reference',
    modelCredential: 'claudeLogin',
    baseUrl: 'https://api.anthropic.com',
    hasModelKey: false,
    hours: 'always',
    hoursOpenAt: null,
  };

  it("team mode: the gateway's host, the agent auto chose, the gateway's account; the Model list's first choice is the gateway's default", async () => {
    const setup = await lineFor({ ...base, gatewayUrl: world.gateway.url });
    assert.equal(setup.mode, 'team');
    assert.equal(setup.modeText, `Team gateway ${new URL(world.gateway.url).host}`);
    assert.equal(setup.agentText, 'Reference agent (Claude Code not found)');
    assert.match(setup.credentialText, /gateway API key/);
    assert.equal(setup.modelApiHost, null);
    assert.equal(setup.defaultModelText, 'Gateway default');
    assert.equal(setupRunsText(setup, 0), 'tasks run when the gateway admits them');
  });

  it('personal mode with Claude Code found: its own login, no key asked for, the model API host, and when the hours next open to the minute', async () => {
    const now = Date.UTC(2026, 11, 1, 21, 48); // 21:48 UTC; the hours open at 01:00 UTC
    const hoursOpenAt = hoursNextOpening('01:00-07:00', now, 'UTC');
    assert.equal(hoursOpenAt, Date.UTC(2026, 11, 2, 1, 0));
    const setup = await lineFor({
      ...base,
      mode: 'personal',
      agent: 'claude-code',
      baseUrl: 'https://models.example.com/v1',
      hours: '01:00-07:00',
      hoursOpenAt,
    });
    assert.equal(setup.mode, 'personal');
    assert.equal(setup.modeText, 'Personal mode');
    assert.equal(setup.agentText, 'Claude Code (found)');
    assert.equal(setup.credentialText, 'your Claude Code login');
    assert.equal(setup.missing, undefined, 'no key is asked for');
    assert.equal(setup.modelApiHost, 'models.example.com');
    assert.equal(setup.defaultModelText, "Claude Code's default model");
    const at = new Date(Date.UTC(2026, 11, 2, 1, 0)).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
    assert.equal(setupRunsText(setup, now), `tasks run at ${at}, in 3h 12m (hours 01:00-07:00)`);
    assert.equal(hoursNextOpening('01:00-07:00', Date.UTC(2026, 11, 2, 3, 0), 'UTC'), null, 'open now: no opening to wait for');
  });

  it('personal mode with the reference agent and no key: the key is missing, and the line names the command that sets it', async () => {
    const setup = await lineFor({ ...base, mode: 'personal', agent: 'reference', agentSetting: 'reference' });
    assert.equal(setup.agentText, 'Reference agent');
    assert.equal(setup.credentialText, 'your model API key (not set)');
    assert.match(setup.missing ?? '', /Set Model API Key/);
    assert.equal(setup.modelApiHost, 'api.anthropic.com');
    assert.equal(setupRunsText(setup, 0), 'tasks run any time');
  });

  it('platform: a remote window whose remote has none of the machine settings set says it runs there with default settings and where they come from; one setting set there, or a local window, says nothing of it', async () => {
    const setup = await lineFor({ ...base, gatewayUrl: world.gateway.url, remote: { name: 'ssh-remote', machineSettingsSet: false } });
    assert.equal(
      setup.remoteText,
      "Remote-SSH window: Off-Peak runs on the remote machine with default settings. Its machine settings come from the remote's settings (Preferences: Open Remote Settings), not your local ones.",
    );
    assert.equal(setup.modeText, `Team gateway ${new URL(world.gateway.url).host}`, 'the rest of the line as in a local window');
    assert.equal(setupView({ ...base, remote: { name: 'wsl', machineSettingsSet: true } }).remoteText, undefined);
    assert.equal(setupView(base).remoteText, undefined);
    assert.match(
      setupView({ ...base, remote: { name: 'some-new-remote', machineSettingsSet: false } }).remoteText ?? '',
      /^some-new-remote window: /,
    );
    // The settings looked at are package.json's machine-scoped ones.
    const keys = machineSettingKeys(JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')));
    assert.ok(keys.includes('offPeak.gatewayUrl') && keys.includes('offPeak.mode') && keys.includes('offPeak.agent'), keys.join(', '));
    assert.ok(!keys.includes('offPeak.keepAwake'), 'a window setting is not one of them');
  });

  it('item 5: personal mode with Claude Code and no login of its own: the line says so before anything is queued, naming where Claude Code was found, and the step waits', async () => {
    const setup = await lineFor({
      ...base,
      mode: 'personal',
      agent: 'claude-code',
      claudeLogin: { missing: true, found: '/opt/tools/claude' },
    });
    assert.equal(setup.credentialText, 'your Claude Code login (not logged in)');
    assert.equal(
      setup.missing,
      'Claude Code is not logged in: run /opt/tools/claude once in a terminal to log in, or set "Off-Peak › Personal: Model Credential" to apiKey and run "Off-Peak: Set Model API Key…".',
    );
    assert.equal(
      setupView({ ...base, mode: 'personal', agent: 'claude-code', claudeLogin: { missing: false, found: 'claude' } }).missing,
      undefined,
    );
  });
});
