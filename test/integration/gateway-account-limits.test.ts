// The gateway's usage-limit hold (docs/flows.md#usage-limits): the REAL reference gateway with
// `accountLimits` on, a ManualClock, in front of the scripted fake upstream (a test fixture standing
// in for the model API) answering with the unified rate-limit header shapes.
import assert from 'node:assert/strict';
import { GatewayErrorSchema, LIMIT_RESET_HEADER, readLimitResetAt } from '../../src/protocol/gateway';
import { unifiedLimitHeaders, usageLimitRejected } from '../fixtures/fake-anthropic-upstream';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';
import {
  errorOf,
  GATEWAY_TEST_STORES,
  GatewayTestClient,
  gatewaySuite,
  KEYS,
  longPollsWaiting,
  spawnGateway,
  startTestGateway,
  storeLabel,
  TempDir,
  ticketIdOf,
  useGatewayStore,
  type RunningGateway,
  type TestGateway,
} from './gateway-helpers';

/** Epoch ms as the headers carry them (whole seconds, rounded up). */
const asSent = (ms: number) => Math.ceil(ms / 1000) * 1000;

for (const kind of GATEWAY_TEST_STORES.filter((k) => k !== 'mysql')) {
  describe(`reference gateway: account usage limits (fake upstream fixture, ${storeLabel(kind)})`, () => {
    useGatewayStore(kind);
    const suite = gatewaySuite({ accountLimits: true, upstreamApiKey: 'sk-upstream-secret' });

    async function stateOf(t: TestGateway, ticket: string, who: 'alice' | 'bob' = 'alice'): Promise<unknown> {
      return (await t[who].stateOf(ticket)).state;
    }

    it('a rejected 5-hour window holds every model request of the account (3105 with the reset) and promotes nothing; the upstream sees only the request that got the 429; at the reset both go on', async () => {
      const t = await suite.start({ segmentCapacity: 2 });
      const a = ticketIdOf(await t.alice.take('task-a'));
      const b = ticketIdOf(await t.bob.take('task-b'));
      const c = ticketIdOf(await t.alice.take('task-c'));
      await t.gateway.tick();
      assert.deepEqual([await stateOf(t, a), await stateOf(t, b, 'bob'), await stateOf(t, c)], ['ready', 'ready', 'queued']);

      const reset = t.clock.now() + 20_000;
      suite.upstream.enqueue(
        usageLimitRejected({
          reset5hAt: reset,
          status5h: 'rejected',
          reset7dAt: t.clock.now() + 3 * 86_400_000,
          status7d: 'allowed',
          claim: 'five_hour',
        }),
      );
      const first = await t.alice.message(a);
      assert.equal(first.status, 429);
      assert.equal(errorOf(first).code, '3105');
      assert.equal((errorOf(first) as { limit_reset_at?: number }).limit_reset_at, asSent(reset));
      assert.equal(first.headers.get(LIMIT_RESET_HEADER), String(asSent(reset)));
      assert.equal(readLimitResetAt(GatewayErrorSchema.parse(first.body)), asSent(reset), 'the one error shape, with the reset added');
      assert.equal(first.headers.get('retry-after'), String(Math.ceil((asSent(reset) - t.clock.now()) / 1000)));

      // Another user's ticket and the same ticket again: held at the gateway, nothing goes upstream.
      for (const answer of [await t.bob.message(b), await t.alice.message(a)]) {
        assert.equal(answer.status, 429);
        assert.equal((errorOf(answer) as { limit_reset_at?: number }).limit_reset_at, asSent(reset));
      }
      assert.equal(suite.upstream.messageRequests().length, 1, 'only the refused request reached the upstream');

      // Capacity frees, but the account is held: the queued ticket is not promoted.
      await t.alice.settle(a, 'completed');
      await t.gateway.tick();
      assert.equal(await stateOf(t, c), 'queued');
      assert.equal((await t.alice.stateOf(c)).promotion_held_until, asSent(reset), 'its status says until when');

      t.clock.advance(asSent(reset) - t.clock.now());
      const after = await t.bob.message(b);
      assert.equal(after.status, 200);
      assert.equal(suite.upstream.messageRequests().length, 2);
      await t.gateway.tick();
      assert.equal(await stateOf(t, c), 'ready');
    });

    it('a hold that starts answers the status long-polls of queued tickets, with until when promotion is held', async function () {
      this.timeout(20_000); // wait_ms is 60 s: only an answer on the change can beat this timeout
      const t = await suite.start({ segmentCapacity: 1, statusMaxWaitMs: 60_000 });
      const a = ticketIdOf(await t.alice.take('task-a'));
      const c = ticketIdOf(await t.bob.take('task-c'));
      await t.gateway.tick();
      assert.deepEqual([await stateOf(t, a), await stateOf(t, c, 'bob')], ['ready', 'queued']);
      const polling = t.bob.status([c], 60_000);
      await longPollsWaiting(t.gateway);
      const reset = t.clock.now() + 600_000;
      suite.upstream.enqueue(
        usageLimitRejected({
          reset5hAt: reset,
          status5h: 'rejected',
          reset7dAt: t.clock.now() + 3 * 86_400_000,
          status7d: 'allowed',
          claim: 'five_hour',
        }),
      );
      assert.equal((await t.alice.message(a)).status, 429);
      const answer = await polling;
      assert.equal(answer.status, 200);
      assert.equal(answer.body.tickets[0].state, 'queued');
      assert.equal(
        answer.body.tickets[0].promotion_held_until,
        asSent(reset),
        "bob's window learns of the hold from the poll it was waiting on",
      );
    });

    it('a 429 without the unified "rejected" status is passed through and holds nothing', async () => {
      const t = await suite.start();
      const a = ticketIdOf(await t.alice.take('task-a'));
      await t.gateway.tick();
      suite.upstream.enqueue({
        kind: 'error',
        status: 429,
        retryAfterSeconds: 3,
        headers: unifiedLimitHeaders({ status: 'allowed', reset5hAt: t.clock.now() + 60_000 }),
      });
      const plain = await t.alice.message(a);
      assert.equal(plain.status, 429);
      assert.equal(errorOf(plain).code, undefined, "upstream's own error body, not a gateway 3105");
      assert.equal(plain.headers.get(LIMIT_RESET_HEADER), null);
      assert.equal((await t.alice.message(a)).status, 200);
      assert.equal(suite.upstream.messageRequests().length, 2);
    });

    it("stopAtUtilization: an allowed_warning answer above the threshold stops promotion until its window resets, while the running segment's requests go on", async () => {
      const t = await suite.start({ segmentCapacity: 1, stopAtUtilization: 0.8 });
      const a = ticketIdOf(await t.alice.take('task-a'));
      const b = ticketIdOf(await t.bob.take('task-b'));
      await t.gateway.tick();
      const reset = t.clock.now() + 60_000;
      suite.upstream.enqueue({
        kind: 'text',
        text: 'ok',
        headers: unifiedLimitHeaders({
          status: 'allowed_warning',
          utilization5h: 0.85,
          reset5hAt: reset,
          utilization7d: 0.4,
          reset7dAt: t.clock.now() + 86_400_000,
        }),
      });
      assert.equal((await t.alice.message(a)).status, 200);
      assert.equal((await t.alice.message(a)).status, 200, 'the running segment goes on');
      assert.equal(suite.upstream.messageRequests().length, 2);
      await t.alice.settle(a, 'completed');
      await t.gateway.tick();
      assert.equal(await stateOf(t, b, 'bob'), 'queued', 'no new ticket above the headroom threshold');
      assert.equal((await t.bob.stateOf(b)).promotion_held_until, asSent(reset));
      t.clock.advance(asSent(reset) - t.clock.now());
      await t.gateway.tick();
      assert.equal(await stateOf(t, b, 'bob'), 'ready');
      assert.equal((await t.bob.stateOf(b)).promotion_held_until, undefined);
    });

    if (kind === 'sqlite') {
      it('a restart of the gateway during a hold keeps the hold (SQLite file)', async () => {
        const t = await suite.start({ segmentCapacity: 1 });
        const a = ticketIdOf(await t.alice.take('task-a'));
        const b = ticketIdOf(await t.bob.take('task-b'));
        await t.gateway.tick();
        const reset = t.clock.now() + 20_000;
        suite.upstream.enqueue(usageLimitRejected({ resetAt: reset }));
        assert.equal((await t.alice.message(a)).status, 429);
        await t.alice.settle(a, 'completed');
        await t.close();
        suite.current = undefined;

        const again = await startTestGateway(
          suite.dir.file('tickets.sqlite'),
          { upstreamUrl: suite.upstream.url, accountLimits: true, upstreamApiKey: 'sk-upstream-secret', segmentCapacity: 1 },
          t.clock,
        );
        suite.current = again;
        await again.gateway.tick();
        assert.equal(await stateOf(again, b, 'bob'), 'queued', 'nothing promoted after the restart');
        const c = ticketIdOf(await again.alice.take('task-c'));
        assert.equal(await stateOf(again, c), 'queued');
        t.clock.advance(asSent(reset) - t.clock.now() - 1_000);
        await again.gateway.tick();
        assert.equal(await stateOf(again, b, 'bob'), 'queued');
        t.clock.advance(1_000);
        await again.gateway.tick();
        assert.equal(await stateOf(again, b, 'bob'), 'ready');
        assert.equal((await again.bob.message(b)).status, 200);
        assert.equal(suite.upstream.messageRequests().length, 2);
      });
    }
  });
}

