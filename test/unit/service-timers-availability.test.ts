// ManualTimers (the simulated time every service test runs on) and the availability snapshot
// against the real reference gateway in-process on loopback.
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock';
import { GatewayServer } from '../../src/gateway/http/server';
import { GatewayClient } from '../../src/gateway-client/client';
import { ManualTimers } from '../../src/core/timers';
import { AvailabilitySnapshot, ServiceError } from '../../src/service';
import { ANSWERED_RECHECK_MS } from '../../src/service/availability';
import { serviceErrorFromGateway } from '../../src/service/errors';
import { GatewayError } from '../../src/gateway-client/errors';

describe('service: ManualTimers', () => {
  it('fires due timers in time order, moving the clock to each, including ones scheduled meanwhile', async () => {
    const clock = new ManualClock(1000);
    const timers = new ManualTimers(clock);
    const fired: [string, number][] = [];
    timers.setTimeout(() => fired.push(['b', clock.now()]), 200);
    timers.setTimeout(() => {
      fired.push(['a', clock.now()]);
      timers.setTimeout(() => fired.push(['a2', clock.now()]), 50);
    }, 100);
    const cancelled = timers.setTimeout(() => fired.push(['never', clock.now()]), 150);
    timers.clearTimeout(cancelled);
    await timers.advanceTo(1300);
    assert.deepEqual(fired, [
      ['a', 1100],
      ['a2', 1150],
      ['b', 1200],
    ]);
    assert.equal(clock.now(), 1300);
    assert.equal(timers.pending, 0);
  });
});

