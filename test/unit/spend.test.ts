// What a task spent (docs/flows.md#capacity-and-cost): dollars at a known price with the setting over
// the price list, each window's growth between answers as the gateway credits it, and the one wording.
import assert from 'node:assert/strict';
import { listedPrice } from '../../src/core/listed-prices';
import { makePricer, priceOverrides } from '../../src/core/price-list';
import { costAt, formatShare, formatUsd, spendOf, spendText, typicalSpendText, type ModelPrice } from '../../src/core/spend';
import type { SegmentUsage } from '../../src/core/types';
import { addSegmentUsage } from '../../src/core/usage';
import { WindowShareMeter } from '../../src/gateway/model/window-share';
import { withFollowUps } from '../../src/panel/task-card';
import { formatWindowShare, readWindowShare } from '../../src/protocol/window-share';
import { unifiedLimitHeaders } from '../fixtures/fake-anthropic-upstream';

const answer = { inputTokens: 20_000, outputTokens: 2_000, cacheReadTokens: 500_000, cacheWriteTokens: 40_000 };
const SONNET: ModelPrice = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

describe('capacity and cost: spend', () => {
  it('item 1: dollars from a known price: each kind of token at its own rate (cache reads and writes priced as such)', () => {
    // 20k × 3 + 2k × 15 + 500k × 0.3 + 40k × 3.75, per million.
    assert.equal(Number(costAt(SONNET, answer).toFixed(6)), 0.39);
  });

  it('item 1: the shipped price list (@pydantic/genai-prices) prices an Anthropic answer, each kind at its rate; a model it does not know has none', () => {
    // claude-sonnet-4-5: $3 input, $15 output, $0.30 cache read, $3.75 cache write per million.
    const small = { inputTokens: 20_000, outputTokens: 2_000, cacheReadTokens: 50_000, cacheWriteTokens: 40_000 };
    assert.equal(Number(listedPrice('claude-sonnet-4-5-20250929', small)!.toFixed(6)), 0.255);
    assert.equal(listedPrice('no-such-model', small), null);
  });

  it('item 1: offPeak.prices overrides the price list for its model (exact id, or a prefix ending in *); other models keep the list; a malformed entry is left out', () => {
    const listed = (model: string | null) => (model === 'claude-listed' ? 1 : null);
    const overrides = priceOverrides({
      'claude-mine': SONNET,
      'claude-team-*': { input: 1, output: 1, cacheRead: 1, cacheWrite: 1 },
      'claude-listed': { input: -1, output: 1, cacheRead: 1, cacheWrite: 1 },
      broken: 'cheap',
    });
    assert.deepEqual([...overrides.keys()], ['claude-mine', 'claude-team-*']);
    const price = makePricer(overrides, (model) => listed(model));
    assert.equal(Number(price('claude-mine', answer)!.toFixed(6)), 0.39);
    assert.equal(Number(price('claude-team-x', answer)!.toFixed(6)), 0.562);
    assert.equal(price('claude-listed', answer), 1, 'the list, since its override was malformed');
    assert.equal(price('unknown', answer), null);
    assert.equal(price(null, answer), null);
  });

  it("item 1: a window's share is its growth since the account's previous answer, credited to that answer's ticket (same user only); a new window counts what it holds", () => {
    const meter = new WindowShareMeter();
    const reset5h = Date.UTC(2026, 0, 5, 15);
    const reset7d = Date.UTC(2026, 0, 9);
    const h = (u5: number, u7: number, r5 = reset5h) =>
      unifiedLimitHeaders({ status: 'allowed', utilization5h: u5, utilization7d: u7, reset5hAt: r5, reset7dAt: reset7d });
    const first = meter.observe('t1', 'alice', h(0.2, 0.5))!;
    assert.deepEqual([first.ticketId, first.fiveHour, first.sevenDay], [null, 0, 0], 'nothing before the first answer');
    const second = meter.observe('t2', 'alice', h(0.23, 0.503))!;
    assert.deepEqual([second.ticketId, second.fiveHour, second.sevenDay], ['t1', 0.03, 0.003]);
    const other = meter.observe('t9', 'bob', h(0.25, 0.504))!;
    assert.deepEqual([other.ticketId, other.fiveHour], [null, 0], "never credited to another user's ticket");
    const rolled = meter.observe('t3', 'bob', h(0.01, 0.505, reset5h + 5 * 3_600_000))!;
    assert.deepEqual([rolled.ticketId, rolled.fiveHour, rolled.sevenDay], ['t9', 0.01, 0.001]);
    assert.equal(meter.observe('t4', 'bob', { 'content-type': 'application/json' }), undefined, 'an API key reports no windows');
    assert.deepEqual(readWindowShare(formatWindowShare(rolled)), rolled, 'the header carries it whole');
    assert.equal(readWindowShare('t=x;5h=2;7d=0;u5h=0;u7d=0'), undefined, 'a share above 1 is not one');
  });

  it('item 1: one wording: windows where reported, else dollars, else nothing; answers and fix rounds add up', () => {
    const base = { model: 'm', requests: 1, ...answer };
    const priced = addSegmentUsage({ ...base, costUsd: 0.39 }, { ...base, costUsd: 0.39 });
    assert.equal(spendText(spendOf(priced)!), '$0.78');
    const shared = addSegmentUsage(
      { ...base, windowShare: { fiveHour: 0.012, sevenDay: 0.001 } },
      { ...base, windowShare: { fiveHour: 0.2, sevenDay: 0.0002 } },
    );
    assert.equal(spendText(spendOf(shared)!), '21 % of 5 h · 0.1 % of week');
    assert.equal(spendOf(base as SegmentUsage), null);
    assert.deepEqual(
      [formatUsd(0.004), formatUsd(12.4), formatShare(0.0004), formatShare(0.034)],
      ['< $0.01', '$12.40', '< 0.1 %', '3.4 %'],
    );
  });

  it("item 1: follow-ups add to their task: a task's total with its follow-ups (and theirs), none without any", () => {
    const base = { model: 'm', requests: 1, ...answer };
    const usage = new Map([
      ['a', { ...base, costUsd: 0.5 }],
      ['b', { ...base, costUsd: 0.25 }],
      ['c', { ...base, costUsd: 0.125 }],
      ['x', { ...base, costUsd: 4 }],
    ]);
    const links = new Map([
      ['b', { followUpOf: 'a' }],
      ['c', { followUpOf: 'b' }],
    ]);
    const total = withFollowUps('a', (id) => usage.get(id) ?? null, links)!;
    assert.equal(total.costUsd, 0.875);
    assert.equal(total.requests, 3);
    assert.equal(withFollowUps('b', (id) => usage.get(id) ?? null, links)!.costUsd, 0.375);
    assert.equal(
      withFollowUps('c', (id) => usage.get(id) ?? null, links),
      null,
      'no follow-ups: the card shows its own',
    );
    assert.equal(
      withFollowUps('x', (id) => usage.get(id) ?? null, links),
      null,
    );
  });

  it('item 5: will it fit: the median of the last tasks of a folder, in the unit of the newest, with how many it is of', () => {
    const d = (costUsd: number) => ({ costUsd });
    const w = (fiveHour: number) => ({ windowShare: { fiveHour, sevenDay: fiveHour / 10 } });
    assert.equal(typicalSpendText([d(0.4), null, d(1.2), d(0.1)]), 'Similar tasks here: $0.40 (median of the last 3)');
    assert.equal(typicalSpendText([w(0.02), d(9), w(0.04)]), 'Similar tasks here: 3 % of 5 h · 0.3 % of week (median of the last 2)');
    assert.equal(typicalSpendText([null, {}]), null, 'nothing spent yet: nothing said');
  });
});
