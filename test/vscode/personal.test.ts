// Personal mode inside a real VS Code (issue 21; docs/architecture.md#personal-mode): with no
// gateway URL the extension starts a local authority in its own extension host (127.0.0.1, its
// files under globalStorage/personal/, private), and a task queued from the command runs through
// it to the model API set in offPeak.personal.baseUrl (the scripted fake, a fixture) with the
// model API key set by "Off-Peak: Set Model API Key".
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import type { OffPeakApi } from '../../src/extension';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';
import { waitFor } from './demo-gateway';
import { createTaskConfirmed } from './extension-window';

const EXTENSION_ID = 'offpeak.off-peak-tasks';
const MODEL_KEY = 'sk-ant-api03-vscode-personal-test-key';

describe('Off-Peak Tasks in personal mode in a real VS Code (local authority, scripted model API)', () => {
  let upstream: FakeAnthropicUpstream | undefined;
  let api: OffPeakApi;

  before(async () => {
    api = await vscode.extensions.getExtension<OffPeakApi>(EXTENSION_ID)!.activate();
    upstream = await FakeAnthropicUpstream.start();
    upstream.setDefaultReply({ kind: 'text', text: 'Hello from personal mode.' });
  });

  after(async () => {
    const config = vscode.workspace.getConfiguration('offPeak');
    await config.update('personal.baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('offPeak.clearModelApiKey');
    await upstream?.close();
  });

  it('no gateway URL: this window runs the local authority; a task from the command completes through it with the model API key; its files are private', async function () {
    this.timeout(120_000);
    const config = vscode.workspace.getConfiguration('offPeak');
    assert.equal(config.get('gatewayUrl'), '', 'no gateway URL by default');
    const before = api.engine();
    await config.update('personal.baseUrl', upstream!.url, vscode.ConfigurationTarget.Global);
    // The change restarts the engine (an earlier test's own restart may still be under way): the
    // engine to use is a new one that is still the current one a moment later.
    const engine = await waitFor('the engine to restart in personal mode', async () => {
      const e = await api.whenStarted();
      await new Promise((resolve) => setTimeout(resolve, 500));
      return e && e !== before && api.engine() === e ? e : undefined;
    });
    await vscode.commands.executeCommand('offPeak.setModelApiKey', MODEL_KEY);

    const personalDir = path.join(api.storageDir, 'personal');
    const discovery = JSON.parse(fs.readFileSync(path.join(personalDir, 'authority.json'), 'utf8')) as { pid: number; port: number };
    assert.equal(discovery.pid, process.pid, 'this extension host runs the authority');
    for (const file of ['local-key', 'authority.json', 'gateway.sqlite'])
      assert.equal(fs.statSync(path.join(personalDir, file)).mode & 0o077, 0, `${file} is private`);

    await waitFor('the availability snapshot', async () => (await engine.service.availability.refresh()).status === 'enabled');
    const { taskId } = await createTaskConfirmed({ prompt: 'Say hello.', permissionMode: 'plan' });
    assert.equal(typeof taskId, 'string');
    const done = await waitFor(
      'the task to end',
      () => {
        const t = engine.service.getTask(taskId);
        return t && ['completed', 'failed', 'cancelled'].includes(t.status) ? t : undefined;
      },
      90_000,
    );
    assert.equal(done.status, 'completed', `failure: ${done.failureReason ?? ''}`);
    const requests = upstream!.messageRequests();
    assert.ok(requests.length >= 1);
    assert.equal(requests[0].headers['x-api-key'], MODEL_KEY, 'the model key from SecretStorage reached the model API');
    assert.equal(engine.service.history().filter((h) => h.taskId === taskId).length, 1, 'one History row');
    assert.ok(fs.existsSync(path.join(personalDir, 'tasks', 'tasks-index.sqlite')), "personal mode's own task database");
    await engine.service.delete(taskId);
  });

  it('a burst of setting changes (as typing in the Settings editor makes): one working engine at the end, and never two seen at once', async function () {
    this.timeout(120_000);
    const config = vscode.workspace.getConfiguration('offPeak');
    let most = api.liveEngines();
    const watch = setInterval(() => (most = Math.max(most, api.liveEngines())), 2);
    try {
      // One after the other, as fast as VS Code writes them: each change arrives while the restart
      // for the one before still runs (a restart stops and starts the engine and the authority).
      for (const hours of ['01:00-07:00', '02:00-07:00', '03:00-07:00', '01:00-06:00', 'always']) {
        await config.update('personal.hours', hours, vscode.ConfigurationTarget.Global);
      }
      const engine = await waitFor('the restarts to settle', async () => {
        const e = await api.whenStarted();
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        return e && api.engine() === e ? e : undefined;
      });
      assert.equal(api.liveEngines(), 1, 'one engine runs once the restarts are done');
      assert.equal(most, 1, 'never two engines at once');
      assert.equal((await engine.service.availability.refresh()).status, 'enabled', 'the engine left running works');
    } finally {
      clearInterval(watch);
      await config.update('personal.hours', undefined, vscode.ConfigurationTarget.Global);
    }
  });
});
