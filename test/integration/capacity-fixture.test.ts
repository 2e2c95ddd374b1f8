// The subscription-account fixture (test/fixtures/subscription-account.ts, a TEST FIXTURE standing in
// for the model API of a Claude Pro/Max login) reached through the REAL reference gateway with
// `accountLimits` on, as personal mode runs it (docs/flows.md#usage-limits): what later capacity
// tests build on must reach the client as the real API sends it.
import assert from 'node:assert/strict';
import { parseSse } from '../fixtures/fake-anthropic-upstream';
import { SubscriptionAccount } from '../fixtures/subscription-account';
import { gatewaySuite, ticketIdOf } from './gateway-helpers';

describe('capacity fixture: a subscription account behind the real gateway', () => {
  const suite = gatewaySuite({ accountLimits: true, upstreamApiKey: 'sk-upstream-secret' });

  it('each streamed answer carries the unified headers of the reading before it (resets reach the client) and its usage with cache tokens in message_start; the account spends each answer', async () => {
    const t = await suite.start();
    const ticket = ticketIdOf(await t.alice.take('task-a'));
    await t.gateway.tick();
    const reset5hAt = t.clock.now() + 3 * 3_600_000;
    const reset7dAt = t.clock.now() + 4 * 86_400_000;
    const account = new SubscriptionAccount({ utilization5h: 0.2, utilization7d: 0.5, reset5hAt, reset7dAt });
    const usage = { input_tokens: 900, output_tokens: 100, cache_read_input_tokens: 50_000, cache_creation_input_tokens: 4_000 };
    suite.upstream.setDefaultReply(() => account.answer({ kind: 'text', text: 'done', usage }));

    const body = { model: 'm', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] };
    const first = await t.alice.message(ticket, body);
    const second = await t.alice.message(ticket, body);
    for (const answer of [first, second]) {
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('anthropic-ratelimit-unified-5h-reset'), String(Math.ceil(reset5hAt / 1000)));
      assert.equal(answer.headers.get('anthropic-ratelimit-unified-7d-reset'), String(Math.ceil(reset7dAt / 1000)));
      const start = parseSse(answer.body as unknown as string).find((e) => e.event === 'message_start')?.data as {
        message: { usage: Record<string, number> };
      };
      assert.equal(start.message.usage.cache_read_input_tokens, 50_000);
      assert.equal(start.message.usage.cache_creation_input_tokens, 4_000);
    }
    // 900 + 100 + 4000 + 50000 / 10 = 10,000 tokens an answer: 0.1 % of the 5-hour window, 0.01 % of the week.
    assert.deepEqual(
      account.readings.map((r) => [r.utilization5h, r.utilization7d]),
      [
        [0.2, 0.5],
        [0.201, 0.5001],
      ],
    );
  });
});
