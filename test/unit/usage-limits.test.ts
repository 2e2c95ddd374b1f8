// The account's usage limit (docs/flows.md#usage-limits): reading the unified rate-limit header
// shapes, the gateway's hold (latest reset wins, headroom), the ticket proxy's hold and park
// decision (against the scripted fake upstream, a fixture standing in for the gateway), and what
// the card and the status bar say.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { TaskStore } from '../../src/store';
import { TicketProxy } from '../../src/agent/proxy/ticket-proxy';
import type { TicketProxyEvent } from '../../src/agent/proxy/ticket-proxy-types';
import {
  AccountLimits,
  MAX_HOLD_MS,
  personalAccountLimits,
  readUsageLimit,
  UNKNOWN_RESET_HOLD_MS,
} from '../../src/gateway/model/account-limit';
import { MemoryAccountLimitStore } from '../../src/gateway/model/account-limit-store';
import { ConfigError, loadGatewayConfig, resolveGatewayConfig } from '../../src/gateway/config';
import { toTaskCard } from '../../src/panel/task-card';
import { statusBarView } from '../../src/panel/task-summary';
import { BusinessCode, SERVER_TIME_HEADER } from '../../src/protocol/gateway';
import type { OffPeakTask, TicketRecord } from '../../src/core/types';
import { usageLimitText } from '../../webview/card-extras';
import { FakeAnthropicUpstream, unifiedLimitHeaders } from '../fixtures/fake-anthropic-upstream';

const NOW = Date.UTC(2026, 0, 5, 12, 0, 0);
const sec = (ms: number) => Math.ceil(ms / 1000) * 1000;

