// What a task spent, in the unit its credential pays (docs/flows.md#capacity-and-cost), end to end in
// Node: the REAL reference gateway (with `accountLimits`, as personal mode runs it) in front of the
// scripted fake model upstream, a TEST FIXTURE; for a subscription login the upstream answers as the
// subscription-account fixture (test/fixtures/subscription-account.ts) with the unified rate-limit
// headers. The real HostEngine, real reference-agent processes, and the panel protocol over a real
// MessageChannel: the card and the History row carry the spend, and the summary words it once.
import assert from 'node:assert/strict';
import path from 'node:path';
import { systemClock } from '../../src/core/clock';
import { costAt, spendOf, spendText, type ModelPrice } from '../../src/core/spend';
import type { HostEngine } from '../../src/engine/host-engine';
import { cardSummaryFacts, summaryOfTasks } from '../../src/panel/task-summary';
import type { RecordedRequest, ReplyUsage } from '../fixtures/fake-anthropic-upstream';
import { SubscriptionAccount } from '../fixtures/subscription-account';
import { connect } from '../integration/panel-link';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { startTestEngine, waitFor, type TestEngineOptions } from './test-engine';

type Messages = { messages?: { role: string; content: string | { type: string; text?: string }[] }[] };
const hasToolResult = (request: RecordedRequest) =>
  ((request.body as Messages).messages ?? []).some((m) => typeof m.content !== 'string' && m.content.some((c) => c.type === 'tool_result'));

