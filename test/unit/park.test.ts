/**
 * Parking on an unanswered question (docs/flows.md#questions-park-the-task), in parts: the ask
 * broker's park mode and stored decisions, the decision record (schema v7) on a real sql.js file,
 * and the lifecycle's park and answer transactions.
 */
import { askInputDigest, renderToolInput } from '../../src/core/ask-input';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AskBroker, toolCallDigest, type AskAnsweredBy, type AskDecision, type AskEvent } from '../../src/agent/questions/asks';
import { ManualClock } from '../../src/core/clock';
import { ManualTimers } from '../../src/core/timers';
import { TaskLifecycle, type LifecycleWork } from '../../src/service/task-lifecycle';
import { TaskStore } from '../../src/store';
import type { OffPeakTask } from '../../src/core/types';
import { toTaskCard } from '../../src/panel/task-card';
import { answerOutcomeText, askDeadlineText, groupCards, phaseLabel, questionAnswerText, refusalText } from '../../webview/format';

describe('park mode of the ask broker', () => {
  let clock: ManualClock;
  let timers: ManualTimers;
  let events: AskEvent[];
  let delivered: [AskDecision, AskAnsweredBy][];
  let stored: Map<string, { askId: string; decision: AskDecision }>;
  const broker = (mode: 'park' | 'deny') => {
    const b = new AskBroker({
      clock,
      timers,
      timeoutMs: () => 60_000,
      unanswered: () => mode,
      parkAfterMs: () => 30_000,
      storedDecision: (taskId, digest) => stored.get(`${taskId}:${digest}`),
    });
    b.onEvent((e) => events.push(e));
    return b;
  };
  const ask = (b: AskBroker, input: unknown = { command: 'make' }) =>
    b.ask(
      't1',
      { tool: 'Bash', summary: 'make', input: renderToolInput(input), call: input, deadlineAt: clock.now() + 3_600_000 },
      (d, by) => delivered.push([d, by]),
    );

  beforeEach(() => {
    clock = new ManualClock(1_000_000);
    timers = new ManualTimers(clock);
    events = [];
    delivered = [];
    stored = new Map();
  });

  it('at the park deadline nothing is denied: the ask parks, stays listed, and an answer then is kept for the park, never delivered', async () => {
    const b = broker('park');
    const a = ask(b);
    assert.equal(a.deadlineAt, 1_030_000, "the park deadline comes before the agent's own");
    assert.equal(a.onDeadline, 'park');
    await timers.advanceTo(1_030_000);
    assert.deepEqual(
      events.map((e) => e.type),
      ['asked', 'parking'],
    );
    assert.deepEqual(delivered, [], 'the agent got no answer');
    assert.equal(b.pending('t1').length, 1, 'still listed while the segment ends');
    assert.equal(b.answer('t1', a.id, 'allow', a.inputDigest), 'accepted');
    assert.equal(b.answer('t1', a.id, 'deny', a.inputDigest), 'already-answered');
    b.settle(a.id, 'deny', 'ended'); // the stopping agent reports its interruption: ignored
    b.endTask('t1');
    assert.deepEqual(delivered, [], 'nothing reached the stopping agent');
    assert.deepEqual(b.takeParkingAnswer(a.id), { decision: 'allow', by: 'host' });
    assert.equal(b.takeParkingAnswer(a.id), undefined, 'taken once');
    assert.deepEqual(b.pending(), []);
    assert.deepEqual(
      events.map((e) => e.type),
      ['asked', 'parking', 'answered', 'parked'],
    );
  });

  it('deny mode keeps the deadline deny', async () => {
    const b = broker('deny');
    const a = ask(b);
    await timers.advanceTo(a.deadlineAt);
    assert.deepEqual(delivered, [['deny', 'timeout']]);
  });

  it('the identical tool call is answered from the stored decision, once; another input asks', async () => {
    const b = broker('park');
    stored.set(`t1:${toolCallDigest('Bash', { command: 'make', cwd: '.' })}`, { askId: 'parked-1', decision: 'allow' });
    // Same tool, same input with its keys in another order: the same call.
    const same = ask(b, { cwd: '.', command: 'make' });
    const other = ask(b, { command: 'make install' });
    await timers.advanceTo(clock.now());
    assert.deepEqual(delivered, [['allow', 'stored']]);
    const answered = events.find((e) => e.type === 'answered');
    assert.ok(answered && answered.type === 'answered' && answered.ask.id === same.id && answered.storedFrom === 'parked-1');
    assert.deepEqual(
      b.pending().map((p) => p.id),
      [other.id],
    );
    ask(b, { command: 'make', cwd: '.' });
    await timers.advanceTo(clock.now());
    assert.equal(delivered.length, 1, 'a stored decision answers one call only');
  });

  it('a repeat that rewords only the description is the same call (answered from the stored decision); another command or file content asks', async () => {
    const b = broker('park');
    stored.set(`t1:${toolCallDigest('Bash', { command: 'npm test', description: 'Run the tests' })}`, {
      askId: 'parked-1',
      decision: 'allow',
    });
    stored.set(`t1:${toolCallDigest('Write', { file_path: '/w/a.txt', content: 'one' })}`, { askId: 'parked-2', decision: 'allow' });
    const reworded = ask(b, { command: 'npm test', description: 'Runs the unit tests again' });
    const otherCommand = ask(b, { command: 'npm test -- --bail', description: 'Run the tests' });
    const otherContent = b.ask(
      't1',
      {
        tool: 'Write',
        summary: 'a.txt',
        input: renderToolInput({ file_path: '/w/a.txt', content: 'two' }),
        call: { file_path: '/w/a.txt', content: 'two' },
      },
      (d, by) => delivered.push([d, by]),
    );
    await timers.advanceTo(clock.now());
    assert.deepEqual(delivered, [['allow', 'stored']]);
    const answered = events.find((e) => e.type === 'answered');
    assert.ok(answered && answered.type === 'answered' && answered.ask.id === reworded.id && answered.storedFrom === 'parked-1');
    assert.deepEqual(
      b.pending().map((p) => p.id),
      [otherCommand.id, otherContent.id],
    );
  });
});