describe('usage limits: the unified rate-limit headers', () => {
  it('a rejected 5-hour window: the 5-hour reset, not the 7-day one that is still allowed', () => {
    const h = unifiedLimitHeaders({
      status: 'rejected',
      status5h: 'rejected',
      reset5hAt: NOW + 20_000,
      status7d: 'allowed',
      reset7dAt: NOW + 5 * 86_400_000,
      claim: 'five_hour',
    });
    const r = readUsageLimit(429, h, NOW, null);
    assert.deepEqual([r.rejected, r.resetAt, r.window], [true, sec(NOW + 20_000), 'five_hour']);
  });

  it("item 5: Codex's usage limit (a 429 with a used-up x-codex-* window) is the account's hold until that window's reset; a 429 with room left is not", () => {
    const codex = (primary: number, secondary: number) => ({
      'x-codex-primary-used-percent': String(primary),
      'x-codex-primary-window-minutes': '300',
      'x-codex-primary-reset-at': String((NOW + 30_000) / 1000),
      'x-codex-secondary-used-percent': String(secondary),
      'x-codex-secondary-window-minutes': '10080',
      'x-codex-secondary-reset-after-seconds': String(3 * 86_400),
      'retry-after': '30',
    });
    const five = readUsageLimit(429, codex(100, 40), NOW, null);
    assert.deepEqual([five.rejected, five.resetAt, five.window], [true, NOW + 30_000, 'five_hour']);
    const both = readUsageLimit(429, codex(100, 100), NOW, null);
    assert.deepEqual([both.rejected, both.resetAt, both.window], [true, NOW + 3 * 86_400_000, 'seven_day']);
    assert.equal(readUsageLimit(429, codex(80, 40), NOW, null).rejected, false, 'a rate limit with room left in both windows');
    assert.equal(readUsageLimit(200, codex(100, 40), NOW, null).rejected, false);
    const headroom = readUsageLimit(200, codex(92, 10), NOW, 0.9);
    assert.deepEqual(headroom.over, [{ window: 'five_hour', utilization: 0.92, resetAt: NOW + 30_000 }]);
  });

  it('both windows rejected: the latest reset wins', () => {
    const h = unifiedLimitHeaders({
      status: 'rejected',
      status5h: 'rejected',
      reset5hAt: NOW + 20_000,
      status7d: 'rejected',
      reset7dAt: NOW + 86_400_000,
    });
    assert.equal(readUsageLimit(429, h, NOW, null).resetAt, sec(NOW + 86_400_000));
  });

  it('without per-window statuses: the unified reset, then the representative claim, then Retry-After, then a short default', () => {
    assert.equal(
      readUsageLimit(429, unifiedLimitHeaders({ status: 'rejected', resetAt: NOW + 60_000, reset7dAt: NOW + 86_400_000 }), NOW, null)
        .resetAt,
      sec(NOW + 60_000),
    );
    assert.equal(
      readUsageLimit(
        429,
        unifiedLimitHeaders({ status: 'rejected', claim: 'seven_day', reset5hAt: NOW + 1_000, reset7dAt: NOW + 86_400_000 }),
        NOW,
        null,
      ).resetAt,
      sec(NOW + 86_400_000),
    );
    assert.equal(
      readUsageLimit(429, { ...unifiedLimitHeaders({ status: 'rejected' }), 'retry-after': '90' }, NOW, null).resetAt,
      NOW + 90_000,
    );
    assert.equal(readUsageLimit(429, unifiedLimitHeaders({ status: 'rejected' }), NOW, null).resetAt, NOW + UNKNOWN_RESET_HOLD_MS);
  });

  it('a reset beyond the longest window (a bad header) holds at most 8 days; a reset that is not a number is no reset', () => {
    assert.equal(
      readUsageLimit(429, unifiedLimitHeaders({ status: 'rejected', resetAt: NOW + 400 * 86_400_000 }), NOW, null).resetAt,
      NOW + MAX_HOLD_MS,
    );
    assert.equal(
      readUsageLimit(429, { 'anthropic-ratelimit-unified-status': 'rejected', 'anthropic-ratelimit-unified-reset': '1e99' }, NOW, null)
        .resetAt,
      NOW + UNKNOWN_RESET_HOLD_MS,
    );
  });

  it('a 429 without the rejected status, and a 200, are no refusal', () => {
    assert.equal(readUsageLimit(429, { 'retry-after': '5' }, NOW, null).rejected, false);
    assert.equal(
      readUsageLimit(429, unifiedLimitHeaders({ status: 'allowed_warning', reset5hAt: NOW + 1_000 }), NOW, null).rejected,
      false,
    );
    assert.equal(readUsageLimit(200, unifiedLimitHeaders({ status: 'rejected', reset5hAt: NOW + 1_000 }), NOW, null).rejected, false);
  });

  it('utilization at or above stopAtUtilization names the window and its reset; below it, or with no threshold, nothing', () => {
    const h = unifiedLimitHeaders({
      status: 'allowed_warning',
      utilization5h: 0.85,
      reset5hAt: NOW + 60_000,
      utilization7d: 0.5,
      reset7dAt: NOW + 86_400_000,
    });
    assert.deepEqual(readUsageLimit(200, h, NOW, 0.8).over, [{ window: 'five_hour', utilization: 0.85, resetAt: sec(NOW + 60_000) }]);
    assert.deepEqual(readUsageLimit(200, h, NOW, 0.9).over, []);
    assert.deepEqual(readUsageLimit(200, h, NOW, null).over, []);
  });
});

