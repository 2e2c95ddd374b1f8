/**
 * A question open when its window closes (docs/flows.md#a-question-across-a-reload), in parts: the
 * ask broker holds it instead of answering "ended", the decision record keeps it (a real sql.js
 * file) through the lifecycle's interrupt and recovery transactions, an answer given meanwhile
 * applies, and the resumed session is told to make the call again; the words the card says.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AskBroker, type AskAnsweredBy, type AskDecision, type AskEvent } from '../../src/agent/questions/asks';
import { QuestionRecorder } from '../../src/agent/questions/question-record';
import { askInputDigest, renderToolInput } from '../../src/core/ask-input';
import { ManualClock } from '../../src/core/clock';
import { ManualTimers } from '../../src/core/timers';
import { recoverInterruptedTask } from '../../src/service/lifecycle-rules';
import { TaskLifecycle } from '../../src/service/task-lifecycle';
import { TaskStore } from '../../src/store';
import { formatTime, questionAnswerText } from '../../webview/format';

describe('a question open when its window closes: the ask broker', () => {
  it('holdTask keeps the open ask: the segment\'s end answers nothing ("ended" never), an answer meanwhile is kept for the record, not delivered', async () => {
    const clock = new ManualClock(1_000_000);
    const timers = new ManualTimers(clock);
    const events: AskEvent[] = [];
    const delivered: [AskDecision, AskAnsweredBy][] = [];
    const b = new AskBroker({ clock, timers, timeoutMs: () => 60_000, unanswered: () => 'park', parkAfterMs: () => 30_000 });
    b.onEvent((e) => events.push(e));
    const input = { command: 'make' };
    const a = b.ask('t1', { tool: 'Bash', summary: 'make', input: renderToolInput(input), call: input }, (d, by) =>
      delivered.push([d, by]),
    );
    const other = b.ask('t2', { tool: 'Bash', summary: 'other', input: 'x' }, (d, by) => delivered.push([d, by]));

    assert.deepEqual(
      b.holdTask('t1').map((x) => x.id),
      [a.id],
    );
    await timers.advanceTo(1_100_000); // past the park deadline: a held ask does not park
    assert.equal(events.filter((e) => e.type === 'parking' && e.ask.id === a.id).length, 0);
    assert.equal(b.answer('t1', a.id, 'allow', a.inputDigest), 'accepted');
    b.settle(a.id, 'deny', 'ended'); // the stopping agent reports its interruption: ignored
    b.endTask('t1');
    assert.deepEqual(
      delivered.filter(([, by]) => by !== 'timeout'),
      [],
      'nothing reached the stopping agent',
    );
    assert.deepEqual(b.takeParkingAnswer(a.id), { decision: 'allow', by: 'host' });
    assert.ok(
      events.some((e) => e.type === 'parked' && e.ask.id === a.id),
      'it left the runtime as kept',
    );
    assert.ok(!events.some((e) => e.type === 'answered' && e.ask.id === a.id && !e.parking), 'no answer was recorded for it');
    assert.deepEqual(
      b.pending('t2').map((x) => x.id),
      [other.id],
      "another task's ask is not held",
    );
  });
});

describe('a question open when its window closes: the decision record and the resume', () => {
  let dir: string;
  let clock: ManualClock;
  let store: TaskStore;
  let lifecycle: TaskLifecycle;
  let recorder: QuestionRecorder;
  const input = 'command: echo ran >> ran.txt';
  const question = { askId: 'A1', tool: 'run_command', summary: 'echo ran', input, callDigest: 'd1', askedAt: 1_000_000 };

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-reload-'));
    clock = new ManualClock(1_000_000);
    store = await TaskStore.open({ directory: dir, clock, watch: false, durable: false });
    lifecycle = new TaskLifecycle(store);
    lifecycle.onDidQueueWork((w) => (w.kind === 'retake' ? Promise.resolve(true) : undefined));
    recorder = new QuestionRecorder(store);
    await store.mutate((tx) => {
      tx.tickets.insert({ ticketId: 'K1', taskId: 'T', serverState: 'active' });
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
      tx.questions.recordAsked({ ...question, taskId: 'T' });
    });
    assert.equal(await lifecycle.markStarted('T', 'K1', 'S1'), true);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const q = () => store.read((tx) => tx.questions.get('A1'))!;

  it('a reload keeps it unanswered and answerable; the resumed session is told to make the call again, and the record says it was asked again', async () => {
    clock.advance(5_000);
    await lifecycle.interrupt('T', 'K1', [{ question }]);
    assert.equal(store.read((tx) => tx.tasks.get('T'))!.status, 'queued');
    assert.equal(store.read((tx) => tx.tasks.get('T'))!.serverTicketId, 'K1', 'the same live ticket');
    assert.deepEqual([q().decision, q().answeredBy, q().parkedAt], [null, 'interrupted', 1_005_000]);
    assert.deepEqual(
      store.read((tx) => tx.questions.parkedOpen(['T'])).map((x) => x.askId),
      ['A1'],
      'answerable from any window',
    );
    assert.equal(
      questionAnswerText(q()),
      `Waiting for your answer: its window closed at ${formatTime(1_005_000)} (a reload, a crash or a restart) before anyone answered; the agent asks again when the task resumes`,
    );

    const told = recorder.decisionsToState('T');
    assert.match(
      told.text,
      /NOT ANSWERED: run_command: echo ran\. The call did not run\. If it is still needed, make exactly this tool call again now; the user is asked again:\n<<<tool input\ncommand: echo ran >> ran\.txt\ntool input>>>/,
    );
    assert.doesNotMatch(told.text, /ALLOWED|DENIED/);
    assert.deepEqual([told.askIds, told.askedAgain], [[], ['A1']]);
    clock.advance(2_000);
    await recorder.markStated(told.askIds, told.askedAgain);
    assert.deepEqual([q().decision, q().answeredBy, q().answeredAt], [null, 'asked-again', 1_007_000]);
    assert.equal(await lifecycle.answerParked('T', 'A1', 'allow'), 'unknown', 'closed once the resumed session asks anew');
    assert.deepEqual(
      store.read((tx) => tx.questions.parkedOpen(['T'])),
      [],
    );
    assert.equal(recorder.decisionsToState('T').text, '', 'told once');
    const words = questionAnswerText(q());
    assert.match(
      words,
      /^Not answered: its window closed at .* \(a reload, a crash or a restart\) before anyone answered; the resumed agent was told to ask again/,
    );
    assert.doesNotMatch(words, /nobody|time limit/);
  });

  it('an answer given meanwhile (another window, the task still queued) applies: the resumed session is told ALLOWED and its repeat is answered from it', async () => {
    await lifecycle.interrupt('T', 'K1', [{ question }]);
    clock.advance(60_000);
    assert.equal(await lifecycle.answerParked('T', 'A1', 'allow', 'other-window'), 'accepted');
    assert.equal(await lifecycle.answerParked('T', 'A1', 'deny'), 'already-answered');
    assert.equal(store.read((tx) => tx.tasks.get('T'))!.serverTicketId, 'K1', 'queued with its ticket, no retake');
    assert.deepEqual([q().decision, q().answeredBy], ['allow', 'other-window']);
    const told = recorder.decisionsToState('T');
    assert.match(told.text, /ALLOWED: run_command: echo ran\. Make exactly this tool call again now/);
    assert.deepEqual([told.askIds, told.askedAgain], [['A1'], []]);
    assert.equal(recorder.storedDecision('T', 'd1')?.decision, 'allow', 'the repeat is answered from it');
  });

  it('an answer that reached the closing window while its agent stopped, or one another window left in the shared table, is kept', async () => {
    await lifecycle.interrupt('T', 'K1', [{ question, answer: { decision: 'deny', by: 'host' } }]);
    assert.deepEqual([q().decision, q().answeredBy], ['deny', 'host']);

    await store.mutate((tx) => {
      tx.tasks.claim('T');
      tx.questions.recordAsked({ ...question, taskId: 'T', askId: 'A2', askedAt: 1_000_001 });
      tx.asks.publish('window-a', [
        { id: 'A2', taskId: 'T', tool: 'run_command', summary: 'echo ran', input, askedAt: 1_000_001, deadlineAt: 2_000_000 },
      ]);
      tx.asks.leaveAnswer('A2', 'allow', askInputDigest(input));
    });
    assert.equal(await lifecycle.markStarted('T', 'K1', 'S1'), true);
    await lifecycle.interrupt('T', 'K1', [{ question: { ...question, askId: 'A2', askedAt: 1_000_001 } }]);
    const a2 = store.read((tx) => tx.questions.get('A2'))!;
    assert.deepEqual([a2.decision, a2.answeredBy], ['allow', 'other-window']);
  });

  it('a crash: recovery keeps the question the dead window left open (in the record without an answer)', async () => {
    clock.advance(30_000);
    const outcome = await store.mutate((tx) => recoverInterruptedTask(tx, 'T'));
    assert.deepEqual(outcome, { kind: 'requeued' });
    assert.deepEqual([q().decision, q().answeredBy, q().parkedAt], [null, 'interrupted', 1_030_000]);
    assert.deepEqual(recorder.decisionsToState('T').askedAgain, ['A1']);
  });
});
