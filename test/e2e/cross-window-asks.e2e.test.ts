// A permission question asked by an agent in one window shows in the other window and is answered
// from there. Two windows (two HostEngines on one globalStorage), the real gateway in demo mode
// whose DEMO model has the reference agent run `node --version` ("Ask before edits and commands"
// makes it ask), real agent processes. The agent runs in window B; the user answers in window A.
import assert from 'node:assert/strict';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';
import { askInputDigest } from '../../src/core/ask-input';
import { makeGitWorkspace } from './gateway-fixture';
import { waitFor } from './test-engine';
import { startDemoWorld, startWindow, type DemoWorld } from './two-windows';

type Answered = Extract<RuntimeEvent, { type: 'input-answered' }>;

describe('permission questions across windows (two host engines on one globalStorage)', function () {
  this.timeout(120_000);
  let world: DemoWorld;

  beforeEach(async () => (world = await startDemoWorld({ activeWindowMs: 120_000, demoStepMs: 200 })));
  afterEach(async () => world.close());

  for (const decision of ['allow', 'deny'] as const) {
    it(`a question asked in window B is listed in window A and ${decision === 'allow' ? 'Allow' : 'Deny'} there reaches the agent in B`, async () => {
      const a = await startWindow(world, 'window-a', []);
      const ws = makeGitWorkspace(world.root, `ws-${decision}`);
      const b = await startWindow(world, 'window-b', [ws]);
      await a.engine.service.availability.refresh();
      const task = await a.engine.service.create({
        title: decision,
        prompt: 'Check the node version.',
        permissionMode: 'default',
        workspacePath: ws,
      });

      const ask = await waitFor(() => a.engine.questions.pendingAsks(task.id)[0], 'the question to show in window A', 60_000);
      assert.match(ask.summary, /node --version/);
      assert.equal(a.engine.runtime.pendingAsks().length, 0, 'window A runs no agent: the question came through the DB');
      // Issue 17 item 5: window A lists the whole input, and an answer for another input is refused there.
      assert.match(ask.input, /node --version/);
      assert.equal(
        await a.engine.questions.answerAsk(task.id, ask.id, 'allow', askInputDigest('command: echo harmless')),
        'input-mismatch',
      );
      assert.equal(await a.engine.questions.answerAsk(task.id, ask.id, decision, ask.inputDigest), 'accepted');

      const answered = await waitFor(
        () => b.events.find((e): e is Answered => e.type === 'input-answered' && e.ask.id === ask.id),
        'window B to apply the answer',
        20_000,
      );
      assert.deepEqual([answered.decision, answered.by], [decision, 'other-window'], 'recorded as answered in another window');
      await waitFor(
        () => a.engine.questions.pendingAsks(task.id).every((q) => q.id !== ask.id) || undefined,
        'the question to leave window A',
        20_000,
      );
      assert.notEqual(
        await a.engine.questions.answerAsk(task.id, ask.id, decision === 'allow' ? 'deny' : 'allow', ask.inputDigest),
        'accepted',
        'a second answer changes nothing',
      );
      await a.engine.service.cancel(task.id);
    });
  }
});