describe('usage limits: the gateway hold', () => {
  it('the latest reset wins across answers; the hold is kept in its store and read back', () => {
    const store = new MemoryAccountLimitStore();
    const limits = new AccountLimits(store, { stopAtUtilization: null });
    const rejected = (at: number) => unifiedLimitHeaders({ status: 'rejected', resetAt: at });
    assert.equal(limits.observe(429, rejected(NOW + 60_000), NOW)?.code, BusinessCode.NotAdmitted);
    limits.observe(429, rejected(NOW + 20_000), NOW + 1);
    assert.equal(limits.heldUntil(NOW + 2), sec(NOW + 60_000), 'an earlier reset does not shorten the hold');
    assert.equal(new AccountLimits(store, { stopAtUtilization: null }).heldUntil(NOW + 2), sec(NOW + 60_000));
    const error = limits.heldError(NOW + 10_000)!;
    assert.deepEqual(
      [error.status, error.extra.limit_reset_at, error.extra.retry_after_ms],
      [429, sec(NOW + 60_000), sec(NOW + 60_000) - NOW - 10_000],
    );
    assert.equal(limits.heldUntil(sec(NOW + 60_000)), null, 'over at the reset');
    assert.equal(limits.heldError(sec(NOW + 60_000)), undefined);
  });

  it('headroom blocks promotion only, until its window resets', () => {
    const limits = new AccountLimits(new MemoryAccountLimitStore(), { stopAtUtilization: 0.8 });
    assert.equal(
      limits.observe(200, unifiedLimitHeaders({ status: 'allowed_warning', utilization5h: 0.9, reset5hAt: NOW + 60_000 }), NOW),
      undefined,
    );
    assert.equal(limits.heldUntil(NOW), null);
    assert.equal(limits.promotionBlockedUntil(NOW), sec(NOW + 60_000));
    assert.equal(limits.promotionBlockedUntil(sec(NOW + 60_000)), null);
  });

  it('config: --account-limits and --stop-at-utilization (0..1, only with account limits; not on the mysql store)', () => {
    const users = ['--user', 'a:key-aaaaaaaa'];
    const { config } = loadGatewayConfig([...users, '--account-limits', '--stop-at-utilization', '0.8'], {});
    assert.deepEqual([config.accountLimits, config.stopAtUtilization], [true, 0.8]);
    assert.deepEqual(
      [resolveGatewayConfig({ demo: true }).accountLimits, resolveGatewayConfig({ demo: true }).stopAtUtilization],
      [false, null],
      'off by default: team mode unchanged',
    );
    assert.throws(
      () => loadGatewayConfig([...users, '--account-limits', '--stop-at-utilization', '1.5'], {}),
      (e: Error) => e instanceof ConfigError && /0 to 1/.test(e.message),
    );
    assert.throws(
      () => loadGatewayConfig([...users, '--stop-at-utilization', '0.5'], {}),
      (e: Error) => e instanceof ConfigError && /needs --account-limits/.test(e.message),
    );
    assert.throws(
      () => resolveGatewayConfig({ demo: true, store: 'mysql', mysqlUrl: 'mysql://u@h/db', accountLimits: true }),
      (e: Error) => e instanceof ConfigError && /mysql/.test(e.message),
    );
    // Personal mode's gateway: limits on, the machine setting's headroom when it is a fraction.
    assert.deepEqual(personalAccountLimits(0.8), { accountLimits: true, stopAtUtilization: 0.8 });
    assert.deepEqual(personalAccountLimits(null), { accountLimits: true, stopAtUtilization: null });
    assert.deepEqual(personalAccountLimits(7), { accountLimits: true, stopAtUtilization: null });
    assert.equal(resolveGatewayConfig({ demo: true, ...personalAccountLimits(0.8) }).stopAtUtilization, 0.8);
  });
});

describe('usage limits: the ticket proxy holds until the reset', () => {
  let upstream: FakeAnthropicUpstream;
  let proxy: TicketProxy | undefined;
  let events: TicketProxyEvent[];

  beforeEach(async () => {
    upstream = await FakeAnthropicUpstream.start();
    events = [];
  });
  afterEach(async () => {
    await proxy?.close();
    await upstream.close();
  });

  /** The 3105 a gateway with account limits answers while the account is held (server time: now). */
  const held = (resetInMs: number) => {
    const now = Date.now();
    return {
      kind: 'error' as const,
      status: 429,
      code: BusinessCode.NotAdmitted,
      body: {
        type: 'error',
        error: {
          type: 'rate_limit_error',
          code: '3105',
          message: 'usage limit',
          retry_after_ms: resetInMs,
          limit_reset_at: now + resetInMs,
        },
        server_time: now,
      },
      headers: { [SERVER_TIME_HEADER]: String(now), 'retry-after': String(Math.ceil(resetInMs / 1000)) },
    };
  };
  const post = () =>
    fetch(proxy!.baseUrl + '/v1/messages', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });

  it('a near reset: held (not parked) and reported, sent again after it; the next answer reports it lifted', async () => {
    proxy = await TicketProxy.start({
      upstreamBaseUrl: upstream.url,
      apiKey: 'k',
      ticketId: 'T',
      holdMaxMs: 100,
      usageLimitParkMs: 60_000,
      onEvent: (e) => events.push(e),
    });
    upstream.enqueue(held(400), held(300), { kind: 'text', text: 'ok' });
    const res = await post();
    assert.equal(res.status, 200);
    await res.text();
    const limits = events.filter((e): e is Extract<TicketProxyEvent, { type: 'usage-limit' }> => e.type === 'usage-limit');
    assert.equal(limits[0].park, false);
    assert.ok(limits[0].resetAt !== null && limits.at(-1)!.resetAt === null, 'reported, then lifted');
    assert.equal(upstream.messageRequests().length, 3);
  });

  it('a reset past the park bound reports park (the runtime then stops the agent and parks the task)', async () => {
    proxy = await TicketProxy.start({
      upstreamBaseUrl: upstream.url,
      apiKey: 'k',
      ticketId: 'T',
      holdMaxMs: 100,
      usageLimitParkMs: 1_000,
      onEvent: (e) => events.push(e),
    });
    upstream.setDefaultReply(held(3_600_000));
    const abort = new AbortController();
    const pending = fetch(proxy.baseUrl + '/v1/messages', { method: 'POST', body: '{}', signal: abort.signal }).catch(() => undefined);
    const deadline = Date.now() + 10_000;
    while (!events.some((e) => e.type === 'usage-limit') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const limit = events.find((e): e is Extract<TicketProxyEvent, { type: 'usage-limit' }> => e.type === 'usage-limit');
    assert.equal(limit?.park, true);
    assert.equal(proxy.state, 'holding', 'held, not failed');
    abort.abort();
    await pending;
  });
});