describe('service: availability snapshot', function () {
  this.timeout(20_000);
  const KEY = 'sk-availability-unit-1';
  let gateway: GatewayServer;
  let clock: ManualClock;
  let timers: ManualTimers;
  let snapshot: AvailabilitySnapshot;
  let client: GatewayClient;

  beforeEach(async () => {
    clock = new ManualClock(Date.parse('2026-11-29T20:00:00Z'));
    timers = new ManualTimers(clock);
    gateway = await GatewayServer.start({
      clock,
      config: {
        port: 0,
        store: 'memory',
        alwaysOpen: true,
        promoteIntervalMs: 0,
        takesPerWindow: 1,
        quotaWindowMs: 600_000,
        users: [{ id: 'u', apiKey: KEY, plan: 'coding' }],
        logLevel: 'silent',
      },
    });
    client = new GatewayClient({ baseUrl: gateway.url, apiKey: () => KEY, clock });
    snapshot = new AvailabilitySnapshot(client, clock, timers);
  });
  afterEach(async () => {
    snapshot.dispose();
    await gateway.close(0);
  });

  it('enabled, then disabled until next_take_at, re-checked at that moment, enabled again: no permanent flag', async () => {
    assert.equal((await snapshot.refresh()).status, 'enabled');
    await client.take('t1');
    const s = await snapshot.refresh();
    assert.equal(s.status, 'disabled');
    assert.equal(snapshot.canCreate, false);
    const nextTakeAt = s.status === 'disabled' ? s.nextTakeAt! : 0;
    assert.equal(nextTakeAt, Date.parse('2026-11-29T20:00:00Z') + 600_000);
    assert.equal(timers.nextDueAt(), nextTakeAt, 're-check scheduled exactly at next_take_at');
    await timers.advanceTo(nextTakeAt, () => snapshot.idle());
    await snapshot.idle();
    assert.equal(snapshot.state.status, 'enabled');
  });

  it('a failed check disables until a refresh succeeds, retried with backoff', async () => {
    const port = gateway.port;
    await gateway.close(0);
    const s = await snapshot.refresh();
    assert.equal(s.status, 'error');
    assert.equal(snapshot.canCreate, false);
    assert.equal(timers.nextDueAt(), clock.now() + 10_000);
    gateway = await GatewayServer.start({
      clock,
      config: {
        port,
        store: 'memory',
        alwaysOpen: true,
        promoteIntervalMs: 0,
        users: [{ id: 'u', apiKey: KEY, plan: 'coding' }],
        logLevel: 'silent',
      },
    });
    await timers.advanceTo(clock.now() + 10_000, () => snapshot.idle());
    await snapshot.idle();
    assert.equal(snapshot.state.status, 'enabled');
  });

  it('the sync tells it: a failure elsewhere checks an enabled snapshot at once; an answer elsewhere re-checks a failed one before its backoff, at most once per 10 s', async () => {
    assert.equal((await snapshot.refresh()).status, 'enabled');
    const port = gateway.port;
    await gateway.close(0);
    snapshot.noteGatewayUnreachable();
    await snapshot.idle();
    assert.equal(snapshot.state.status, 'error', 'the failure reached the snapshot');
    gateway = await GatewayServer.start({
      clock,
      config: {
        port,
        store: 'memory',
        alwaysOpen: true,
        promoteIntervalMs: 0,
        users: [{ id: 'u', apiKey: KEY, plan: 'coding' }],
        logLevel: 'silent',
      },
    });
    clock.advance(ANSWERED_RECHECK_MS - 1);
    snapshot.noteGatewayAnswered();
    await snapshot.idle();
    assert.equal(snapshot.state.status, 'error', 'not re-checked within 10 s of the last check');
    clock.advance(1);
    snapshot.noteGatewayAnswered();
    await snapshot.idle();
    assert.equal(snapshot.state.status, 'enabled', 're-checked without waiting for its own timer');
  });

  it('next_take_at is corrected for clock skew (gateway clock 2 h ahead)', async () => {
    await gateway.close(0);
    const ahead = { now: () => clock.now() + 2 * 3_600_000 };
    gateway = await GatewayServer.start({
      clock: ahead,
      config: {
        port: 0,
        store: 'memory',
        alwaysOpen: true,
        promoteIntervalMs: 0,
        takesPerWindow: 1,
        quotaWindowMs: 600_000,
        users: [{ id: 'u', apiKey: KEY, plan: 'coding' }],
        logLevel: 'silent',
      },
    });
    client = new GatewayClient({ baseUrl: gateway.url, apiKey: () => KEY, clock });
    snapshot.dispose();
    snapshot = new AvailabilitySnapshot(client, clock, timers);
    await client.take('t1');
    const s = await snapshot.refresh();
    assert.equal(client.serverClock.skewMs, 2 * 3_600_000);
    assert.equal(s.status === 'disabled' && s.nextTakeAt, clock.now() + 600_000, 'on the local clock');
    assert.equal(timers.nextDueAt(), clock.now() + 600_000);
  });

  it('3103 on take disables until its next_take_at', () => {
    snapshot.noteLimitReached(clock.now() + 5_000);
    assert.equal(snapshot.state.status, 'disabled');
    assert.equal(timers.nextDueAt(), clock.now() + 5_000);
  });
});

describe('service: errors for the user', () => {
  it('maps each gateway failure to an actionable code', () => {
    const cases: [ConstructorParameters<typeof GatewayError>[0], string][] = [
      ['no_api_key', 'no_api_key'],
      ['not_eligible', 'not_eligible'],
      ['limit_reached', 'limit_reached'],
      ['unauthorized', 'gateway_rejected'],
      ['server_error', 'gateway_unavailable'],
      ['network', 'gateway_unavailable'],
      ['timeout', 'gateway_unavailable'],
      ['bad_response', 'gateway_unavailable'],
    ];
    for (const [kind, code] of cases) {
      const e = serviceErrorFromGateway('create the task', new GatewayError(kind, 'take', undefined, { nextTakeAt: 42 }));
      assert.ok(e instanceof ServiceError);
      assert.equal(e.code, code);
      assert.match(e.message, /^Cannot create the task/);
    }
  });
});