describe('capacity and cost: what each task spent (real gateway, scripted upstream)', function () {
  let world: GatewayWorld | undefined;
  let host: HostEngine | undefined;
  let link: ReturnType<typeof connect> | undefined;
  let ws: string;
  let reserve: number | null = null;

  afterEach(async () => {
    link?.close();
    link = undefined;
    await host?.dispose();
    host = undefined;
    await world?.close();
    world = undefined;
  });

  async function boot(options: Partial<TestEngineOptions> = {}): Promise<HostEngine> {
    world = await startWorld({ accountLimits: true });
    const h = await startTestEngine({
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      ...options,
    });
    host = h;
    ws = makeGitWorkspace(world.root);
    await waitFor(() => h.service.isLeader, 'the lease');
    link = connect({
      service: h.service,
      store: h.store,
      clock: systemClock,
      hasApiKey: () => true,
      asks: h.runtime,
      reserve: () => reserve,
      workspaces: () => [{ name: 'ws', path: ws, identity: null }],
    });
    link.webview.channel.ready();
    return h;
  }

  async function run(h: HostEngine, title: string): Promise<string> {
    const created = await h.service.create({
      title,
      prompt: title,
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
    });
    await waitFor(() => ['completed', 'failed'].includes(h.service.getTask(created.id)!.status), `${title} ends`, 90_000);
    assert.equal(h.service.getTask(created.id)!.status, 'completed', h.service.getTask(created.id)!.failureReason ?? '');
    return created.id;
  }

  /** The newest snapshot once `ready` holds for it. */
  async function snapshotWhen(ready: (state: NonNullable<ReturnType<typeof latest>>) => boolean) {
    return waitFor(() => {
      const state = latest();
      return state && ready(state) ? state : undefined;
    }, 'the snapshot');
  }
  const latest = () => link!.webview.states[link!.webview.states.length - 1];

  it('item 1: a subscription account: the growth of its windows between answers is credited to the task whose answers it followed; the card, History and the summary show its share of the 5-hour and weekly windows', async () => {
    const h = await boot();
    const now = Date.now();
    const account = new SubscriptionAccount({
      utilization5h: 0.3,
      utilization7d: 0.6,
      reset5hAt: now + 3 * 3_600_000,
      reset7dAt: now + 4 * 86_400_000,
    });
    const usage: ReplyUsage = {
      input_tokens: 9_000,
      output_tokens: 1_000,
      cache_read_input_tokens: 100_000,
      cache_creation_input_tokens: 10_000,
    };
    world!.upstream.setDefaultReply((request) =>
      account.answer(
        hasToolResult(request) || JSON.stringify(request.body).includes('task B')
          ? { kind: 'text', text: 'done', usage }
          : { kind: 'tool_use', name: 'run_command', input: { command: 'echo A' }, usage },
      ),
    );
    const a = await run(h, 'task A: run one step');
    // Task B's one answer carries the reading after A's last answer: that growth is A's too.
    const b = await run(h, 'task B: say done');
    assert.equal(account.readings.length, 3);
    const [r0, , r2] = account.readings;
    const expected = { fiveHour: r2.utilization5h - r0.utilization5h, sevenDay: r2.utilization7d - r0.utilization7d };
    assert.ok(expected.fiveHour > 0.005 && expected.sevenDay > 0.0005, 'the account grew');

    const state = await snapshotWhen(
      (s) => s.tasks.find((c) => c.id === a)?.usage?.windowShare !== undefined && s.history.some((r) => r.taskId === b),
    );
    const card = state.tasks.find((c) => c.id === a)!;
    const row = state.history.find((r) => r.taskId === a)!;
    for (const usageView of [card.usage, row.usage]) {
      assert.ok(
        Math.abs(usageView!.windowShare!.fiveHour - expected.fiveHour) < 1e-6,
        `5 h share ${usageView!.windowShare!.fiveHour} ≈ ${expected.fiveHour}`,
      );
      assert.ok(Math.abs(usageView!.windowShare!.sevenDay - expected.sevenDay) < 1e-6);
      assert.ok(usageView!.costUsd === undefined || usageView!.costUsd > 0, 'the list may price the model too');
    }
    assert.equal(spendText(spendOf(card.usage)!), '0.6 % of 5 h · 0.1 % of week', 'a subscription pays in windows: shown before any price');
    const summary = summaryOfTasks(state.tasks, (t) => ({ ...cardSummaryFacts(t), isNew: true }), null)!;
    assert.ok(
      summary.parts.some((p) => p.filter === 'spent' && p.text === '0.6 % of 5 h · 0.1 % of week used'),
      JSON.stringify(summary.parts.map((p) => p.text)),
    );
  });

  it("item 2: the panel's header shows the account's windows from the last answer's headers, with their resets, its age and the reserve, and why the queue waits; reading them made no request (counted)", async () => {
    reserve = 0.7;
    const h = await boot();
    const now = Date.now();
    const account = new SubscriptionAccount({
      utilization5h: 0.42,
      utilization7d: 0.705,
      reset5hAt: now + 2 * 3_600_000,
      reset7dAt: now + 3 * 86_400_000,
    });
    world!.upstream.setDefaultReply(() => account.answer({ kind: 'text', text: 'done', usage: { input_tokens: 10, output_tokens: 5 } }));
    await run(h, 'task A: say done');
    const state = await snapshotWhen((s) => s.account != null);
    const bar = state.account!;
    assert.deepEqual(
      bar.windows.map((w) => [w.label, w.percent, w.overReserve]),
      [
        ['5 h', 42, false],
        ['week', 71, true],
      ],
    );
    assert.equal(bar.reservePercent, 70);
    assert.match(bar.ageText, /^as of (just now|1 min ago)$/);
    assert.match(bar.holdingText ?? '', /^holding: weekly 71 % ≥ your 70 % reserve · resets /);
    assert.equal(world!.upstream.messageRequests().length, 1, "the task's one answer: no request was made to read the windows");
    assert.equal(world!.upstream.requests.length, 1, 'nothing else reached the model API either');
    reserve = null;
  });

  it('item 1: an API key (no window headers): each answer priced at its model at the known price, cache reads and writes at their own rates; the card and History show the dollars; a follow-up adds to its task; item 5: the form says what the last tasks of the folder spent', async () => {
    const price: ModelPrice = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
    const h = await boot({ pricer: (model, u) => (model === 'claude-priced' ? costAt(price, u) : null) });
    const usage: ReplyUsage = {
      input_tokens: 20_000,
      output_tokens: 2_000,
      cache_read_input_tokens: 500_000,
      cache_creation_input_tokens: 40_000,
    };
    world!.upstream.setDefaultReply((request) =>
      hasToolResult(request)
        ? { kind: 'text', text: 'done', usage, model: 'claude-priced' }
        : { kind: 'tool_use', name: 'run_command', input: { command: 'echo A' }, usage, model: 'claude-priced' },
    );
    const a = await run(h, 'task A: run one step');
    // Per answer: 20k × $3 + 2k × $15 + 500k × $0.30 + 40k × $3.75 per million = $0.06 + $0.03 + $0.15 + $0.15 = $0.39; two answers.
    const state = await snapshotWhen((s) => s.history.some((r) => r.taskId === a && r.usage?.costUsd !== undefined));
    const card = state.tasks.find((c) => c.id === a)!;
    const row = state.history.find((r) => r.taskId === a)!;
    for (const usageView of [card.usage, row.usage]) {
      assert.ok(Math.abs(usageView!.costUsd! - 0.78) < 1e-9, `${usageView!.costUsd} is $0.78`);
      assert.equal(usageView!.windowShare, undefined);
    }
    assert.equal(spendText(spendOf(card.usage)!), '$0.78');

    // A follow-up continues its work: its dollars add to the task's card ("with follow-ups").
    const follow = await h.service.followUp(a, { prompt: 'task A: one more step' });
    await waitFor(() => h.service.getTask(follow.id)?.status === 'completed', 'the follow-up completes', 90_000);
    const after = await snapshotWhen((s) => s.tasks.find((c) => c.id === a)?.withFollowUps !== undefined);
    const total = after.tasks.find((c) => c.id === a)!.withFollowUps!;
    // The resumed session already holds a tool result, so the follow-up answers at once: one answer, $0.39.
    assert.ok(Math.abs(total.costUsd! - 1.17) < 1e-9, `${total.costUsd} is $0.78 + $0.39`);
    assert.equal(after.tasks.find((c) => c.id === follow.id)!.withFollowUps, undefined, 'the follow-up itself has none after it');
    // Item 5, will the next one fit: the create form's folder says what its last tasks spent (the median of $0.78 and $0.39).
    const fits = await snapshotWhen((s) => s.workspaces.some((w) => w.typicalSpend?.endsWith('last 2)')));
    assert.equal(fits.workspaces.find((w) => w.path === ws)?.typicalSpend, 'Similar tasks here: $0.58 (median of the last 2)');
  });
});
