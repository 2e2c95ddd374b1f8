// Personal mode, fail fast and say the fix (docs/flows.md#personal-mode): a task whose model
// credential is missing, or whose model API cannot be reached, fails after its first model
// request (the agent is told not to retry) with a reason naming the setting or command that
// fixes it, not the agent's "server-side, usually temporary" text or an internal address. Real
// parts: the local authority (the real gateway code on loopback, a sql.js file), the engine and
// the reference agent process. The model API is the scripted fixture (test/fixtures) or a
// closed port.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { HostEngine } from '../../src/engine/host-engine';
import type { LocalAuthority } from '../../src/personal/local-authority';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';
import { makeGitWorkspace } from './gateway-fixture';
import { startPersonalTestEngine, waitFor } from './test-engine';

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('personal mode: a missing credential or an unreachable model API fails at once, naming the fix (reference agent, local authority)', function () {
  this.timeout(120_000);
  let root: string;
  let upstream: FakeAnthropicUpstream;
  let window: { engine: HostEngine; authority: LocalAuthority } | undefined;

  beforeEach(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-fail-fast-'));
    upstream = await FakeAnthropicUpstream.start();
  });
  afterEach(async () => {
    await window?.engine.dispose();
    await window?.authority.dispose();
    window = undefined;
    await upstream.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function failedTask(upstreamUrl: string, modelApiKey: string | undefined): Promise<{ reason: string; ms: number }> {
    window = await startPersonalTestEngine({
      storageDir: path.join(root, 'globalStorage'),
      agent: 'reference',
      personal: { upstreamUrl, modelApiKey },
    });
    const { engine } = window;
    await waitFor(() => engine.service.isLeader, 'the lease');
    const started = Date.now();
    const task = await engine.service.create({
      title: 'hello',
      prompt: 'create hello.txt',
      permissionMode: 'bypassPermissions',
      workspacePath: makeGitWorkspace(root),
      isolation: 'inPlace',
    });
    await waitFor(() => ['failed', 'completed'].includes(engine.service.getTask(task.id)!.status), 'the task finished', 90_000);
    const ms = Date.now() - started;
    const failed = engine.service.getTask(task.id)!;
    assert.equal(failed.status, 'failed');
    return { reason: failed.failureReason ?? '', ms };
  }

  it('item 5: no model API key (and no login of its own): the task fails after one model request, naming "Off-Peak: Set Model API Key…" as the command is titled', async () => {
    const { reason, ms } = await failedTask(upstream.url, undefined);
    assert.match(reason, /^No model API key is set .*"Off-Peak: Set Model API Key…"/);
    assert.doesNotMatch(
      reason,
      /API error|temporary|127\.0\.0\.1/,
      "the gateway's sentence, not the agent's retry report or an internal address",
    );
    assert.equal(upstream.requests.length, 0, 'nothing reached the model API');
    console.log(`      (failed ${ms} ms after it was queued)`);
  });

  it('a model API that cannot be reached: the task fails after one model request, naming offPeak.personal.baseUrl', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const { reason, ms } = await failedTask(url, 'sk-test-key');
    assert.match(reason, /^The model API http:\/\/127\.0\.0\.1:\d+ cannot be reached \(.*\): check offPeak\.personal\.baseUrl$/);
    assert.doesNotMatch(reason, /API error|temporary/);
    console.log(`      (failed ${ms} ms after it was queued)`);
  });

  it('item 5: a model API that refuses the key (401 authentication_error): the task fails at its first model request, naming "Off-Peak: Set Model API Key…"', async () => {
    upstream.setDefaultReply(() => ({ kind: 'error', status: 401, errorType: 'authentication_error', message: 'invalid x-api-key' }));
    const { reason, ms } = await failedTask(upstream.url, 'sk-wrong-key');
    assert.match(
      reason,
      /^The model API http:\/\/127\.0\.0\.1:\d+ refused the model API key \(401\b.*\): run "Off-Peak: Set Model API Key…"/,
    );
    assert.doesNotMatch(reason, /^API error|temporary/);
    assert.equal(upstream.messageRequests().length, 1, 'one model request, no retries');
    console.log(`      (failed ${ms} ms after it was queued)`);
  });
});
