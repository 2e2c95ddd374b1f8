// The rollout switch (exposure) on the real gateway, with each store: turning it off hides creation
// only. A take for a task the gateway has given tickets to is a continuation and keeps working
// (docs/flows.md#server-ticket-states), so a multi-segment task is not stranded by its 3102.
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock';
import type { GatewayConfig } from '../../src/gateway/config';
import { silentLogger } from '../../src/gateway/http/logger';
import { GatewayServer } from '../../src/gateway/http/server';
import { MemoryTicketStore } from '../../src/gateway/stores/store';
import { AvailabilityResponseSchema, ClientConfigsResponseSchema, TakeResponseSchema } from '../../src/protocol/gateway';
import {
  errorOf,
  GATEWAY_TEST_STORES,
  GatewayTestClient,
  KEYS,
  MORNING_SHANGHAI,
  startTestGateway,
  storeLabel,
  TempDir,
  testConfig,
  ticketIdOf,
  useGatewayStore,
  type TestGateway,
} from './gateway-helpers';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';

const SEGMENT_MS = 60_000;

for (const kind of GATEWAY_TEST_STORES)
  describe(`reference gateway: rollout off keeps existing tasks running (real server, ${storeLabel(kind)})`, () => {
    useGatewayStore(kind);
    let upstream: FakeAnthropicUpstream;
    let dir: TempDir;
    let current: TestGateway | undefined;
    /** The memory store outlives its gateway here, as a file or database does. */
    let memory: MemoryTicketStore | undefined;

    before(async () => {
      upstream = await FakeAnthropicUpstream.start();
    });
    after(() => upstream.close());
    beforeEach(() => {
      dir = new TempDir();
      memory = kind === 'memory' ? new MemoryTicketStore() : undefined;
    });
    afterEach(async () => {
      await current?.close();
      current = undefined;
      dir.remove();
    });

    /** A gateway on this test's store (the same tickets across restarts). */
    async function start(overrides: Partial<GatewayConfig>, clock: ManualClock): Promise<TestGateway> {
      const settings = { upstreamUrl: upstream.url, activeWindowMs: SEGMENT_MS, ...overrides };
      if (!memory) {
        current = await startTestGateway(dir.file('tickets.sqlite'), settings, clock);
        return current;
      }
      const gateway = await GatewayServer.start({
        config: testConfig(dir.file('unused.sqlite'), { ...settings, store: 'memory' }),
        store: memory,
        clock,
        log: silentLogger,
      });
      current = {
        gateway,
        clock,
        alice: new GatewayTestClient(gateway.url, KEYS.alice),
        bob: new GatewayTestClient(gateway.url, KEYS.bob),
        frank: new GatewayTestClient(gateway.url, KEYS.frank),
        close: () => gateway.close(1000),
      };
      return current;
    }

    async function restart(overrides: Partial<GatewayConfig>): Promise<TestGateway> {
      const clock = (current as TestGateway).clock;
      await (current as TestGateway).close();
      current = undefined;
      return start(overrides, clock);
    }

    it('item 11: with exposure off, the retake of a task whose segment ended is a continuation; new tasks get 3101', async () => {
      const on = await start({}, new ManualClock(MORNING_SHANGHAI));
      const first = ticketIdOf(await on.alice.take('long-task'));
      const waiting = ticketIdOf(await on.alice.take('waiting-task'));
      await on.gateway.tick();
      assert.equal((await on.alice.message(first)).status, 200, 'the first segment runs');

      const off = await restart({ exposure: false });
      off.clock.advance(SEGMENT_MS + 1);
      assert.equal(errorOf(await off.alice.message(first)).code, '3102', 'the segment is over');
      await off.alice.settle(first, 'segment_end');

      const retake = await off.alice.take('long-task');
      assert.equal(retake.status, 200, `the next segment's take: ${JSON.stringify(retake.body)}`);
      const next = TakeResponseSchema.parse(retake.body);
      assert.notEqual(next.ticket_id, first);
      assert.equal(next.reused, false);
      await off.gateway.tick();
      assert.equal((await off.alice.message(next.ticket_id)).status, 200, 'the second segment runs with the rollout off');

      // A task waiting in the queue keeps its ticket: its retry answers the same one.
      const again = TakeResponseSchema.parse((await off.alice.take('waiting-task')).body);
      assert.deepEqual([again.ticket_id, again.reused], [waiting, true]);

      // Creation stays hidden: a new task id, and another user's take of alice's task id, are refused.
      const fresh = await off.alice.take('new-task');
      assert.deepEqual([fresh.status, errorOf(fresh).code], [403, '3101']);
      const foreign = await off.bob.take('long-task');
      assert.deepEqual([foreign.status, errorOf(foreign).code], [403, '3101']);
      assert.equal(ClientConfigsResponseSchema.parse((await off.alice.configs()).body).exposure.enabled, false);
      assert.equal(AvailabilityResponseSchema.parse((await off.alice.availability()).body).reason, 'disabled');
    });

    it('item 11: a user whose own exposure is off continues the tasks they have, and cannot start one', async () => {
      const users = (exposure: boolean) => testConfig('', {}).users?.map((u) => (u.id === 'alice' ? { ...u, exposure } : u));
      const on = await start({ users: users(true) }, new ManualClock(MORNING_SHANGHAI));
      const first = ticketIdOf(await on.alice.take('long-task'));
      await on.alice.settle(first, 'segment_end');
      const off = await restart({ users: users(false) });
      assert.equal((await off.alice.take('long-task')).status, 200);
      assert.equal(errorOf(await off.alice.take('other-task')).code, '3101');
    });
  });
