// The first-run walkthrough's steps complete from the real state (docs/flows.md#first-run): the
// context keys the window sets, from the panel's setup line and the task DB.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  openSettingCommand,
  setupView,
  walkthroughKeys,
  walkthroughStepsByKey,
  type SetupInputs,
  type WalkthroughManifest,
} from '../../src/panel/setup-line';

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
const fresh = { engineStarted: true, hasGatewayKey: false, taskCount: 0, reviewed: false };

describe('first-run walkthrough: steps complete from the real state', () => {
  it('personal mode, reference agent, no key: the mode works, the credential step waits for the model API key', () => {
    assert.deepEqual(walkthroughKeys(setupView(personal), fresh), {
      modeReady: true,
      teamMode: false,
      credentialReady: false,
      taskQueued: false,
      reviewed: false,
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
      reviewed: false,
    });
    const keyed = walkthroughKeys(team, { ...fresh, hasGatewayKey: true });
    assert.equal(keyed.modeReady && keyed.credentialReady, true);
  });

  it('a queued task and a review (or merge) complete the last two steps; an engine that did not start completes no mode', () => {
    const keys = walkthroughKeys(setupView(personal), { ...fresh, taskCount: 1, reviewed: true });
    assert.equal(keys.taskQueued && keys.reviewed, true);
    assert.equal(walkthroughKeys(setupView(personal), { ...fresh, engineStarted: false }).modeReady, false);
  });

  it("the manifest's walkthrough has its steps (a credential step per mode), each completed by these keys (or the hours setting, or Review)", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      contributes: { walkthroughs: { id: string; steps: { id: string; completionEvents: string[]; media: { markdown: string } }[] }[] };
    };
    const steps = manifest.contributes.walkthroughs[0].steps;
    assert.deepEqual(
      steps.map((s) => s.id),
      ['mode', 'agent', 'agentTeam', 'hours', 'firstTask', 'morning'],
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
      credentialReady: ['offpeak.off-peak-tasks#firstRun#agent', 'offpeak.off-peak-tasks#firstRun#agentTeam'],
      teamMode: ['offpeak.off-peak-tasks#firstRun#hours'],
      taskQueued: ['offpeak.off-peak-tasks#firstRun#firstTask'],
      reviewed: ['offpeak.off-peak-tasks#firstRun#morning'],
    });
    assert.deepEqual([...walkthroughStepsByKey({}, 'x.y')], []);
  });

  type Step = { id: string; title: string; description: string; when?: string; completionEvents: string[] };
  const walkthroughSteps = (): Step[] =>
    (
      JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
        contributes: { walkthroughs: { steps: Step[] }[] };
      }
    ).contributes.walkthroughs[0].steps;
  const links = (step: Step) =>
    [...step.description.matchAll(/\[([^\]]+)\]\(command:([\w.]+)(?:\?([^)]*))?\)/g)].map((m) => ({
      label: m[1],
      command: m[2],
      args: m[3] ? (JSON.parse(decodeURIComponent(m[3])) as unknown[]) : [],
    }));

  it("item 5: the morning step ticks only after a review or a merge, never because a finished task's result was seen", () => {
    const morning = walkthroughSteps().find((s) => s.id === 'morning')!;
    assert.deepEqual(morning.completionEvents.sort(), ['onCommand:offPeak.reviewChanges', 'onContext:offPeak.walkthrough.reviewed']);
    assert.equal(walkthroughKeys(setupView(personal), { ...fresh, taskCount: 1 }).reviewed, false, 'a task that only finished');
    assert.equal(walkthroughKeys(setupView(personal), { ...fresh, taskCount: 1, reviewed: true }).reviewed, true);
  });

  it("item 5: team mode's credential step is the gateway key (Set Gateway API Key…), personal mode's the model key; each shows in its own mode only", () => {
    const steps = walkthroughSteps();
    const personalStep = steps.find((s) => s.id === 'agent')!;
    const teamStep = steps.find((s) => s.id === 'agentTeam')!;
    assert.equal(personalStep.when, '!offPeak.walkthrough.teamMode');
    assert.equal(teamStep.when, 'offPeak.walkthrough.teamMode');
    assert.deepEqual(
      links(teamStep).map((l) => [l.label, l.command]),
      [
        ['Set Gateway API Key…', 'offPeak.setApiKey'],
        ['Choose the agent', 'offPeak.openSetting'],
      ],
    );
    assert.ok(!teamStep.description.includes('Model API Key'), teamStep.description);
    assert.ok(links(personalStep).some((l) => l.label === 'Set Model API Key…' && l.command === 'offPeak.setModelApiKey'));
  });

  it('item 5: every setting link opens its machine setting where this window can change it (the Remote tab in a remote or browser window); "Queue a task" focuses the panel\'s form', () => {
    const all = walkthroughSteps().flatMap(links);
    const settingLinks = all.filter((l) => l.command.includes('ettings') || l.command === 'offPeak.openSetting');
    assert.ok(settingLinks.length >= 3, JSON.stringify(all));
    for (const l of settingLinks) assert.equal(l.command, 'offPeak.openSetting', l.label);
    assert.deepEqual(all.find((l) => l.label === 'Set the hours')?.args, ['offPeak.personal.hours']);
    assert.deepEqual(openSettingCommand('offPeak.personal.hours', 'localhost:8080'), {
      command: 'workbench.action.openRemoteSettings',
      args: { query: 'offPeak.personal.hours' },
    });
    assert.deepEqual(openSettingCommand('offPeak.personal.hours', 'ssh-remote'), {
      command: 'workbench.action.openRemoteSettings',
      args: { query: 'offPeak.personal.hours' },
    });
    assert.deepEqual(openSettingCommand('offPeak.agent', undefined), {
      command: 'workbench.action.openSettings',
      args: { query: 'offPeak.agent' },
    });
    const queue = all.find((l) => l.label === 'Queue a task')!;
    assert.deepEqual([queue.command, queue.args], ['offPeak.openPanel', [{ focusForm: true }]]);
  });

  it('item 8: walkthrough step texts show no literal backticks (a step description renders links only)', () => {
    for (const step of walkthroughSteps()) assert.ok(!step.description.includes('`'), `${step.id}: ${step.description}`);
  });
});
