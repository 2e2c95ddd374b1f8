/** The off_peak_tickets ledger / settle outbox and the store's lease primitives, on a real store file. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { ManualTimers } from '../../src/core/timers';
import { Leadership } from '../../src/service';
import { StoreError, TaskStore } from '../../src/store';
import { editDbFile } from '../fixtures/edit-db-file';

describe('store: ticket ledger and settle outbox', () => {
  let dir: string;
  let clock: ManualClock;
  let store: TaskStore;
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-store-ledger-'));
    clock = new ManualClock(1_000_000);
    store = await TaskStore.open({ directory: dir, clock, watch: false });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("numbers a task's tickets 1, 2, 3 in take order; a retried take returns the same row", async () => {
    const a = await store.mutate((tx) => tx.tickets.insert({ ticketId: 'A', taskId: 't', serverState: 'queued', queuePosition: 4 }));
    clock.advance(10);
    const b = await store.mutate((tx) => tx.tickets.insert({ ticketId: 'B', taskId: 't', serverState: 'ready' }));
    const again = await store.mutate((tx) => tx.tickets.insert({ ticketId: 'A', taskId: 't', serverState: 'ready' }));
    assert.deepEqual([a.inserted, a.ticket.ordinal, a.ticket.queuePosition, a.ticket.takenAt], [true, 1, 4, 1_000_000]);
    assert.deepEqual([b.ticket.ordinal, b.ticket.readyAt], [2, 1_000_010]);
    assert.deepEqual([again.inserted, again.ticket.serverState], [false, 'queued']);
    await assert.rejects(
      store.mutate((tx) => tx.tickets.insert({ ticketId: 'A', taskId: 'other', serverState: 'queued' })),
      /belongs to task t/,
    );
    await assert.rejects(
      store.mutate((tx) => tx.tickets.insert({ ticketId: 'C', taskId: 't', serverState: 'lost' as never })),
      (e: unknown) => e instanceof StoreError && e.code === 'INVALID_INPUT',
    );
    assert.deepEqual(
      store.read((tx) => tx.tickets.forTask('t').map((x) => x.ticketId)),
      ['A', 'B'],
    );
  });

  it('status updates keep first-seen times and never touch a settled ticket', async () => {
    await store.mutate((tx) => tx.tickets.insert({ ticketId: 'A', taskId: 't', serverState: 'queued' }));
    clock.set(2000);
    assert.equal(
      await store.mutate((tx) => tx.tickets.updateServerState('A', { serverState: 'ready', readyDeadline: 9000, queuePosition: null })),
      true,
    );
    clock.set(3000);
    assert.equal(await store.mutate((tx) => tx.tickets.updateServerState('A', { serverState: 'ready' })), true);
    clock.set(4000);
    await store.mutate((tx) => tx.tickets.startSegment('A'));
    clock.set(5000);
    assert.equal(await store.mutate((tx) => tx.tickets.markAdmitted('A')), true);
    clock.set(6000);
    await store.mutate((tx) => tx.tickets.updateServerState('A', { serverState: 'active', expiresAt: 6000 + 3 * 3600_000 }));
    let t = store.read((tx) => tx.tickets.get('A'))!;
    assert.deepEqual(
      [t.serverState, t.readyAt, t.readyDeadline, t.segmentStartedAt, t.activeAt, t.expiresAt, t.lastStatusAt],
      ['active', 2000, 9000, 4000, 5000, 6000 + 3 * 3600_000, 6000],
    );
    clock.set(7000);
    assert.equal(await store.mutate((tx) => tx.tickets.endSegment('A', 'expired', '3102')), true);
    assert.equal(await store.mutate((tx) => tx.tickets.endSegment('A', 'failed')), false, 'a segment ends once');
    assert.equal(await store.mutate((tx) => tx.tickets.markSettled('A')), true);
    assert.equal(await store.mutate((tx) => tx.tickets.updateServerState('A', { serverState: 'active' })), false);
    t = store.read((tx) => tx.tickets.get('A'))!;
    assert.deepEqual(
      [t.serverState, t.endReason, t.segmentEndedAt, t.lastError, t.settleState, t.settledAt],
      ['settled', 'expired', 7000, '3102', 'settled', 7000],
    );
  });

  it('settle outbox: pending until acknowledged, retried at the next time, abandon is explicit', async () => {
    await store.mutate((tx) => {
      for (const id of ['A', 'B', 'C', 'D']) tx.tickets.insert({ ticketId: id, taskId: `task-${id}`, serverState: 'active' });
    });
    assert.deepEqual(
      store.read((tx) => tx.tickets.live().map((t) => t.ticketId)),
      ['A', 'B', 'C', 'D'],
    );
    assert.deepEqual(await store.mutate((tx) => ['A', 'B', 'C'].map((id) => tx.tickets.requestSettle(id, 'completed'))), [
      true,
      true,
      true,
    ]);
    assert.equal(await store.mutate((tx) => tx.tickets.requestSettle('A', 'again')), false);
    assert.deepEqual(
      store.read((tx) => tx.tickets.pendingSettles().map((t) => t.ticketId)),
      ['A', 'B', 'C'],
    );
    assert.deepEqual(
      store.read((tx) => tx.tickets.live().map((t) => t.ticketId)),
      ['D'],
    );
    await store.mutate((tx) => tx.tickets.recordSettleFailure('B', 'HTTP 503', clock.now() + 60_000));
    await store.mutate((tx) => tx.tickets.markSettled('A'));
    await store.mutate((tx) => tx.tickets.abandonSettle('C', 'gateway does not know it'));
    assert.deepEqual(
      store.read((tx) => tx.tickets.pendingSettles().map((t) => t.ticketId)),
      [],
      'B is not due yet',
    );
    clock.advance(60_000);
    const due = store.read((tx) => tx.tickets.pendingSettles());
    assert.deepEqual(
      due.map((t) => [t.ticketId, t.settleAttempts, t.lastError]),
      [['B', 1, 'HTTP 503']],
    );
    assert.equal(await store.mutate((tx) => tx.tickets.markSettled('C')), false, 'abandoned stays abandoned');
    assert.deepEqual(
      store.read((tx) => tx.tickets.list({ settleState: ['settled', 'abandoned'] }).map((t) => [t.ticketId, t.settleState])),
      [
        ['A', 'settled'],
        ['C', 'abandoned'],
      ],
    );
  });

  it('a file from before v13 loses the settled and abandoned tickets of its deleted tasks when opened; a pending one, and any of a task that exists, stay', async () => {
    await store.mutate((tx) => {
      tx.tasks.insert({ id: 'kept', title: 't', prompt: 'p', permissionMode: 'default', workspacePath: '/ws' });
      for (const [ticketId, taskId] of [
        ['S', 'gone'],
        ['A', 'gone'],
        ['P', 'gone'],
        ['K', 'kept'],
      ])
        tx.tickets.insert({ ticketId, taskId, serverState: 'queued' });
      for (const id of ['S', 'P', 'K']) tx.tickets.requestSettle(id, 'deleted');
      tx.tickets.markSettled('S');
      tx.tickets.markSettled('K');
      tx.tickets.abandonSettle('A', 'not_found');
    });
    const file = store.filePath;
    await store.close();
    await editDbFile(file, (db) => db.exec('PRAGMA user_version = 12'));
    store = await TaskStore.open({ directory: dir, clock, watch: false });
    assert.equal(store.migration?.fromVersion, 12);
    assert.deepEqual(
      store.read((tx) => tx.tickets.list().map((t) => [t.ticketId, t.settleState])),
      [
        ['P', 'pending'],
        ['K', 'settled'],
      ],
    );
  });

  it('100 ticket snapshot changes are one transaction and one persist', async () => {
    await store.mutate((tx) => {
      for (let i = 0; i < 100; i++) {
        tx.tasks.insert({ id: `t${i}`, title: '', prompt: 'p', permissionMode: 'default', workspacePath: '/w', serverTicketId: `tk${i}` });
        tx.tickets.insert({ ticketId: `tk${i}`, taskId: `t${i}`, serverState: 'queued', queuePosition: i + 1 });
      }
    });
    const persists = store.stats.persists;
    const applied = await store.batch(
      Array.from(
        { length: 100 },
        (_, i) => (tx: Parameters<Parameters<TaskStore['mutate']>[0]>[0]) =>
          tx.tasks.applySnapshot(`t${i}`, `tk${i}`, { schedulable: true, queuePosition: null }) &&
          tx.tickets.updateServerState(`tk${i}`, { serverState: 'ready' }),
      ),
    );
    assert.equal(applied.filter(Boolean).length, 100);
    assert.equal(store.stats.persists, persists + 1);
    assert.equal(
      store.read((tx) => tx.tasks.list({ status: 'queued' }).filter((t) => t.schedulable).length),
      100,
    );
  });
});

describe('store: leader lease', () => {
  let dir: string;
  let clock: ManualClock;
  let a: TaskStore;
  let b: TaskStore;
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-store-lease-'));
    clock = new ManualClock(10_000);
    a = await TaskStore.open({ directory: dir, clock, watch: false });
    b = await TaskStore.open({ directory: dir, clock, watch: false });
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('one holder at a time; renew extends; expiry lets another take over; the old token is dead', async () => {
    const first = await a.acquireLease('leader', 'window-a', 5000);
    assert.ok(first.held && first.acquired);
    const tokenA = first.held ? first.lease.token : '';
    const refused = await b.acquireLease('leader', 'window-b', 5000);
    assert.ok(!refused.held && refused.current?.holder === 'window-a');
    clock.advance(4000);
    const renewed = await a.renewLease('leader', tokenA, 5000);
    assert.ok(renewed.held && renewed.lease.expiresAt === 19_000);
    clock.advance(4999);
    assert.equal((await b.acquireLease('leader', 'window-b', 5000)).held, false, 'not expired yet');
    clock.advance(1);
    const taken = await b.acquireLease('leader', 'window-b', 5000);
    assert.ok(taken.held && taken.acquired && taken.lease.acquiredAt === 19_000);
    assert.equal((await a.renewLease('leader', tokenA, 5000)).held, false, 'the expired holder cannot renew');
    assert.equal(await a.releaseLease('leader', tokenA), false, "nor release someone else's lease");
    assert.equal(a.readLease('leader')!.holder, 'window-b');
  });

  it('re-acquiring by the same holder extends without a new token; release frees it at once', async () => {
    const first = await a.acquireLease('leader', 'window-a', 5000);
    clock.advance(2000); // more than a third of the ttl: the holder's acquire renews
    const again = await a.acquireLease('leader', 'window-a', 5000);
    assert.ok(first.held && again.held && !again.acquired && again.lease.token === first.lease.token && again.lease.expiresAt === 17_000);
    assert.equal(await a.releaseLease('leader', again.held ? again.lease.token : ''), true);
    const b1 = await b.acquireLease('leader', 'window-b', 5000);
    assert.ok(b1.held && b1.acquired);
    await assert.rejects(a.acquireLease('leader', 'window-a', 0), /positive/);
  });

  it("Leadership (the service's keeper of this lease) elects one window; the other takes over when the leader stops renewing (at expiry) or stops (at once)", async () => {
    const timers = new ManualTimers(clock);
    const la = new Leadership(a, timers, 'A', { ttlMs: 3000, tickMs: 60_000, clock });
    const lb = new Leadership(b, timers, 'B', { ttlMs: 3000, tickMs: 60_000, clock });
    const changes: string[] = [];
    la.onDidChange((v) => changes.push(`A:${v}`));
    lb.onDidChange((v) => changes.push(`B:${v}`));
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
