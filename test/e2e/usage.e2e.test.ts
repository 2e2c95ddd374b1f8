// Tokens per segment and per task (docs/flows.md#ticket-ledger): the REAL reference gateway on
// loopback in front of the scripted fake model upstream (a test fixture standing in for the model
// API) that reports known token counts; the real HostEngine, a real agent process (the reference
// agent, and the real Claude Code CLI from scripts/setup-claude-code.ts), and the panel protocol
// over a real MessageChannel. What the card, the expanded card and History show must equal the
// sums of what the upstream reported.
import assert from 'node:assert/strict';
import path from 'node:path';
import { ensureClaudeCode } from '../../scripts/setup-claude-code';
import { systemClock } from '../../src/core/clock';
import type { HostEngine } from '../../src/engine/host-engine';
import type { UsageView } from '../../src/protocol/webview';
import { usageSummary } from '../../webview/card-extras';
import type { RecordedRequest, ReplyUsage, ScriptedReply } from '../fixtures/fake-anthropic-upstream';
import { connect } from '../integration/panel-link';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { startTestEngine, waitFor, type TestEngineOptions } from './test-engine';

/** What a set of answers adds up to, in the panel's terms. */
function sum(answers: { usage: ReplyUsage; model: string }[]): UsageView {
  const models: string[] = [];
  for (const a of answers) if (!models.includes(a.model)) models.push(a.model);
  return {
    model: models.join(', '),
    inputTokens: answers.reduce((n, a) => n + a.usage.input_tokens, 0),
    outputTokens: answers.reduce((n, a) => n + a.usage.output_tokens, 0),
    cacheReadTokens: answers.reduce((n, a) => n + (a.usage.cache_read_input_tokens ?? 0), 0),
    cacheWriteTokens: answers.reduce((n, a) => n + (a.usage.cache_creation_input_tokens ?? 0), 0),
    requests: answers.length,
  };
}