describe('the decision record (schema v7) and the park transactions', () => {
  let dir: string;
  let clock: ManualClock;
  let store: TaskStore;
  let lifecycle: TaskLifecycle;
  let work: LifecycleWork[];
  const question = { askId: 'A1', tool: 'run_command', summary: 'run make', input: 'make', callDigest: 'd1', askedAt: 1_000_000 };

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-park-'));
    clock = new ManualClock(1_000_000);
    store = await TaskStore.open({ directory: dir, clock, watch: false, durable: false });
    work = [];
    lifecycle = new TaskLifecycle(store);
    lifecycle.onDidQueueWork((w) => {
      work.push(w);
      return w.kind === 'retake' ? Promise.resolve(true) : undefined;
    });
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
    });
    assert.equal(await lifecycle.markStarted('T', 'K1', 'S1'), true);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('park: the segment ends parked, its ticket goes to the settle outbox, the task waits in needs_input without a ticket', async () => {
    clock.advance(5_000);
    assert.equal(await lifecycle.park('T', 'K1', question), 'parked');
    const task = store.read((tx) => tx.tasks.get('T'))!;
    assert.equal(task.status, 'needs_input');
    assert.equal(task.serverTicketId, null);
    assert.equal(task.sessionId, 'S1');
    const ticket = store.read((tx) => tx.tickets.get('K1'))!;
    assert.equal(ticket.endReason, 'parked');
    assert.equal(ticket.settleState, 'pending');
    assert.deepEqual(work, [{ kind: 'settle', ticketIds: ['K1'] }]);
    const q = store.read((tx) => tx.questions.get('A1'))!;
    assert.equal(q.parkedAt, 1_005_000);
    assert.equal(q.decision, null);
    assert.deepEqual(
      store.read((tx) => tx.questions.parkedOpen(['T'])).map((x) => x.askId),
      ['A1'],
    );
  });

  it('answer: the first answer from any window wins, the task is queued and retakes; the decision is stored for the identical call and stated once', async () => {
    await lifecycle.park('T', 'K1', question);
    clock.advance(60_000);
    assert.equal(await lifecycle.answerParked('T', 'A1', 'allow', 'other-window'), 'accepted');
    assert.equal(await lifecycle.answerParked('T', 'A1', 'deny'), 'already-answered');
    assert.equal(await lifecycle.answerParked('T', 'nope', 'deny'), 'unknown');
    assert.equal(store.read((tx) => tx.tasks.get('T'))!.status, 'queued');
    assert.deepEqual(work.at(-1), { kind: 'retake', taskId: 'T' });
    const q = store.read((tx) => tx.questions.get('A1'))!;
    assert.deepEqual([q.decision, q.answeredBy, q.answeredAt], ['allow', 'other-window', 1_060_000]);
    assert.equal(store.read((tx) => tx.questions.storedDecision('T', 'd1'))?.askId, 'A1');
    assert.equal(store.read((tx) => tx.questions.storedDecision('T', 'other'))?.askId, undefined);
    await store.mutate((tx) => tx.questions.markUsed('A1'));
    assert.equal(
      store.read((tx) => tx.questions.storedDecision('T', 'd1')),
      undefined,
      'used once',
    );
    assert.deepEqual(
      store.read((tx) => tx.questions.unstated('T')).map((x) => x.askId),
      ['A1'],
    );
    await store.mutate((tx) => tx.questions.markStated(['A1']));
    assert.deepEqual(
      store.read((tx) => tx.questions.unstated('T')),
      [],
    );
  });

  it('an answer given while the agent stopped requeues at once instead of parking', async () => {
    assert.equal(await lifecycle.park('T', 'K1', question, { decision: 'deny', by: 'host' }), 'requeued');
    assert.equal(store.read((tx) => tx.tasks.get('T'))!.status, 'queued');
    assert.deepEqual(
      work.map((w) => w.kind),
      ['settle', 'retake'],
    );
    assert.equal(store.read((tx) => tx.questions.get('A1'))!.decision, 'deny');
  });

  it('a parked task is cancelled like any task, and deleted with its questions', async () => {
    await lifecycle.park('T', 'K1', question);
    const result = await lifecycle.cancel('T', async () => undefined);
    assert.equal(result.kind, 'cancelled');
    assert.equal(await lifecycle.answerParked('T', 'A1', 'allow'), 'unknown', 'nothing to resume any more');
    assert.equal(await lifecycle.delete('T'), true);
    assert.deepEqual(
      store.read((tx) => tx.questions.forTask('T')),
      [],
    );
  });

  it("denials count the user's and the deadline's denials, not a segment that ended nor a stored repeat", async () => {
    await store.mutate((tx) => {
      for (const [id, decision, by] of [
        ['q1', 'deny', 'host'],
        ['q2', 'deny', 'timeout'],
        ['q3', 'deny', 'ended'],
        ['q4', 'deny', 'stored'],
        ['q5', 'allow', 'terminal'],
        ['q6', 'deny', 'terminal'],
      ] as const) {
        tx.questions.recordAsked({ askId: id, taskId: 'T', tool: 'Bash', summary: id, input: '', callDigest: null, askedAt: 1 });
        tx.questions.recordAnswer(id, decision, by);
      }
    });
    assert.deepEqual(store.read((tx) => tx.questions.denials()).get('T'), { denied: 3, automatic: 1 });
  });
});

