// The account's usage limit with the real `claude` CLI (installed under .tools/ by
// scripts/setup-claude-code.ts), an API key (the test engine's) through our local ticket proxy, and
// the REAL reference gateway launched with account limits on (as personal mode will launch it) and
// an OffsetClock the test moves to the reset, in front of the scripted fake model upstream (a test
// fixture standing in for the model API) answering with the unified rate-limit header shapes.
// docs/flows.md#usage-limits
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ensureClaudeCode } from '../../scripts/setup-claude-code';
import type { RuntimeEvent } from '../../src/agent/task-runtime';
import { systemClock } from '../../src/core/clock';
import type { HostEngine } from '../../src/engine/host-engine';
import { OffsetClock } from '../../src/gateway/offset-clock';
import { usageLimitRejected, type RecordedRequest, type ScriptedReply } from '../fixtures/fake-anthropic-upstream';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from '../e2e/gateway-fixture';
import { startTestEngine, waitFor } from '../e2e/test-engine';

type Block = { type: string };
type Body = { tools?: { name: string }[]; messages?: { role: string; content: string | Block[] }[] };

const isMain = (r: RecordedRequest) => ((r.body as Body).tools ?? []).some((t) => t.name === 'Bash');
const hasToolResult = (r: RecordedRequest) => ((r.body as Body).messages ?? []).some((m) => typeof m.content !== 'string' && m.content.some((b) => b.type === 'tool_result'));

describe('Claude Code over a usage-limit reset (real claude CLI, real gateway with account limits)', function () {
  let claude: string;
  let world: GatewayWorld | undefined;
  let host: HostEngine | undefined;

  before(function () {
    this.timeout(20 * 60_000); // first run installs ~250 MB from npm
    claude = ensureClaudeCode((line) => console.log(`      ${line}`));
  });

  afterEach(async () => {
    await host?.dispose();
    host = undefined;
    await world?.close();
  });

  for (const parks of [false, true]) {
    it(`a rejected 5-hour window ${parks ? 'further away than the park bound parks the task; at the reset it resumes' : 'holds the running task; at the reset it goes on in'} the same Claude Code session, and the Bash step ran once`, async function () {
      const clock = new OffsetClock(systemClock);
      world = await startWorld({ accountLimits: true }, clock);
      const w = world;
      let resetAt = 0;
      w.upstream.setDefaultReply((request): ScriptedReply => {
        if (!isMain(request)) return { kind: 'text', text: 'ok' }; // titles, summaries
        if (hasToolResult(request)) {
          if (resetAt === 0) {
            resetAt = clock.now() + 20_000;
            return usageLimitRejected({ reset5hAt: resetAt, status5h: 'rejected', reset7dAt: clock.now() + 86_400_000, status7d: 'allowed', claim: 'five_hour' });
          }
          return { kind: 'text', text: 'The step is done; the task is complete.' };
        }
        return { kind: 'tool_use', name: 'Bash', input: { command: 'echo step >> steps.log', description: 'the step' } };
      });
      const events: RuntimeEvent[] = [];
      host = await startTestEngine({
        storageDir: path.join(w.root, 'globalStorage'),
        gatewayUrl: w.gateway.url,
        apiKey: USER_KEY,
        agent: 'claude-code',
        claudeCommand: claude,
        claudeConfigDir: path.join(w.root, 'claude-config'),
        usageLimitParkMs: parks ? 2_000 : undefined,
        onEvent: (e) => events.push(e),
      });
      const h = host;
      await waitFor(() => h.service.isLeader, 'the lease');
      const ws = makeGitWorkspace(w.root);
      const created = await h.service.create({ title: 'limit', prompt: 'Run the step with Bash.', permissionMode: 'bypassPermissions', workspacePath: ws });

      if (parks) await waitFor(() => h.service.ticketsOf(created.id)[1]?.serverState === 'queued', 'the parked task waiting in the queue with a new ticket', 180_000);
      else await waitFor(() => events.some((e) => e.type === 'usage-limit' && e.resetAt !== null), 'the request held by the usage limit', 180_000);
      const seen = w.upstream.messageRequests().length;
      await new Promise((r) => setTimeout(r, 1_000));
      assert.equal(w.upstream.messageRequests().length, seen, 'nothing goes upstream during the hold');
      assert.equal(h.service.getTask(created.id)?.status, parks ? 'queued' : 'running', 'held, not failed');

      clock.advance(Math.ceil(resetAt / 1000) * 1000 - clock.now());
      const done = await waitFor(() => {
        const t = h.service.getTask(created.id)!;
        return t.status === 'completed' || t.status === 'failed' ? t : undefined;
      }, 'a terminal state', 180_000);
      assert.equal(done.status, 'completed', `failed: ${done.failureReason}`);
      const starts = events.filter((e): e is Extract<RuntimeEvent, { type: 'segment-started' }> => e.type === 'segment-started');
      assert.deepEqual(starts.map((s) => s.resume), parks ? [false, true] : [false]);
      assert.ok(starts.every((s) => s.sessionId === starts[0].sessionId) && done.sessionId === starts[0].sessionId, 'one session throughout');
      assert.deepEqual(h.service.ticketsOf(created.id).map((t) => t.endReason), parks ? ['usage_limit', 'completed'] : ['completed']);
      assert.deepEqual(fs.readFileSync(path.join(ws, 'steps.log'), 'utf8').trim().split('\n'), ['step'], 'the Bash step ran once');
      const last = w.upstream.messageRequests().filter(isMain).at(-1)!;
      assert.ok(hasToolResult(last), "the resumed conversation carries the step's result");
    });
  }
});
