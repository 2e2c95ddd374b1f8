// Questions of other windows as one window's panel sees them (docs/flows.md#questions-in-every-window),
// on a real sql.js file; this window has no agent asking (a real AskBroker with nothing open).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AskBroker } from '../../src/agent/questions/asks';
import { askInputDigest } from '../../src/core/ask-input';
import { ManualClock } from '../../src/core/clock';
import { SharedAsks } from '../../src/engine/shared-asks';
import { TaskStore } from '../../src/store';

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), 'timed out');
}

describe('shared asks: questions of other windows', () => {
  let dir: string;
  let store: TaskStore;
  let asks: SharedAsks;
  const question = (id: string) => ({
    id,
    taskId: 't1',
    tool: 'run_command',
    summary: `run ${id}`,
    input: `command: ${id}`,
    askedAt: 1,
    deadlineAt: 600_001,
  });

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'offpeak-shared-asks-'));
    store = await TaskStore.open({ directory: dir, clock: new ManualClock(1_000), watch: false, durable: false });
    await store.mutate((tx) => {
      tx.tasks.insert({ id: 't1', title: '', prompt: 'p', permissionMode: 'default', workspacePath: '/w' });
      tx.windows.register({ windowId: 'live', workspaceKeys: [], pid: process.pid, host: os.hostname() });
      tx.windows.register({ windowId: 'crashed', workspaceKeys: [], pid: 999_999, host: os.hostname() });
      tx.asks.publish('live', [question('from-live')]);
      tx.asks.publish('crashed', [question('from-crashed')]);
    });
    const broker = new AskBroker({ clock: new ManualClock(1_000), timeoutMs: () => 600_000 });
    const runtime = {
      pendingAsks: (taskId?: string) => broker.pending(taskId),
      answerAsk: (taskId: string, askId: string, decision: 'allow' | 'deny', inputDigest: string) =>
        broker.answer(taskId, askId, decision, inputDigest),
      onAsksChange: (listener: () => void) => broker.onEvent(() => listener()),
    };
    asks = new SharedAsks({ store, windowId: 'here', runtime });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lists a live window's question and not one left by a window whose process is gone", () => {
    assert.deepEqual(
      asks.pending().map((a) => a.id),
      ['from-live'],
    );
  });

  it("an answer to a gone window's question is refused as unknown; a live window's is left for it", async () => {
    assert.equal(await asks.answer('t1', 'from-crashed', 'allow', askInputDigest('command: from-crashed')), 'unknown');
    assert.equal(await asks.answer('t1', 'from-live', 'allow', askInputDigest('command: from-live')), 'accepted');
    assert.equal(store.read((tx) => tx.asks.list('live'))[0].answer, 'allow');
  });

  it('item 5: an answer given in this window for another input than the question shows is refused, and nothing is left for the asking window', async () => {
    assert.equal(await asks.answer('t1', 'from-live', 'allow', askInputDigest('command: something else')), 'input-mismatch');
    assert.deepEqual(
      store.read((tx) => tx.asks.list('live').map((a) => [a.answer, a.answerDigest])),
      [[null, null]],
    );
    const shown = asks.pending().find((a) => a.id === 'from-live')!;
    assert.equal(shown.input, 'command: from-live', 'the panel shows the whole input published by the asking window');
    assert.equal(await asks.answer('t1', 'from-live', 'deny', shown.inputDigest), 'accepted');
  });

  it('item 5: the asking window refuses an answer left for another input (checked against its own record, not the row); the question stays open', async () => {
    const broker = new AskBroker({ clock: new ManualClock(1_000), timeoutMs: () => 600_000 });
    const delivered: string[] = [];
    const logged: string[] = [];
    const asking = new SharedAsks({
      store,
      windowId: 'live',
      log: (line) => logged.push(line),
      runtime: {
        pendingAsks: (taskId?: string) => broker.pending(taskId),
        answerAsk: (taskId, askId, decision, inputDigest) => broker.answer(taskId, askId, decision, inputDigest),
        onAsksChange: (listener) => broker.onEvent(() => listener()),
      },
    });
    const ask = broker.ask('t1', { tool: 'Bash', summary: 'echo', input: 'command: echo hi && touch pwned' }, (d) => delivered.push(d));
    asking.start();
    await until(() => store.read((tx) => tx.asks.list('live').some((a) => a.id === ask.id)));
    // Another window (its own store on the same file) left an answer for another text than this window's question.
    const other = await TaskStore.open({ directory: dir, clock: new ManualClock(2_000), watch: false, durable: false });
    await other.mutate((tx) => {
      tx.asks.leaveAnswer(ask.id, 'allow', askInputDigest('command: echo hi'));
    });
    await other.close();
    store.checkForExternalChange();
    await until(() => logged.some((l) => l.includes('an answer from another window')));
    assert.deepEqual(
      logged.filter((l) => l.includes('an answer from another window')),
      ['asks: an answer from another window for t1: input-mismatch'],
    );
    assert.deepEqual(delivered, [], 'nothing was allowed');
    assert.equal(broker.pending('t1').length, 1, 'the question is still open');
    await asking.stop();
  });
});
