// The runtime's permission asks: first answer wins, the deadline denies, the agent's own record is final.
import assert from 'node:assert/strict';
import { AskBroker, type AskDecision, type AskEvent, type AskAnsweredBy } from '../../src/agent/questions/asks';
import { ManualClock } from '../../src/core/clock';
import { ManualTimers } from '../../src/core/timers';

describe('permission asks (AskBroker)', () => {
  let clock: ManualClock;
  let timers: ManualTimers;
  let broker: AskBroker;
  let events: AskEvent[];
  let delivered: [AskDecision, AskAnsweredBy][];

  beforeEach(() => {
    clock = new ManualClock(1_000_000);
    timers = new ManualTimers(clock);
    broker = new AskBroker({ clock, timers, timeoutMs: () => 60_000 });
    events = [];
    delivered = [];
    broker.onEvent((e) => events.push(e));
  });

  const open = (taskId = 't1', summary = 'Bash: rm -rf build') =>
    broker.ask(taskId, { tool: 'Bash', summary, input: `command: ${summary}` }, (d, by) => delivered.push([d, by]));
  const answers = () => events.flatMap((e) => (e.type === 'answered' ? [[e.ask.id, e.decision, e.by]] : []));

  it('holds an ask per task with id, tool, summary, asked_at and deadline until answered', () => {
    const ask = open();
    open('t2');
    assert.deepEqual(broker.pending('t1'), [ask]);
    assert.equal(broker.pending().length, 2);
    assert.equal(ask.askedAt, 1_000_000);
    assert.equal(ask.deadlineAt, 1_060_000);
    assert.deepEqual(events[0], { type: 'asked', ask });
  });

  it('the first answer wins and is delivered once; a later one and a wrong task are ignored', () => {
    const ask = open();
    assert.equal(broker.answer('t2', ask.id, 'allow', ask.inputDigest), 'unknown', 'another task cannot answer it');
    assert.equal(broker.answer('t1', ask.id, 'allow', ask.inputDigest), 'accepted');
    assert.equal(broker.answer('t1', ask.id, 'deny', ask.inputDigest), 'already-answered');
    broker.settle(ask.id, 'allow', 'terminal'); // the agent confirms the same decision: nothing new
    assert.deepEqual(delivered, [['allow', 'host']]);
    assert.deepEqual(answers(), [[ask.id, 'allow', 'host']]);
    assert.deepEqual(broker.pending(), []);
    assert.equal(broker.answer('t1', 'no-such-ask', 'allow', ask.inputDigest), 'unknown');
  });

  it("an unanswered ask is denied at its deadline (the agent's own deadline when it gives one)", async () => {
    const ask = broker.ask('t1', { tool: 'write_file', summary: 'write a.txt', input: 'path: a.txt', deadlineAt: 1_005_000 }, (d, by) =>
      delivered.push([d, by]),
    );
    await timers.advanceTo(1_004_999);
    assert.equal(broker.pending().length, 1);
    await timers.advanceTo(1_005_000);
    assert.deepEqual(delivered, [['deny', 'timeout']]);
    assert.deepEqual(answers(), [[ask.id, 'deny', 'timeout']]);
    assert.equal(broker.answer('t1', ask.id, 'allow', ask.inputDigest), 'already-answered', 'too late');
  });

  it('an answer from the agent side closes the ask without delivering; a crossed answer is corrected to what the agent did', () => {
    const typed = open();
    broker.settle(typed.id, 'deny', 'terminal');
    assert.deepEqual(delivered, []);
    const crossed = open();
    assert.equal(broker.answer('t1', crossed.id, 'allow', crossed.inputDigest), 'accepted');
    broker.settle(crossed.id, 'deny', 'terminal'); // the typed "n" reached the agent first
    assert.deepEqual(answers(), [
      [typed.id, 'deny', 'terminal'],
      [crossed.id, 'allow', 'host'],
      [crossed.id, 'deny', 'terminal'],
    ]);
  });

  it("the end of a segment denies its task's open asks only; the summary is one plain bounded line", () => {
    const a = open('t1', 'Bash: echo [click](command:evil)\n\u001b[31mred\u202e' + 'x'.repeat(2_000));
    const b = open('t2');
    broker.endTask('t1');
    assert.deepEqual(delivered, [['deny', 'ended']]);
    assert.deepEqual(broker.pending(), [b]);
    // eslint-disable-next-line no-control-regex -- control characters are the point
    assert.doesNotMatch(a.summary, /[\n\u001b\u202e]|\]\(/);
    assert.ok(a.summary.length <= 500);
    assert.equal(timers.pending, 1, "the ended ask's deadline timer is gone");
  });
});