describe('reference gateway: without account limits (team mode)', () => {
  const suite = gatewaySuite({ upstreamApiKey: 'sk-upstream-secret' });

  it('a rejected usage-limit answer is passed through unchanged and holds nothing', async () => {
    const t = await suite.start();
    const a = ticketIdOf(await t.alice.take('task-a'));
    await t.gateway.tick();
    suite.upstream.enqueue(usageLimitRejected({ reset5hAt: t.clock.now() + 20_000, status5h: 'rejected' }));
    const answer = await t.alice.message(a);
    assert.equal(answer.status, 429);
    assert.equal(errorOf(answer).code, undefined);
    assert.equal(answer.headers.get('anthropic-ratelimit-unified-5h-reset') !== null, true, 'the reset header still reaches the user');
    assert.equal((await t.alice.message(a)).status, 200);
  });
});

describe('reference gateway process: a usage-limit hold survives SIGKILL (--account-limits, SQLite file)', () => {
  let upstream: FakeAnthropicUpstream;
  let dir: TempDir;
  const running: RunningGateway[] = [];

  beforeEach(async () => {
    upstream = await FakeAnthropicUpstream.start();
    dir = new TempDir();
  });
  afterEach(async () => {
    for (const g of running.splice(0)) {
      if (g.child.exitCode === null && g.child.signalCode === null) g.child.kill('SIGKILL');
      await g.exited;
    }
    await upstream.close();
    dir.remove();
  });

  const start = async () => {
    const g = await spawnGateway(
      [
        '--port',
        '0',
        '--store',
        'sqlite',
        '--db',
        dir.file('gateway.sqlite'),
        '--always-open',
        '--promote-interval-ms',
        '0',
        '--account-limits',
        '--test-hooks',
        '--upstream-url',
        upstream.url,
        '--log-level',
        'silent',
      ],
      { env: { OFFPEAK_GATEWAY_USERS: `alice:${KEYS.alice}`, OFFPEAK_UPSTREAM_API_KEY: 'sk-upstream-secret' } },
    );
    running.push(g);
    return {
      g,
      alice: new GatewayTestClient(g.url, KEYS.alice),
      hook: (path: string, body: unknown = {}) =>
        fetch(g.url + path, { method: 'POST', body: JSON.stringify(body) }).then((r) => r.json() as Promise<{ server_time: number }>),
    };
  };

  it('the process is killed during a hold; started again on the same file it still holds requests and promotion until the reset', async () => {
    const first = await start();
    const a = ticketIdOf(await first.alice.take('task-a'));
    await first.hook('/__test/tick');
    const reset = Date.now() + 20_000;
    upstream.enqueue(usageLimitRejected({ reset5hAt: reset, status5h: 'rejected' }));
    assert.equal((await first.alice.message(a)).status, 429);
    first.g.child.kill('SIGKILL');
    await first.g.exited;

    const second = await start();
    const held = await second.alice.message(a);
    assert.equal(held.status, 429);
    assert.equal((errorOf(held) as { limit_reset_at?: number }).limit_reset_at, asSent(reset));
    const b = ticketIdOf(await second.alice.take('task-b'));
    await second.hook('/__test/tick');
    assert.equal((await second.alice.stateOf(b)).state, 'queued', 'nothing promoted after the restart');
    assert.equal(upstream.messageRequests().length, 1);

    const { server_time } = await second.hook('/__test/advance-clock', { ms: 0 });
    await second.hook('/__test/advance-clock', { ms: asSent(reset) - server_time });
    assert.equal((await second.alice.message(a)).status, 200);
    await second.hook('/__test/tick');
    assert.equal((await second.alice.stateOf(b)).state, 'ready');
  });
});