describe('tokens per segment and per task (real gateway, scripted upstream with known counts)', function () {
  let world: GatewayWorld | undefined;
  let host: HostEngine | undefined;
  let link: ReturnType<typeof connect> | undefined;

  afterEach(async () => {
    link?.close();
    link = undefined;
    await host?.dispose();
    host = undefined;
    await world?.close();
    world = undefined;
  });

  async function boot(
    config: Parameters<typeof startWorld>[0],
    options: (root: string) => Partial<TestEngineOptions> = () => ({}),
  ): Promise<HostEngine> {
    world = await startWorld(config);
    const h = await startTestEngine({
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      ...options(world.root),
    });
    host = h;
    await waitFor(() => h.service.isLeader, 'the lease');
    link = connect({ service: h.service, store: h.store, clock: systemClock, hasApiKey: () => true, asks: h.runtime });
    link.webview.channel.ready();
    return h;
  }

  /** The card, its expanded segments and its History row as the webview receives them, once the task ended. */
  async function panelOf(taskId: string) {
    const webview = link!.webview;
    const state = await waitFor(() => {
      const last = webview.states[webview.states.length - 1];
      const card = last?.tasks.find((c) => c.id === taskId);
      return card && (card.status === 'completed' || card.status === 'failed') && card.usage ? last : undefined;
    }, 'the finished card with its tokens');
    const card = state.tasks.find((c) => c.id === taskId)!;
    const history = state.history.find((h) => h.taskId === taskId)!;
    const { segments } = await webview.channel.request('segments', { taskId });
    return { card, history, segments };
  }

  it('reference agent over two segments (a 3102 between them): each segment, the card and History carry the counts the upstream reported; totals equal the sums', async () => {
    // Active window 2 s; the tool runs 3 s, so the next model request meets a real 3102 and the task resumes on a new ticket.
    const h = await boot({ activeWindowMs: 2_000 });
    const first = {
      model: 'claude-test-first',
      usage: { input_tokens: 1234, output_tokens: 56, cache_read_input_tokens: 7000, cache_creation_input_tokens: 890 },
    };
    const second = {
      model: 'claude-test-second',
      usage: { input_tokens: 2345, output_tokens: 67, cache_read_input_tokens: 0, cache_creation_input_tokens: 1200 },
    };
    world!.upstream.enqueue(
      { kind: 'tool_use', name: 'run_command', input: { command: 'sleep 3' }, ...first },
      { kind: 'text', text: 'Done after resuming.', ...second },
    );
    const ws = makeGitWorkspace(world!.root);
    const created = await h.service.create({
      title: 'tokens',
      prompt: 'count my tokens',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
    });
    await waitFor(() => h.service.getTask(created.id)?.status === 'completed', 'completed', 90_000);
    assert.equal(world!.upstream.messageRequests().length, 2, 'two answers, one per segment');

    const tickets = h.service.ticketsOf(created.id);
    assert.deepEqual(
      tickets.map((t) => t.endReason),
      ['expired', 'completed'],
    );
    assert.deepEqual(
      tickets.map((t) => t.usage),
      [sum([first]), sum([second])],
      'each segment its own answer, on its ledger row',
    );

    const { card, history, segments } = await panelOf(created.id);
    assert.deepEqual(
      segments.map((s) => s.usage),
      [sum([first]), sum([second])],
      'the expanded card lists each segment',
    );
    const total = sum([first, second]);
    assert.deepEqual(card.usage, total);
    assert.deepEqual(history.usage, total);
    assert.deepEqual([total.inputTokens, total.outputTokens, total.cacheReadTokens, total.cacheWriteTokens], [3579, 123, 7000, 2090]);
    assert.equal(usageSummary(card.usage!), '3.58k in · 123 out · cache 7k read, 2.09k written');
  });

  describe('Claude Code', function () {
    let claude: string;
    before(function () {
      this.timeout(20 * 60_000); // the first run installs it from npm
      claude = ensureClaudeCode((line) => console.log(`      ${line}`));
    });

    it('Claude Code: every answer it got is counted on its segment (main and auxiliary requests); the card and History totals equal the sums', async () => {
      const answered: { usage: ReplyUsage; model: string }[] = [];
      let n = 0;
      /** Read once, then finish; auxiliary requests (no tools) get a short text. Every answer reports distinct counts. */
      const scripted = (request: RecordedRequest): ScriptedReply => {
        n += 1;
        const usage: ReplyUsage = {
          input_tokens: 1000 + n,
          output_tokens: 10 + n,
          cache_read_input_tokens: 100 * n,
          cache_creation_input_tokens: n % 2 === 0 ? 50 : 0,
        };
        const body = request.body as { model?: string; tools?: { name: string }[]; messages?: { content: unknown }[] };
        answered.push({ usage, model: body.model ?? 'fake-model' });
        const hasTools = (body.tools ?? []).some((t) => t.name === 'Read');
        if (!hasTools) return { kind: 'text', text: 'ok', usage };
        if (JSON.stringify(body.messages ?? []).includes('tool_result')) return { kind: 'text', text: 'I read the README; done.', usage };
        return { kind: 'tool_use', name: 'Read', input: { file_path: path.join(ws, 'README.md') }, usage };
      };
      const h = await boot({}, (root) => ({
        agent: 'claude-code',
        claudeCommand: claude,
        claudeConfigDir: path.join(root, 'claude-config'),
      }));
      world!.upstream.setDefaultReply(scripted);
      const ws = makeGitWorkspace(world!.root);
      const model = world!.gateway.config.defaultModel ?? world!.gateway.config.models[0]?.id ?? null;
      const created = await h.service.create({
        title: 'claude tokens',
        prompt: 'Read README.md and say done.',
        permissionMode: 'bypassPermissions',
        workspacePath: ws,
        model,
      });
      await waitFor(() => ['completed', 'failed'].includes(h.service.getTask(created.id)!.status), 'the end of the task', 180_000);
      const done = h.service.getTask(created.id)!;
      assert.equal(done.status, 'completed', `failure: ${done.failureReason}`);
      assert.ok(answered.length >= 2, `the tool call and the final answer at least (${answered.length} answers)`);
      assert.equal(answered.length, world!.upstream.messageRequests().length);

      const expected = sum(answered);
      const tickets = h.service.ticketsOf(created.id);
      assert.equal(tickets.length, 1);
      // The tokens; its model is on the shipped price list, so its dollars come too (test/e2e/spend.e2e.test.ts checks them).
      const tokens = (u: UsageView | null | undefined) => (u ? { ...u, costUsd: undefined } : u);
      const sure = { ...expected, costUsd: undefined };
      assert.deepEqual(tokens(tickets[0].usage), sure);
      const { card, history, segments } = await panelOf(created.id);
      assert.deepEqual(
        segments.map((s) => tokens(s.usage)),
        [sure],
      );
      assert.deepEqual(tokens(card.usage), sure);
      assert.deepEqual(tokens(history.usage), sure);
    });
  });
});