describe('usage limits: the ledger (schema v12)', () => {
  it("a ticket row keeps the usage limit's reset, written only when it changes, and survives a reopen", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'offpeak-limit-'));
    try {
      const store = await TaskStore.open({ directory: dir, clock: new ManualClock(NOW), watch: false });
      await store.mutate((tx) => tx.tickets.insert({ ticketId: 'A', taskId: 't', serverState: 'active' }));
      assert.equal(store.read((tx) => tx.tickets.get('A'))?.usageLimitResetAt, null);
      assert.equal(await store.mutate((tx) => tx.tickets.markUsageLimit('A', NOW + 60_000)), true);
      assert.equal(await store.mutate((tx) => tx.tickets.markUsageLimit('A', NOW + 60_000)), false, 'unchanged: nothing written');
      await store.close();
      const again = await TaskStore.open({ directory: dir, clock: new ManualClock(NOW), watch: false });
      assert.equal(again.read((tx) => tx.tickets.get('A'))?.usageLimitResetAt, NOW + 60_000);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('usage limits: what the card and the status bar say', () => {
  it('the card line: reset time and the wait in hours and minutes; nothing once it passed', () => {
    const reset = NOW + (2 * 60 + 13) * 60_000;
    assert.match(usageLimitText(reset, NOW)!, /^Waiting for your usage limit to reset at \d\d:\d\d · in 2 h 13 min$/);
    assert.match(usageLimitText(NOW + 20_000, NOW)!, /· in 1 min$/);
    assert.match(usageLimitText(NOW + 3_600_000, NOW)!, /· in 1 h$/);
    assert.equal(usageLimitText(NOW, NOW), null);
  });

  it("the card carries the ledger's latest reset while the task is not finished", () => {
    const task = { id: 't', status: 'queued', title: 't', prompt: 'p' } as unknown as OffPeakTask;
    const rows = [
      { ticketId: 'a', usageLimitResetAt: NOW + 1_000 },
      { ticketId: 'b', usageLimitResetAt: null },
    ] as unknown as TicketRecord[];
    assert.equal(toTaskCard(task, rows).usageLimitResetAt, NOW + 1_000);
    assert.equal(toTaskCard({ ...task, status: 'completed' }, rows).usageLimitResetAt, null);
  });

  it('the status bar names the account state while the limit holds', () => {
    const view = statusBarView({ needsInput: 0, running: 1, queued: 0 }, undefined, 0, { resetAt: NOW + 60_000, now: NOW });
    assert.match(view.text, /usage limit until \d\d:\d\d, 1 running/);
    assert.match(view.tooltip, /Your usage limit is reached/);
    assert.doesNotMatch(
      statusBarView({ needsInput: 0, running: 1, queued: 0 }, undefined, 0, { resetAt: NOW, now: NOW }).text,
      /usage limit/,
    );
  });
});
