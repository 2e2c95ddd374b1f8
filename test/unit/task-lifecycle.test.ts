/**
 * The task lifecycle (src/service/task-lifecycle.ts), the one writer the runtime and the user
 * actions share: each change is written first, then its follow-up work is handed to listeners.
 * A real sql.js store file; the listeners stand in for the window's task service.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { TaskLifecycle, type LifecycleWork } from '../../src/service/task-lifecycle';
import { TaskStore } from '../../src/store';

describe('task lifecycle (one writer for the runtime and the user actions)', () => {
  let dir: string;
  let store: TaskStore;
  let lifecycle: TaskLifecycle;
  let logged: string[];
  let work: LifecycleWork[];
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-lifecycle-'));
    store = await TaskStore.open({ directory: dir, clock: new ManualClock(1_000_000), watch: false, durable: false });
    logged = [];
    work = [];
    lifecycle = new TaskLifecycle(store, (line) => logged.push(line));
    await store.mutate((tx) => {
      tx.tickets.insert({ ticketId: 'K1', taskId: 'T', serverState: 'ready' });
      tx.tasks.insert({
        id: 'T',
        title: 't',
        prompt: 'p',
        permissionMode: 'default',
        workspacePath: '/ws',
        serverTicketId: 'K1',
        schedulable: true,
      });
      tx.tasks.claim('T');
    });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a completed run is written, then its tickets are handed on to be settled', async () => {
    const statusSeen: string[] = [];
    lifecycle.onDidQueueWork((w) => {
      work.push(w);
      statusSeen.push(store.read((tx) => tx.tasks.get('T'))!.status);
    });
    assert.equal(await lifecycle.markStarted('T', 'K1', 'S1'), true);
    assert.equal(await lifecycle.complete('T'), true);
    assert.deepEqual(work, [{ kind: 'settle', ticketIds: ['K1'] }]);
    assert.deepEqual(statusSeen, ['completed'], 'written before the listener runs');
  });

  it('a change that leaves nothing to settle hands on no work', async () => {
    lifecycle.onDidQueueWork((w) => void work.push(w));
    assert.equal(await lifecycle.complete('T'), false, 'a queued task cannot complete');
    assert.deepEqual(work, []);
  });

  it('cancel writes the terminal state, stops the agent, then hands the tickets on', async () => {
    const order: string[] = [];
    lifecycle.onDidQueueWork((w) => void order.push(w.kind));
    const result = await lifecycle.cancel('T', async () => {
      order.push(`stop:${store.read((tx) => tx.tasks.get('T'))!.status}`);
    });
    assert.equal(result.kind, 'cancelled');
    assert.deepEqual(order, ['stop:cancelled', 'settle']);
  });

  it('an expired segment requeues the task and resolves to whether the retake work attached a ticket', async () => {
    await lifecycle.markStarted('T', 'K1', 'S1');
    lifecycle.onDidQueueWork((w) => (w.kind === 'retake' ? Promise.resolve(true) : undefined));
    assert.equal(await lifecycle.expireSegment('T', 'K1'), true);
    assert.deepEqual(
      [store.read((tx) => tx.tasks.get('T'))!.status, store.read((tx) => tx.tasks.get('T'))!.serverTicketId],
      ['queued', null],
    );
  });

  it('an expired segment with no retake done (no listener, or it failed) resolves to false', async () => {
    await lifecycle.markStarted('T', 'K1', 'S1');
    assert.equal(await lifecycle.expireSegment('T', 'K1'), false);
    lifecycle.onDidQueueWork((w) => (w.kind === 'retake' ? Promise.reject(new Error('gateway down')) : undefined));
    await store.mutate((tx) => {
      tx.tickets.insert({ ticketId: 'K2', taskId: 'T', serverState: 'ready' });
      tx.tasks.setTicket('T', 'K2', { schedulable: true });
      tx.tasks.claim('T');
    });
    await lifecycle.markStarted('T', 'K2', 'S1');
    assert.equal(await lifecycle.expireSegment('T', 'K2'), false);
  });

  it('a listener that throws is logged; the change stays written and the other listeners still run', async () => {
    lifecycle.onDidQueueWork(() => {
      throw new Error('boom');
    });
    lifecycle.onDidQueueWork((w) => void work.push(w));
    await lifecycle.markStarted('T', 'K1', 'S1');
    assert.equal(await lifecycle.fail('T', { failureReason: 'exit 1' }), true);
    assert.equal(store.read((tx) => tx.tasks.get('T'))!.status, 'failed');
    assert.deepEqual(work, [{ kind: 'settle', ticketIds: ['K1'] }]);
    assert.match(logged.join('\n'), /a lifecycle listener failed: boom/);
  });

  it('an unsubscribed listener gets no more work', async () => {
    const subscription = lifecycle.onDidQueueWork((w) => void work.push(w));
    subscription.dispose();
    await lifecycle.markStarted('T', 'K1', 'S1');
    await lifecycle.complete('T');
    assert.deepEqual(work, []);
  });
});
