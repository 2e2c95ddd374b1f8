// "After <task>" chains (docs/flows.md#schedules-and-chains): a waiting task takes its ticket only
// once the task it follows completed, and is skipped with the reason when that one fails. Three
// windows (three TaskServices, each with its own store on ONE sql.js DB file) against the REAL
// reference gateway on loopback; the runtime's part (start, complete, fail) is written as the
// runtime writes it, through the lifecycle.
import assert from 'node:assert/strict';
import { ServiceError } from '../../src/service';
import { World, taskInput, startRunning, type Window } from './service-harness';

describe('service: "after <task>" chains (docs/flows.md#schedules-and-chains)', function () {
  this.timeout(60_000);
  let world: World;
  afterEach(async () => {
    await world?.close();
  });

  /** Runs a task that has its ticket to its end, as a window's runtime would. */
  async function finish(w: Window, taskId: string, outcome: 'complete' | 'fail'): Promise<void> {
    await world.promote();
    await world.advance(15_000);
    await startRunning(w, taskId);
    assert.ok(await w.service.lifecycle[outcome](taskId, outcome === 'fail' ? { failureReason: 'tests failed' } : {}));
    await world.advance(31_000); // the lease tick sees the change
  }

  it('A → B → C: each takes its ticket only after the one before completed', async () => {
    world = await World.start();
    const holder = await world.openWindow('holder');
    const w2 = await world.openWindow('w2');
    const w3 = await world.openWindow('w3');
    const a = await w2.service.create(taskInput({ title: 'A' }));
    const b = await w3.service.create(taskInput({ title: 'B', afterTaskId: a.id, continueInBranch: true }));
    const c = await w2.service.create(taskInput({ title: 'C', afterTaskId: b.id, continueInBranch: true }));
    assert.equal(b.afterTitle, 'A');
    await world.advance(60_000);
    assert.equal(world.takeRequests(), 1, 'only A took a ticket');
    assert.equal(holder.service.getTask(b.id)?.serverTicketId, null);

    await finish(w2, a.id, 'complete');
    assert.ok(holder.service.getTask(b.id)?.serverTicketId, 'B took its ticket once A completed');
    assert.equal(holder.service.getTask(c.id)?.serverTicketId, null, 'C still waits for B');
    assert.equal(world.takeRequests(), 2);

    await finish(w3, b.id, 'complete');
    assert.ok(holder.service.getTask(c.id)?.serverTicketId, 'C took its ticket once B completed');
    assert.equal(world.takeRequests(), 3);
  });

  it('A fails → B and C are skipped with the reason, and take no ticket', async () => {
    world = await World.start();
    const holder = await world.openWindow('holder');
    const w2 = await world.openWindow('w2');
    const a = await w2.service.create(taskInput({ title: 'A' }));
    const b = await w2.service.create(taskInput({ title: 'B', afterTaskId: a.id }));
    const c = await holder.service.create(taskInput({ title: 'C', afterTaskId: b.id }));

    await finish(w2, a.id, 'fail');
    await world.advance(1_000);
    for (const id of [b.id, c.id]) {
      const t = holder.service.getTask(id)!;
      assert.equal(t.status, 'cancelled', t.title);
      assert.equal(t.failureReason, 'Skipped: A failed.', t.title);
      assert.equal(t.serverTicketId, null);
    }
    assert.equal(world.takeRequests(), 1, 'only A ever took a ticket');
  });

  it("with a check: B waits while A's check runs and is skipped when it fails (docs/flows.md#checks)", async () => {
    world = await World.start();
    const holder = await world.openWindow('holder');
    const a = await holder.service.create(taskInput({ title: 'A', checkCommand: 'npm test' }));
    const b = await holder.service.create(taskInput({ title: 'B', afterTaskId: a.id }));
    await holder.store.mutate((tx) => tx.checks.record(a.id, { state: 'checking', round: 1 }));
    await finish(holder, a.id, 'complete');
    assert.equal(holder.service.getTask(b.id)?.status, 'queued', 'A completed but its check has not passed: B waits');
    assert.equal(world.takeRequests(), 1);
    await holder.store.mutate((tx) => tx.checks.record(a.id, { state: 'failed', round: 2 }));
    await world.advance(31_000);
    const skipped = holder.service.getTask(b.id)!;
    assert.equal(skipped.status, 'cancelled');
    assert.equal(skipped.failureReason, "Skipped: A's check failed.");
  });

  it('refuses to wait for a task that failed, or one that does not exist', async () => {
    world = await World.start();
    const w = await world.openWindow();
    const a = await w.service.create(taskInput({ title: 'A' }));
    await finish(w, a.id, 'fail');
    await assert.rejects(
      w.service.create(taskInput({ afterTaskId: a.id })),
      (e) => e instanceof ServiceError && /Cannot wait for "A": A failed/.test(e.message),
    );
    await assert.rejects(
      w.service.create(taskInput({ afterTaskId: 'no-such-task' })),
      (e) => e instanceof ServiceError && e.code === 'not_found',
    );
  });
});
