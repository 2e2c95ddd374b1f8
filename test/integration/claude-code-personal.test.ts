// Real Claude Code through personal mode (issue 21 items 1 and 3; docs/architecture.md#personal-mode):
// the real `claude` CLI (installed under .tools/ by scripts/setup-claude-code.ts) runs a task
// through the local ticket proxy and the LOCAL AUTHORITY (the reference gateway in this process,
// its sql.js ticket file), in front of the scripted fake model API (a fixture). Once with the
// model API key (`modelCredential` apiKey: Claude Code gets the dummy token, the authority adds
// the key), once with Claude Code's own credential (`claudeLogin`: here a fake sk-ant-oat01 token
// in its environment stands in for its login), which must reach the model API unchanged; and once
// with no login at all (a home and config folder without one), as a new user's first task.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureClaudeCode } from '../../scripts/setup-claude-code';
import type { HostEngine } from '../../src/engine/host-engine';
import type { LocalAuthority } from '../../src/personal/local-authority';
import { makeGitWorkspace } from '../e2e/gateway-fixture';
import { startPersonalTestEngine, waitFor } from '../e2e/test-engine';
import { FakeAnthropicUpstream, type RecordedRequest, type ScriptedReply } from '../fixtures/fake-anthropic-upstream';

const MODEL_KEY = 'sk-ant-api03-personal-model-key-for-claude';
const LOGIN = 'sk-ant-oat01-FAKE-claude-code-login-0123456789';

type Body = { tools?: { name: string }[]; messages?: { role: string; content: unknown }[] };

/** Writes the file once, then (a tool result in the conversation) finishes. */
function scriptedModel(request: RecordedRequest): ScriptedReply {
  const body = request.body as Body;
  if (!(body.tools ?? []).some((t) => t.name === 'Bash')) return { kind: 'text', text: 'ok' }; // auxiliary requests
  if (JSON.stringify(body.messages ?? []).includes('tool_result')) return { kind: 'text', text: 'Done through personal mode.' };
  return { kind: 'tool_use', name: 'Bash', input: { command: 'echo personal > personal.txt', description: 'write the file' } };
}

describe('Claude Code through personal mode (real claude CLI, local authority)', function () {
  let claude: string;
  let root: string;
  let upstream: FakeAnthropicUpstream;
  let running: { engine: HostEngine; authority: LocalAuthority } | undefined;

  before(function () {
    this.timeout(20 * 60_000); // first run installs Claude Code from npm
    claude = ensureClaudeCode((line) => console.log(`      ${line}`));
  });
  beforeEach(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-claude-personal-'));
    upstream = await FakeAnthropicUpstream.start();
    upstream.setDefaultReply(scriptedModel);
  });
  afterEach(async () => {
    await running?.engine.dispose();
    await running?.authority.dispose();
    running = undefined;
    await upstream.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** One task through personal mode: `login` is Claude Code's own ('none': not logged in), else the model API key is used. */
  async function endedTask(login: 'key' | 'own' | 'none'): Promise<{ status: string; failureReason: string | null; ws: string }> {
    const ws = makeGitWorkspace(root, 'ws');
    running = await startPersonalTestEngine({
      storageDir: path.join(root, 'globalStorage'),
      agent: 'claude-code',
      claudeCommand: claude,
      claudeConfigDir: path.join(root, 'claude-config'),
      claudeEnv:
        login === 'own'
          ? { ANTHROPIC_AUTH_TOKEN: LOGIN }
          : login === 'none'
            ? { HOME: fs.mkdtempSync(path.join(root, 'home-')) }
            : undefined,
      workspaceKeys: [ws],
      personal: { upstreamUrl: upstream.url, modelApiKey: login === 'key' ? MODEL_KEY : undefined, claudeOwnLogin: login !== 'key' },
    });
    await running.engine.service.availability.refresh();
    const task = await running.engine.service.create({
      title: 'personal',
      prompt: 'Write personal.txt',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      isolation: 'inPlace',
    });
    const done = await waitFor(
      () => {
        const t = running!.engine.service.getTask(task.id)!;
        return t.status === 'completed' || t.status === 'failed' ? t : undefined;
      },
      'the task to end',
      180_000,
    );
    return { status: done.status, failureReason: done.failureReason, ws };
  }

  async function runTask(ownLogin: boolean): Promise<void> {
    const done = await endedTask(ownLogin ? 'own' : 'key');
    assert.equal(done.status, 'completed', done.failureReason ?? '');
    assert.equal(fs.readFileSync(path.join(done.ws, 'personal.txt'), 'utf8'), 'personal\n');
  }

  it('with the model API key: completes; every model request reached the model API with the key and no other credential', async function () {
    this.timeout(240_000);
    await runTask(false);
    const requests = upstream.messageRequests();
    assert.ok(requests.length >= 2);
    for (const r of requests) {
      assert.equal(r.headers['x-api-key'], MODEL_KEY);
      assert.equal(r.headers.authorization, undefined, 'the dummy token stayed in the proxy');
    }
  });

  it("with Claude Code's own credential: completes; it reached the model API unchanged, with no key of ours", async function () {
    this.timeout(240_000);
    await runTask(true);
    const requests = upstream.messageRequests();
    assert.ok(requests.length >= 2);
    for (const r of requests) {
      assert.equal(r.headers.authorization, `Bearer ${LOGIN}`);
      assert.equal(r.headers['x-api-key'], undefined);
      assert.equal(r.headers['x-offpeak-key'], undefined);
    }
  });

  it('with no login of its own (a home and config folder without one): the task fails saying Claude Code is not logged in and how to log in, before any model request', async function () {
    this.timeout(240_000);
    const done = await endedTask('none');
    assert.equal(done.status, 'failed');
    assert.match(
      done.failureReason ?? '',
      /^Claude Code is not logged in \(it said: .*Not logged in.*\)\. Run `[^`]*claude(\.exe)?` once in a terminal to log in, or set .*Model Credential.* to apiKey/,
    );
    assert.equal(upstream.messageRequests().length, 0);
  });
});
