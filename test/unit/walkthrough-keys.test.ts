// The first-run walkthrough's steps complete from the real state (docs/flows.md#first-run): the
// context keys the window sets, from the panel's setup line and the task DB.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setupView, walkthroughKeys, walkthroughStepsByKey, type SetupInputs, type WalkthroughManifest } from '../../src/panel/setup-line';

const personal: SetupInputs = {
  mode: 'personal',
  gatewayUrl: '',
  agentSetting: 'auto',
  agent: 'reference',
  modelCredential: 'claudeLogin',
  baseUrl: 'https://api.anthropic.com',
  hasModelKey: false,
  hours: 'always',
  hoursOpenAt: null,
};
const fresh = { engineStarted: true, hasGatewayKey: false, taskCount: 0, lastSeenAt: null };

describe('first-run walkthrough: steps complete from the real state', () => {
  it('personal mode, reference agent, no key: the mode works, the credential step waits for the model API key', () => {
    assert.deepEqual(walkthroughKeys(setupView(personal), fresh), {
      modeReady: true,
      teamMode: false,
      credentialReady: false,
      taskQueued: false,
      resultSeen: false,
    });
    assert.equal(walkthroughKeys(setupView({ ...personal, hasModelKey: true }), fresh).credentialReady, true);
  });

  it('personal mode with Claude Code found: its own login completes the credential step, no key', () => {
    assert.equal(walkthroughKeys(setupView({ ...personal, agent: 'claude-code' }), fresh).credentialReady, true);
  });

  it('team mode: mode and credential wait for the gateway key; the hours step is done by the gateway', () => {
    const team = setupView({ ...personal, mode: 'gateway', gatewayUrl: 'http://gw:8787' });
    assert.deepEqual(walkthroughKeys(team, fresh), {
      modeReady: false,
      teamMode: true,
      credentialReady: false,
      taskQueued: false,
      resultSeen: false,
    });
    const keyed = walkthroughKeys(team, { ...fresh, hasGatewayKey: true });
    assert.equal(keyed.modeReady && keyed.credentialReady, true);
  });

  it('a queued task and a result seen complete the last two steps; an engine that did not start completes no mode', () => {
    const keys = walkthroughKeys(setupView(personal), { ...fresh, taskCount: 1, lastSeenAt: 1 });
    assert.equal(keys.taskQueued && keys.resultSeen, true);
    assert.equal(walkthroughKeys(setupView(personal), { ...fresh, engineStarted: false }).modeReady, false);
  });

  it("the manifest's walkthrough has the five steps, each completed by these keys (or the hours setting, or Review)", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      contributes: { walkthroughs: { id: string; steps: { id: string; completionEvents: string[]; media: { markdown: string } }[] }[] };
    };
    const steps = manifest.contributes.walkthroughs[0].steps;
    assert.deepEqual(
      steps.map((s) => s.id),
      ['mode', 'agent', 'hours', 'firstTask', 'morning'],
    );
    const keys = new Set(Object.keys(walkthroughKeys(setupView(personal), fresh)).map((k) => `onContext:offPeak.walkthrough.${k}`));
    for (const step of steps) {
      assert.ok(step.completionEvents.length > 0, step.id);
      for (const event of step.completionEvents)
        assert.ok(
          keys.has(event) || event === 'onSettingChanged:offPeak.personal.hours' || event === 'onCommand:offPeak.reviewChanges',
          `${step.id}: ${event}`,
        );
      assert.ok(fs.existsSync(path.join(__dirname, '..', '..', step.media.markdown)), step.media.markdown);
    }
  });

  it('each key names the steps it completes as VS Code ids them (for its "mark step complete"), read from the manifest', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as WalkthroughManifest & {
      publisher: string;
      name: string;
    };
    const steps = walkthroughStepsByKey(manifest, `${manifest.publisher}.${manifest.name}`);
    assert.deepEqual(Object.fromEntries(steps), {
      modeReady: ['offpeak.off-peak-tasks#firstRun#mode'],
      credentialReady: ['offpeak.off-peak-tasks#firstRun#agent'],
      teamMode: ['offpeak.off-peak-tasks#firstRun#hours'],
      taskQueued: ['offpeak.off-peak-tasks#firstRun#firstTask'],
      resultSeen: ['offpeak.off-peak-tasks#firstRun#morning'],
    });
    assert.deepEqual([...walkthroughStepsByKey({}, 'x.y')], []);
  });
});
