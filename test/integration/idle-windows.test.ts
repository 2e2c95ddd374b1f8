/**
 * Zero cost while idle, with real window processes: 3 windows (each its own process running the
 * HostEngine and the panel controller) on one globalStorage with 1,000 finished tasks and nothing
 * live, for 2 minutes. Then the lease holder is SIGKILLed and the lease must move.
 */
import assert from 'node:assert/strict';
import { DEFAULT_LEASE_TICK_MS, DEFAULT_LEASE_TTL_MS } from '../../src/service/leadership';
import { runIdleWindows } from './idle-windows';

describe('idle windows (real processes)', function () {
  this.timeout(300_000);

  it('3 windows, 1,000 finished tasks, 2 minutes: 0 DB writes, 0 reloads, 0 panel snapshots; after SIGKILL of the holder the lease moves within its ttl', async () => {
    const run = await runIdleWindows({ windows: 3, tasks: 1000, seconds: 120, killHolder: true });
    const ctx = JSON.stringify(run.reports);
    assert.equal(run.reports.filter((r) => r.isLeader).length, 1, `exactly one leader: ${ctx}`);
    assert.ok(run.dbFileUnchanged, 'the DB file was not rewritten');
    assert.deepEqual(
      run.reports.map((r) => r.persists),
      [0, 0, 0],
      `no DB writes: ${ctx}`,
    );
    assert.deepEqual(
      run.reports.map((r) => r.reloads),
      [0, 0, 0],
      `no reloads: ${ctx}`,
    );
    assert.deepEqual(
      run.reports.map((r) => r.panelSnapshots),
      [0, 0, 0],
      `no panel snapshots pushed: ${ctx}`,
    );
    assert.deepEqual(
      run.reports.map((r) => r.leaseWrites),
      [0, 0, 0],
      `no lease file was rewritten: ${ctx}`,
    );
    assert.deepEqual(
      run.reports.filter((r) => !r.isLeader).map((r) => r.leaseRenewals),
      [0, 0],
      'followers only read the lease',
    );

    const h = run.handover!;
    assert.notEqual(h.newHolder, h.killed, 'another window holds the lease');
    assert.ok(h.acquiredAt < h.oldExpiresAt, "taken over before the ttl ran out: the holder's process was gone");
    // A follower sees the dead process at its next tick; 2 s of slack covers timer delay on a
    // loaded machine, not a protocol step.
    assert.ok(
      h.acquiredAt - h.killedAt <= DEFAULT_LEASE_TICK_MS + 2_000,
      `handover ${h.acquiredAt - h.killedAt} ms after the kill (ttl ${DEFAULT_LEASE_TTL_MS} ms)`,
    );
  });
});