describe('a parked task on its card', () => {
  const task = (status: OffPeakTask['status']): OffPeakTask => ({
    id: 'T',
    title: 'night job',
    prompt: 'p',
    permissionMode: 'default',
    model: null,
    thoughtLevel: null,
    workspaceKey: '/w',
    workspacePath: '/w',
    workspaceIdentity: null,
    conversationId: null,
    sessionId: 'S1',
    status,
    queuedAt: 1,
    startedAt: 2,
    endedAt: null,
    failureReason: null,
    filesChanged: null,
    serverTicketId: null,
    registeredAt: null,
    schedulable: false,
    queuePosition: null,
    nextPollAt: null,
    claimRunning: false,
    claimedAt: null,
    attemptCount: 0,
    lastError: null,
    settledAt: null,
    historyDeletedAt: null,
    createdAt: 1,
    updatedAt: 1,
  });
  const parkedAsk = {
    id: 'A1',
    taskId: 'T',
    tool: 'Bash',
    summary: 'make install',
    input: 'command: make install',
    inputDigest: askInputDigest('command: make install'),
    askedAt: 10,
    deadlineAt: 20,
    onDeadline: 'park' as const,
    parkedAt: 20,
  };

  it('shows Needs input with the whole question, in the Needs input section, with Cancel and without a countdown to a denial', () => {
    const card = toTaskCard(task('needs_input'), [], [parkedAsk]);
    assert.equal(card.phase, 'needs_input');
    assert.equal(phaseLabel(card), 'Needs input');
    assert.deepEqual([card.ask?.id, card.ask?.tool, card.ask?.question, card.ask?.parkedAt], ['A1', 'Bash', 'make install', 20]);
    assert.deepEqual(
      groupCards([card]).needs_input.map((c) => c.id),
      ['T'],
    );
    assert.equal(card.actions.cancel, true);
    assert.match(askDeadlineText(card.ask!, 1_000), /^Waiting for your answer since .*without holding capacity/);
    assert.match(answerOutcomeText('allow', 'accepted', 'Bash', true), /queued again and resumes its session/);
  });

  it('item 8: a running question in park mode says the task will wait ("If nobody answers within 1m 00s, …", never "… capacity in 9m 50s"), not that it will be denied; a leftover parked question shows on no running card', () => {
    const running = toTaskCard(task('running'), [], [{ ...parkedAsk, parkedAt: undefined, deadlineAt: 70_000 }]);
    assert.match(askDeadlineText(running.ask!, 10_000), /^If nobody answers within 1m 00s, the task waits without holding capacity/);
    assert.equal(toTaskCard(task('running'), [], [parkedAsk]).ask, null);
    assert.equal(toTaskCard(task('completed'), [], [parkedAsk]).ask, null);
  });

  it('a question whose segment ended before anyone answered says so and that it is asked again, never "by nobody"', () => {
    const text = questionAnswerText({ decision: 'deny', answeredBy: 'ended', answeredAt: null, parkedAt: null });
    assert.match(text, /^Not answered: its segment ended first/);
    assert.match(text, /asks again when the task resumes/);
    assert.doesNotMatch(text, /nobody/);
    assert.match(
      questionAnswerText({ decision: 'allow', answeredBy: 'host', answeredAt: null, parkedAt: 5 }),
      /^Allowed by you, in VS Code$/,
    );
  });

  it('the refusal mark: "N actions denied (M automatically)", only when something was denied', () => {
    assert.equal(toTaskCard(task('completed'), [], [], false, undefined, { denied: 0, automatic: 0 }).refusals, undefined);
    assert.deepEqual(toTaskCard(task('completed'), [], [], false, undefined, { denied: 2, automatic: 1 }).refusals, {
      denied: 2,
      automatic: 1,
    });
    assert.equal(refusalText({ denied: 2, automatic: 1 }), '2 actions denied (1 automatically)');
    assert.equal(refusalText({ denied: 1, automatic: 0 }), '1 action denied');
    assert.equal(refusalText(undefined), undefined);
  });
});
