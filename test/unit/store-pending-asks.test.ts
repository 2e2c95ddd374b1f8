/** Pending permission questions shared by windows (v4): published by the asking window, answered from any. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { TaskStore } from '../../src/store';

const ask = (id: string, taskId = 't1', askedAt = 10) => ({
  id,
  taskId,
  tool: 'run_command',
  summary: `run_command: ${id}`,
  input: `command: ${id}`,
  askedAt,
  deadlineAt: askedAt + 600_000,
});

describe('store: pending asks shared by windows', () => {
  let dir: string;
  let store: TaskStore;
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-asks-'));
    store = await TaskStore.open({ directory: dir, clock: new ManualClock(1_000), watch: false, durable: false });
    await store.mutate((tx) => {
      tx.tasks.insert({ id: 't1', title: '', prompt: 'p', permissionMode: 'default', workspacePath: '/w' });
      tx.tasks.insert({ id: 't2', title: '', prompt: 'p', permissionMode: 'default', workspacePath: '/w' });
    });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("publish makes the DB hold exactly a window's open questions, leaving other windows' alone", async () => {
    await store.mutate((tx) => {
      tx.asks.publish('w-a', [ask('a1'), ask('a2', 't1', 20)]);
      tx.asks.publish('w-b', [ask('b1', 't2', 5)]);
    });
    assert.deepEqual(
      store.read((tx) => tx.asks.list().map((a) => [a.id, a.windowId])),
      [
        ['b1', 'w-b'],
        ['a1', 'w-a'],
        ['a2', 'w-a'],
      ],
    );
    assert.equal(await store.mutate((tx) => tx.asks.publish('w-a', [ask('a2', 't1', 20)])), true, 'a1 was answered: it goes');
    assert.equal(await store.mutate((tx) => tx.asks.publish('w-a', [ask('a2', 't1', 20)])), false, 'nothing changed: nothing written');
    assert.deepEqual(
      store.read((tx) => tx.asks.list('w-a').map((a) => a.id)),
      ['a2'],
    );
    await store.mutate((tx) => tx.asks.publish('w-a', []));
    assert.deepEqual(
      store.read((tx) => tx.asks.list().map((a) => a.id)),
      ['b1'],
    );
  });

  it('the first answer left is kept; a second one, or one for a question that is gone, is refused', async () => {
    await store.mutate((tx) => tx.asks.publish('w-b', [ask('b1')]));
    const d = 'a'.repeat(64);
    assert.deepEqual(
      await store.mutate((tx) => [
        tx.asks.leaveAnswer('b1', 'allow', d),
        tx.asks.leaveAnswer('b1', 'deny', d),
        tx.asks.leaveAnswer('nope', 'deny', d),
      ]),
      [true, false, false],
    );
    assert.deepEqual(
      store.read((tx) => [tx.asks.list()[0].answer, tx.asks.list()[0].answerDigest, tx.asks.list()[0].input]),
      ['allow', d, 'command: b1'],
    );
  });

  it("a dead window's questions go, but an answer left for a task it left running stays until recovery takes it (docs/flows.md#a-question-across-a-reload)", async () => {
    const d = 'a'.repeat(64);
    await store.mutate((tx) => {
      tx.tasks.insert({
        id: 't3',
        title: '',
        prompt: 'p',
        permissionMode: 'default',
        workspacePath: '/w',
        serverTicketId: 'K3',
        schedulable: true,
      });
      tx.tasks.claim('t3');
      tx.tasks.markRunning('t3', { sessionId: 's3' });
      tx.asks.publish('w-dead', [ask('answered', 't3'), ask('open', 't3', 20), ask('other-task', 't2', 30)]);
      tx.asks.leaveAnswer('answered', 'allow', d);
      tx.asks.leaveAnswer('other-task', 'deny', d);
    });
    assert.deepEqual(
      store.read((tx) => [tx.tasks.get('t3')?.status, tx.tasks.get('t2')?.status]),
      ['running', 'queued'],
    );
    await store.mutate((tx) => tx.asks.withdrawDeadWindow('w-dead'));
    assert.deepEqual(
      store.read((tx) => tx.asks.list().map((a) => a.id)),
      ['answered'],
      'only the answer for the running task stays',
    );
    const taken = await store.mutate((tx) => tx.asks.takeAnswersLeft('t3'));
    assert.deepEqual(
      taken.map((a) => [a.id, a.answer, a.answerDigest]),
      [['answered', 'allow', d]],
    );
    assert.deepEqual(
      store.read((tx) => tx.asks.list()),
      [],
      'taken: the rows are gone',
    );
  });

  it("a deleted task's questions go with it", async () => {
    await store.mutate((tx) => {
      tx.asks.publish('w-b', [ask('b1', 't1'), ask('b2', 't2')]);
      tx.tasks.cancel('t1');
      tx.tasks.delete('t1');
    });
    assert.deepEqual(
      store.read((tx) => tx.asks.list().map((a) => a.id)),
      ['b2'],
    );
  });
});
