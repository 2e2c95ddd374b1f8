// The account's usage limit with the real `claude` CLI (installed under .tools/ by
// scripts/setup-claude-code.ts) in PERSONAL MODE: our local ticket proxy and the local authority
// (the reference gateway in this process, account limits on as personal mode turns them on, on an
// OffsetClock the test moves to the reset), the model API key added by the authority, in front of
// the scripted fake model upstream (a test fixture standing in for the model API) answering with
// the unified rate-limit header shapes. docs/flows.md#usage-limits, docs/architecture.md#personal-mode
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureClaudeCode } from '../../scripts/setup-claude-code';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';
import { systemClock } from '../../src/core/clock';
import type { HostEngine } from '../../src/engine/host-engine';
import { OffsetClock } from '../../src/gateway/authority/offset-clock';
import type { LocalAuthority } from '../../src/personal/local-authority';
import { FakeAnthropicUpstream, usageLimitRejected, type RecordedRequest, type ScriptedReply } from '../fixtures/fake-anthropic-upstream';
import { makeGitWorkspace } from '../e2e/gateway-fixture';
import { startPersonalTestEngine, waitFor } from '../e2e/test-engine';

const MODEL_KEY = 'sk-ant-api03-personal-model-key-usage-limit';

type Block = { type: string };
type Body = { tools?: { name: string }[]; messages?: { role: string; content: string | Block[] }[] };

const isMain = (r: RecordedRequest) => ((r.body as Body).tools ?? []).some((t) => t.name === 'Bash');
const hasToolResult = (r: RecordedRequest) =>
  ((r.body as Body).messages ?? []).some((m) => typeof m.content !== 'string' && m.content.some((b) => b.type === 'tool_result'));

describe('Claude Code over a usage-limit reset in personal mode (real claude CLI, local authority, model API key)', function () {
  let claude: string;
  let root: string;
  let upstream: FakeAnthropicUpstream | undefined;
  let host: HostEngine | undefined;
  let authority: LocalAuthority | undefined;

  before(function () {
    this.timeout(20 * 60_000); // first run installs ~250 MB from npm
    claude = ensureClaudeCode((line) => console.log(`      ${line}`));
  });

  afterEach(async () => {
    await host?.dispose();
    await authority?.dispose();
    host = undefined;
    authority = undefined;
    await upstream?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  for (const parks of [false, true]) {
    it(`a rejected 5-hour window ${parks ? 'further away than the park bound parks the task; at the reset it resumes' : 'holds the running task; at the reset it goes on in'} the same Claude Code session, and the Bash step ran once`, async function () {
      const clock = new OffsetClock(systemClock);
      root = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-claude-limit-'));
      const up = (upstream = await FakeAnthropicUpstream.start());
      let resetAt = 0;
      up.setDefaultReply((request): ScriptedReply => {
        if (!isMain(request)) return { kind: 'text', text: 'ok' }; // titles, summaries
        if (hasToolResult(request)) {
          if (resetAt === 0) {
            resetAt = clock.now() + 20_000;
            return usageLimitRejected({
              reset5hAt: resetAt,
              status5h: 'rejected',
              reset7dAt: clock.now() + 86_400_000,
              status7d: 'allowed',
              claim: 'five_hour',
            });
          }
          return { kind: 'text', text: 'The step is done; the task is complete.' };
        }
        return { kind: 'tool_use', name: 'Bash', input: { command: 'echo step >> steps.log', description: 'the step' } };
      });
      const events: RuntimeEvent[] = [];
      // Account limits are not turned on here: personal mode's own gateway settings turn them on.
      ({ engine: host, authority } = await startPersonalTestEngine({
        storageDir: path.join(root, 'globalStorage'),
        agent: 'claude-code',
        claudeCommand: claude,
        claudeConfigDir: path.join(root, 'claude-config'),
        usageLimitParkMs: parks ? 2_000 : undefined,
        onEvent: (e) => events.push(e),
        personal: { upstreamUrl: up.url, modelApiKey: MODEL_KEY, claudeOwnLogin: false, clock },
      }));
      const h = host;
      await waitFor(() => h.service.isLeader, 'the lease');
      const ws = makeGitWorkspace(root);
      const created = await h.service.create({
        title: 'limit',
        prompt: 'Run the step with Bash.',
        permissionMode: 'bypassPermissions',
        workspacePath: ws,
      });

      if (parks)
        await waitFor(
          () => h.service.ticketsOf(created.id)[1]?.serverState === 'queued',
          'the parked task waiting in the queue with a new ticket',
          180_000,
        );
      else
        await waitFor(
          () => events.some((e) => e.type === 'usage-limit' && e.resetAt !== null),
          'the request held by the usage limit',
          180_000,
        );
      const seen = up.messageRequests().length;
      await new Promise((r) => setTimeout(r, 1_000));
      assert.equal(up.messageRequests().length, seen, 'nothing goes upstream during the hold');
      assert.equal(h.service.getTask(created.id)?.status, parks ? 'queued' : 'running', 'held, not failed');

      clock.advance(Math.ceil(resetAt / 1000) * 1000 - clock.now());
      const done = await waitFor(
        () => {
          const t = h.service.getTask(created.id)!;
          return t.status === 'completed' || t.status === 'failed' ? t : undefined;
        },
        'a terminal state',
        180_000,
      );
      assert.equal(done.status, 'completed', `failed: ${done.failureReason}`);
      const starts = events.filter((e): e is Extract<RuntimeEvent, { type: 'segment-started' }> => e.type === 'segment-started');
      assert.deepEqual(
        starts.map((s) => s.resume),
        parks ? [false, true] : [false],
      );
      assert.ok(
        starts.every((s) => s.sessionId === starts[0].sessionId) && done.sessionId === starts[0].sessionId,
        'one session throughout',
      );
      assert.deepEqual(
        h.service.ticketsOf(created.id).map((t) => t.endReason),
        parks ? ['usage_limit', 'completed'] : ['completed'],
      );
      assert.deepEqual(fs.readFileSync(path.join(ws, 'steps.log'), 'utf8').trim().split('\n'), ['step'], 'the Bash step ran once');
      const last = up.messageRequests().filter(isMain).at(-1)!;
      assert.ok(hasToolResult(last), "the resumed conversation carries the step's result");
      assert.ok(
        up.messageRequests().every((r) => r.headers['x-api-key'] === MODEL_KEY),
        'every model request carried the model API key the authority adds',
      );
    });
  }
});
