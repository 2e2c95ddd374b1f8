/** Task outcomes (v4): the notification claimed by exactly one window, the unseen mark shared by all. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { TaskStore, type StoreChange, type StoreTx } from '../../src/store';

function finish(tx: StoreTx, id: string, outcome: 'completed' | 'failed' | 'cancelled'): void {
  tx.tasks.insert({
    id,
    title: `t-${id}`,
    prompt: `do ${id}`,
    permissionMode: 'default',
    workspacePath: '/w',
    serverTicketId: `tk-${id}`,
    schedulable: true,
  });
  if (outcome === 'cancelled') {
    tx.tasks.cancel(id);
    return;
  }
  tx.tasks.claim(id, {});
  tx.tasks.markRunning(id, { sessionId: `s-${id}` });
  if (outcome === 'completed') tx.tasks.complete(id, { filesChanged: 1 });
  else tx.tasks.fail(id, { failureReason: 'boom' });
}

describe('store: task outcomes (notification claim, unseen mark)', () => {
  let dir: string;
  let clock: ManualClock;
  const stores: TaskStore[] = [];
  const open = async () => {
    const s = await TaskStore.open({ directory: dir, clock, watch: false, durable: false });
    stores.push(s);
    return s;
  };
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-outcomes-'));
    clock = new ManualClock(1_000_000);
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists completed and failed tasks as unnotified and unseen; queued, running and cancelled ones are not', async () => {
    const store = await open();
    await store.mutate((tx) => {
      finish(tx, 'done', 'completed');
      finish(tx, 'bad', 'failed');
      finish(tx, 'stop', 'cancelled');
      tx.tasks.insert({ id: 'wait', title: '', prompt: 'p', permissionMode: 'default', workspacePath: '/w' });
    });
    const unnotified = store.read((tx) => tx.outcomes.unnotified());
    assert.deepEqual(unnotified.map((o) => [o.taskId, o.outcome, o.failureReason]).sort(), [
      ['bad', 'failed', 'boom'],
      ['done', 'completed', null],
    ]);
    assert.deepEqual(store.read((tx) => tx.outcomes.unseen()).sort(), ['bad', 'done']);
  });

  it('a notification is claimed by exactly one of two windows (two store instances on one file)', async () => {
    const a = await open();
    const b = await open();
    await a.mutate((tx) => finish(tx, 'done', 'completed'));
    const [fromA, fromB] = await Promise.all([
      a.mutate((tx) => tx.outcomes.claimNotice('done', 'window-a')),
      b.mutate((tx) => tx.outcomes.claimNotice('done', 'window-b')),
    ]);
    assert.equal(Number(fromA) + Number(fromB), 1, 'one claim wins');
    const winner = fromA ? 'window-a' : 'window-b';
    assert.equal(
      b.read((tx) => tx.outcomes.notifiedBy('done')),
      winner,
    );
    assert.equal(
      await a.mutate((tx) => tx.outcomes.claimNotice('done', 'window-a')),
      false,
      'a second claim, even by the winner, is refused',
    );
    assert.deepEqual(
      a.read((tx) => tx.outcomes.unnotified()),
      [],
    );
  });

  it('refuses to claim the notification of a task that is not finished or does not exist', async () => {
    const store = await open();
    await store.mutate((tx) => {
      tx.tasks.insert({ id: 'wait', title: '', prompt: 'p', permissionMode: 'default', workspacePath: '/w' });
      finish(tx, 'stop', 'cancelled');
    });
    assert.deepEqual(
      await store.mutate((tx) => [
        tx.outcomes.claimNotice('wait', 'w'),
        tx.outcomes.claimNotice('stop', 'w'),
        tx.outcomes.claimNotice('nope', 'w'),
      ]),
      [false, false, false],
    );
  });

  it('markSeen clears the unseen mark for every window and fires an outcomes change; claiming the notice later keeps it seen', async () => {
    const a = await open();
    const b = await open();
    await a.mutate((tx) => {
      finish(tx, 'one', 'completed');
      finish(tx, 'two', 'failed');
    });
    const changes: StoreChange[] = [];
    b.onDidChange((c) => changes.push(c));
    assert.equal(await a.mutate((tx) => tx.outcomes.markSeen(['one', 'ghost'])), 1, 'only the finished task counts');
    assert.ok(b.checkForExternalChange());
    assert.deepEqual(
      b.read((tx) => tx.outcomes.unseen()),
      ['two'],
    );
    await new Promise((resolve) => setImmediate(resolve)); // change events are delivered asynchronously
    assert.ok(
      changes.some((c) => c.topics.has('outcomes')),
      'the other window hears an outcomes change',
    );
    assert.equal(await a.mutate((tx) => tx.outcomes.markSeen(['one'])), 0, 'seen once stays seen (nothing written)');
    assert.equal(await b.mutate((tx) => tx.outcomes.claimNotice('one', 'window-b')), true, 'seen but not yet notified: still claimable');
    assert.deepEqual(
      b.read((tx) => tx.outcomes.unseen()),
      ['two'],
    );
  });

  it("a deleted task's outcome row goes with it", async () => {
    const store = await open();
    await store.mutate((tx) => {
      finish(tx, 'done', 'completed');
      tx.outcomes.claimNotice('done', 'w');
      tx.outcomes.markSeen(['done']);
    });
    await store.mutate((tx) => tx.tasks.delete('done'));
    // The same id used again (tests, or a retried create) starts with no marks.
    await store.mutate((tx) => finish(tx, 'done', 'completed'));
    assert.deepEqual(
      store.read((tx) => [tx.outcomes.notifiedBy('done'), tx.outcomes.unseen()]),
      [null, ['done']],
    );
  });
});
