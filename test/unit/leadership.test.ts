/** The window's leader lease (service/leadership.ts) between two stores on one real DB file. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { Leadership, ManualTimers } from '../../src/service';
import { TaskStore } from '../../src/store';

describe('service: Leadership', () => {
  let dir: string;
  let clock: ManualClock;
  let a: TaskStore;
  let b: TaskStore;
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-leadership-'));
    clock = new ManualClock(50_000);
    a = await TaskStore.open({ directory: dir, clock, watch: false });
    b = await TaskStore.open({ directory: dir, clock, watch: false });
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('elects one window; the other takes over when the leader stops renewing (at expiry) or stops (at once)', async () => {
    const timers = new ManualTimers(clock);
    const la = new Leadership(a, timers, 'A', { ttlMs: 3000, tickMs: 60_000, clock });
    const lb = new Leadership(b, timers, 'B', { ttlMs: 3000, tickMs: 60_000, clock });
    const changes: string[] = [];
    la.on('change', (v) => changes.push(`A:${v}`));
    lb.on('change', (v) => changes.push(`B:${v}`));
    await la.start();
    await lb.start();
    assert.deepEqual([la.isLeader, lb.isLeader], [true, false]);
    // A keeps renewing: B is refused past the first ttl
    clock.advance(2000);
    await la.tick();
    clock.advance(2000);
    await lb.tick();
    assert.deepEqual([la.isLeader, lb.isLeader], [true, false]);
    // A stops renewing (a frozen window): once its lease expires B takes it, and A learns at its next tick
    clock.advance(1001);
    await lb.tick();
    assert.equal(lb.isLeader, true);
    await la.tick();
    assert.equal(la.isLeader, false);
    // B stops cleanly: released at once, A takes over without waiting for expiry
    await lb.stop();
    assert.equal(a.readLease('leader'), undefined, 'released on stop');
    await la.tick();
    assert.deepEqual([la.isLeader, lb.isLeader], [true, false]);
    await la.stop();
    assert.deepEqual(changes, ['A:true', 'B:true', 'A:false', 'B:false', 'A:true', 'A:false']);
    assert.equal(a.readLease('leader'), undefined, 'released on stop');
  });
});
