// A question nobody answers parks the task (docs/flows.md#questions-park-the-task), end to end in
// Node: the real HostEngine, a real reference-agent process, the panel protocol over a real
// MessageChannel, and the REAL reference gateway (loopback, segment capacity 1) in front of the
// scripted fake model upstream (a fixture standing in for the model API).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { systemClock, type Clock } from '../../src/core/clock';
import { OffsetClock } from '../../src/gateway/authority/offset-clock';
import { engineDirs, type HostEngine } from '../../src/engine/host-engine';
import type { TaskNotice } from '../../src/engine/task-notices';
import { groupCards, questionAnswerText } from '../../webview/format';
import { connect } from '../integration/panel-link';
import { tsNodeArgv } from '../integration/runtime-helpers';
import { makeGitWorkspace, shape, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { startTestEngine, waitFor } from './test-engine';

const COMMAND = { command: 'echo ran >> ran.txt' };

/** The text of every user message of a request body (the continuation prompt is one). */
function userTexts(body: unknown): string[] {
  const messages = (body as { messages?: { role: string; content: string | { type: string; text?: string }[] }[] }).messages ?? [];
  return messages
    .filter((m) => m.role === 'user')
    .flatMap((m) => (typeof m.content === 'string' ? [m.content] : m.content.filter((c) => c.type === 'text').map((c) => c.text ?? '')));
}

describe('an unanswered question parks the task (reference agent, real gateway)', function () {
  let world: GatewayWorld;
  const engines: HostEngine[] = [];
  let link: ReturnType<typeof connect> | undefined;
  let notices: TaskNotice[];

  const storageDir = () => path.join(world.root, 'globalStorage');
  const start = async (mode: 'park' | 'deny' = 'park', askParkMs = 1_500, clock?: Clock) => {
    const engine = await startTestEngine({
      clock,
      storageDir: storageDir(),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      unansweredQuestion: mode,
      askParkMs,
      askTimeoutMs: 1_500,
      onNotice: (n) => notices.push(n),
    });
    engines.push(engine);
    await waitFor(() => engine.service.isLeader, 'the lease');
    link?.close();
    link = connect({ service: engine.service, store: engine.store, clock: systemClock, hasApiKey: () => true, asks: engine.questions });
    link.webview.channel.ready();
    return engine;
  };
  const lastState = () => link!.webview.states[link!.webview.states.length - 1];
  const cardOf = (taskId: string) => lastState()?.tasks.find((c) => c.id === taskId);

  beforeEach(async () => {
    notices = [];
    world = await startWorld({ segmentCapacity: 1 });
  });

  afterEach(async () => {
    link?.close();
    link = undefined;
    for (const e of engines.splice(0)) await e.dispose();
    await world?.close();
  });

  /** A parks on its first question; returns the task id and its workspace. */
  async function parkOne(h: HostEngine): Promise<{ id: string; ws: string }> {
    world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: COMMAND });
    const ws = makeGitWorkspace(world.root);
    const created = await h.service.create({
      title: 'ask me at night',
      prompt: 'append ran to ran.txt',
      permissionMode: 'default',
      workspacePath: ws,
    });
    await waitFor(() => h.service.getTask(created.id)?.status === 'needs_input', 'the task parked', 60_000);
    return { id: created.id, ws };
  }

  it('park: the segment ends parked, its ticket is settled and the gateway gives the capacity to another task; the card shows Needs input with the question', async () => {
    const h = await start('park');
    const { id } = await parkOne(h);

    const [ticket] = h.service.ticketsOf(id);
    assert.equal(ticket.endReason, 'parked', 'the segment ended parked, not failed');
    await waitFor(() => h.service.ticketsOf(id)[0].settleState === 'settled', 'the parked ticket settled at the gateway');
    const counts = await world.gateway.authority.counts();
    assert.equal((counts.byState.active ?? 0) + (counts.byState.ready ?? 0), 0, 'the gateway holds no capacity for the parked task');
    const task = h.service.getTask(id)!;
    assert.equal(task.serverTicketId, null);
    assert.equal(task.failureReason, null);

    // The agent's prompt in the terminal says what happens when nobody answers (no "denied automatically").
    const tasksDir = path.join(engineDirs(storageDir()).runtimeDir, 'tasks', id);
    const log = fs
      .readdirSync(tasksDir)
      .filter((d) => d.startsWith('segment-'))
      .map((d) => fs.readFileSync(path.join(tasksDir, d, 'agent.log'), 'utf8'))
      .join('');
    assert.match(log, /\[y\/N\] \(the task waits for your answer without holding capacity after 2 s; type y or n, then Enter\)/);
    assert.doesNotMatch(log, /denied automatically/);
    assert.match(log, /nobody answered in time: the task waits for your answer without holding capacity/);
    const card = await waitFor(() => cardOf(id)?.status === 'needs_input' && cardOf(id), 'the parked card');
    assert.equal(card.phase, 'needs_input');
    assert.ok(
      groupCards(lastState().tasks).needs_input.some((c) => c.id === id),
      'listed under Needs input',
    );
    assert.equal(card.ask?.tool, 'run_command');
    assert.match(card.ask?.question ?? '', /echo ran >> ran\.txt/);
    assert.ok(card.ask?.parkedAt, 'the card says the task parked on it');

    // With capacity 1, a second task only runs because the parked one released it.
    world.upstream.enqueue({ kind: 'text', text: 'B is done.' });
    const b = await h.service.create({
      title: 'B',
      prompt: 'say done',
      permissionMode: 'default',
      workspacePath: makeGitWorkspace(world.root, 'ws-b'),
    });
    await waitFor(() => h.service.getTask(b.id)?.status === 'completed', 'the other task completed while the first waits', 60_000);
    assert.equal(h.service.getTask(id)?.status, 'needs_input');
  });

  it('park: Allow resumes the same session with a new ticket; the identical call is answered from the stored decision and the tool runs once', async () => {
    const h = await start('park');
    const { id, ws } = await parkOne(h);
    const sessionId = h.service.getTask(id)!.sessionId;
    const card = await waitFor(() => cardOf(id)?.ask?.parkedAt !== undefined && cardOf(id), 'the parked card');
    // The resumed model repeats the same call (the continuation prompt tells it to), then finishes.
    world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: COMMAND }, { kind: 'text', text: 'Done.' });

    assert.deepEqual(
      await link!.webview.channel.request('answerAsk', {
        taskId: id,
        askId: card.ask!.id,
        decision: 'allow',
        inputDigest: card.ask!.inputDigest,
      }),
      { outcome: 'accepted' },
    );
    assert.deepEqual(
      await link!.webview.channel.request('answerAsk', {
        taskId: id,
        askId: card.ask!.id,
        decision: 'deny',
        inputDigest: card.ask!.inputDigest,
      }),
      { outcome: 'already-answered' },
    );
    await waitFor(() => h.service.getTask(id)?.status === 'completed', 'completed', 90_000);

    assert.equal(fs.readFileSync(path.join(ws, 'ran.txt'), 'utf8'), 'ran\n', 'the command ran exactly once');
    const task = h.service.getTask(id)!;
    assert.equal(task.sessionId, sessionId, 'the same session');
    assert.deepEqual(
      h.service.ticketsOf(id).map((t) => t.endReason),
      ['parked', 'completed'],
    );
    const requests = world.upstream.messageRequests();
    const resumed = requests[1];
    assert.deepEqual(shape(resumed.body).slice(0, 2), ['user:text', 'assistant:tool_use'], 'the resumed request carries the first segment');
    assert.ok(
      userTexts(resumed.body).some((t) => /ALLOWED: run_command: [^\n]*echo ran >> ran\.txt/.test(t)),
      'the continuation prompt states the decision',
    );

    const { questions } = await link!.webview.channel.request('questions', { taskId: id });
    assert.deepEqual(
      questions.map((q) => [q.decision, q.answeredBy, q.parkedAt !== null]),
      [
        ['allow', 'host', true],
        ['allow', 'stored', false],
      ],
    );
    assert.equal(cardOf(id)?.refusals, undefined, 'nothing was denied');
    assert.equal(
      notices.filter((n) => n.kind === 'input-needed').length,
      1,
      'the question was notified once; its stored answer asked nobody',
    );
  });

  it("park: Allow, and the resumed model rewords the call's description: the continuation prompt carries the whole input, the stored decision answers it, and the command runs once", async () => {
    const h = await start('park');
    world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: { ...COMMAND, description: 'Append a line' } });
    const ws = makeGitWorkspace(world.root);
    const { id } = await h.service.create({
      title: 'reworded',
      prompt: 'append ran to ran.txt',
      permissionMode: 'default',
      workspacePath: ws,
    });
    const card = await waitFor(() => cardOf(id)?.ask?.parkedAt !== undefined && cardOf(id), 'the parked card', 60_000);
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'run_command', input: { ...COMMAND, description: 'Add the line "ran" to ran.txt' } },
      { kind: 'text', text: 'Done.' },
    );
    assert.deepEqual(
      await link!.webview.channel.request('answerAsk', {
        taskId: id,
        askId: card.ask!.id,
        decision: 'allow',
        inputDigest: card.ask!.inputDigest,
      }),
      { outcome: 'accepted' },
    );
    await waitFor(() => h.service.getTask(id)?.status === 'completed', 'completed', 90_000);

    assert.equal(fs.readFileSync(path.join(ws, 'ran.txt'), 'utf8'), 'ran\n', 'the allowed command ran exactly once');
    const resumed = world.upstream.messageRequests()[1];
    assert.ok(
      userTexts(resumed.body).some((t) =>
        t.includes('<<<tool input\ncommand: echo ran >> ran.txt\ndescription: Append a line\ntool input>>>'),
      ),
      'the continuation prompt carries the whole input',
    );
    const { questions } = await link!.webview.channel.request('questions', { taskId: id });
    assert.deepEqual(
      questions.map((q) => [q.decision, q.answeredBy]),
      [
        ['allow', 'host'],
        ['allow', 'stored'],
      ],
      'the repeat was not asked again',
    );
    const done = await waitFor(() => cardOf(id)?.status === 'completed' && cardOf(id), 'the completed card');
    assert.equal(done.allowedNotRun, undefined, 'the allowed action ran');
  });

  it('park: Allow, and the resumed model finishes without making the call: the card and History say the allowed action did not run, and Follow up is offered', async () => {
    const h = await start('park');
    const { id, ws } = await parkOne(h);
    const card = await waitFor(() => cardOf(id)?.ask?.parkedAt !== undefined && cardOf(id), 'the parked card');
    world.upstream.enqueue({ kind: 'text', text: 'All done (without running it).' });
    assert.deepEqual(
      await link!.webview.channel.request('answerAsk', {
        taskId: id,
        askId: card.ask!.id,
        decision: 'allow',
        inputDigest: card.ask!.inputDigest,
      }),
      { outcome: 'accepted' },
    );
    await waitFor(() => h.service.getTask(id)?.status === 'completed', 'completed', 90_000);

    assert.equal(fs.existsSync(path.join(ws, 'ran.txt')), false);
    const done = await waitFor(
      () => cardOf(id)?.status === 'completed' && cardOf(id)?.allowedNotRun && cardOf(id),
      'the completed card with its mark',
    );
    assert.equal(done.allowedNotRun?.tool, 'run_command');
    assert.match(done.allowedNotRun?.summary ?? '', /echo ran >> ran\.txt/);
    assert.equal(done.actions.followUp, true, 'Follow up is offered');
    const row = lastState().history.find((r) => r.taskId === id);
    assert.equal(row?.status, 'succeeded');
    assert.equal(row?.allowedNotRun?.tool, 'run_command', 'History marks it too');
  });

  it('park: Deny resumes the same session with the denial; the command never runs and the card says 1 action denied', async () => {
    const h = await start('park');
    const { id, ws } = await parkOne(h);
    const card = await waitFor(() => cardOf(id)?.ask?.parkedAt !== undefined && cardOf(id), 'the parked card');
    world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: COMMAND }, { kind: 'text', text: 'Could not run it.' });

    assert.deepEqual(
      await link!.webview.channel.request('answerAsk', {
        taskId: id,
        askId: card.ask!.id,
        decision: 'deny',
        inputDigest: card.ask!.inputDigest,
      }),
      { outcome: 'accepted' },
    );
    await waitFor(() => h.service.getTask(id)?.status === 'completed', 'completed', 90_000);

    assert.equal(fs.existsSync(path.join(ws, 'ran.txt')), false);
    const resumed = world.upstream.messageRequests()[1];
    assert.ok(
      userTexts(resumed.body).some((t) => /DENIED: run_command: [^\n]*echo ran >> ran\.txt/.test(t)),
      'the continuation prompt states the denial',
    );
    const last = world.upstream.messageRequests()[2];
    assert.match(JSON.stringify(last.body), /Not allowed: the user denied it/, 'the repeated call was refused from the stored decision');
    const done = await waitFor(() => cardOf(id)?.status === 'completed' && cardOf(id), 'the completed card');
    assert.deepEqual(done.refusals, { denied: 1, automatic: 0 });
  });

  it('a park survives a reload: a new engine on the same DB shows the parked question, and Allow from it resumes the task', async () => {
    const first = await start('park');
    const { id, ws } = await parkOne(first);
    await engines.shift()!.dispose();

    const h = await start('park');
    assert.equal(h.service.getTask(id)?.status, 'needs_input', 'still parked after the reload');
    const card = await waitFor(() => cardOf(id)?.ask?.parkedAt !== undefined && cardOf(id), 'the parked card after the reload');
    assert.equal(card.ask?.tool, 'run_command');
    world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: COMMAND }, { kind: 'text', text: 'Done.' });
    assert.deepEqual(
      await link!.webview.channel.request('answerAsk', {
        taskId: id,
        askId: card.ask!.id,
        decision: 'allow',
        inputDigest: card.ask!.inputDigest,
      }),
      { outcome: 'accepted' },
    );
    await waitFor(() => h.service.getTask(id)?.status === 'completed', 'completed', 90_000);
    assert.equal(fs.readFileSync(path.join(ws, 'ran.txt'), 'utf8'), 'ran\n');
  });

  it('a reload with an open question (docs/flows.md#a-question-across-a-reload): it is asked again after the resume, Allow runs the call once, and the record says the window closed and it was asked again', async () => {
    // Parks only after 10 min: the question is still open when the window reloads.
    const first = await start('park', 600_000);
    world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: COMMAND });
    const ws = makeGitWorkspace(world.root);
    const created = await first.service.create({
      title: 'reload while asking',
      prompt: 'append ran to ran.txt',
      permissionMode: 'default',
      workspacePath: ws,
    });
    const asked = await waitFor(() => first.questions.pendingAsks(created.id)[0], 'the question', 60_000);
    // The scripted model (a fixture) makes the call again after the resume, then finishes.
    world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: COMMAND }, { kind: 'text', text: 'Done.' });
    await engines.shift()!.dispose(); // the window reloads

    const h = await start('park', 600_000);
    const card = await waitFor(
      () => {
        const c = cardOf(created.id);
        return c?.ask && c.ask.id !== asked.id ? c : undefined;
      },
      'the question asked again',
      90_000,
    );
    assert.equal(card.ask?.parkedAt, undefined, 'asked by the resumed agent, not a parked one');
    assert.equal(fs.existsSync(path.join(ws, 'ran.txt')), false, 'nothing ran before the answer');
    assert.deepEqual(
      await link!.webview.channel.request('answerAsk', {
        taskId: created.id,
        askId: card.ask!.id,
        decision: 'allow',
        inputDigest: card.ask!.inputDigest,
      }),
      { outcome: 'accepted' },
    );
    await waitFor(() => h.service.getTask(created.id)?.status === 'completed', 'completed', 90_000);
    assert.equal(fs.readFileSync(path.join(ws, 'ran.txt'), 'utf8'), 'ran\n', 'the command ran exactly once');

    const resumed = world.upstream.messageRequests()[1];
    assert.ok(
      userTexts(resumed.body).some(
        (t) => t.includes('NOT ANSWERED: run_command') && t.includes(`<<<tool input\ncommand: ${COMMAND.command}\ntool input>>>`),
      ),
      'the resumed session was told to make the call again',
    );
    const { questions } = await link!.webview.channel.request('questions', { taskId: created.id });
    assert.deepEqual(
      questions.map((q) => [q.askId === asked.id, q.decision, q.answeredBy]),
      [
        [true, null, 'asked-again'],
        [false, 'allow', 'host'],
      ],
    );
    const words = questionAnswerText(questions[0]);
    assert.match(
      words,
      /^Not answered: its window closed at .+ \(a reload, a crash or a restart\) before anyone answered; the resumed agent was told to ask again/,
    );
    assert.doesNotMatch(words, /nobody|segment ended/);
    assert.ok(!h.service.ticketsOf(created.id).some((t) => t.endReason === 'expired'), 'no segment of it ended on the time limit');
    const tasksDir = path.join(engineDirs(storageDir()).runtimeDir, 'tasks', created.id);
    const log = fs
      .readdirSync(tasksDir)
      .filter((d) => d.startsWith('segment-'))
      .map((d) => fs.readFileSync(path.join(tasksDir, d, 'agent.log'), 'utf8'))
      .join('');
    assert.doesNotMatch(log, /time limit/);
  });

  /**
   * A window closes with a question open; the gateway's clock (an OffsetClock the test moves) runs
   * 4 h on, past the ticket's active window (3 h); so does the reopened window's with `windowLater`
   * (else it cannot know). The question asked again after the reopen is allowed and the task completes.
   */
  async function reopenWithOpenQuestion(windowLater: boolean) {
    await world.close();
    const gatewayClock = new OffsetClock(systemClock);
    world = await startWorld({ segmentCapacity: 1 }, gatewayClock);
    const first = await start('park', 600_000);
    world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: COMMAND });
    const ws = makeGitWorkspace(world.root);
    const created = await first.service.create({
      title: 'reopened after the ticket ended',
      prompt: 'append ran to ran.txt',
      permissionMode: 'default',
      workspacePath: ws,
    });
    const asked = await waitFor(() => first.questions.pendingAsks(created.id)[0], 'the question', 60_000);
    await waitFor(() => first.service.ticketsOf(created.id)[0].expiresAt, 'the ledger to know when the active window ends');
    const [ticket] = first.service.ticketsOf(created.id);
    world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: COMMAND }, { kind: 'text', text: 'Done.' });
    await engines.shift()!.dispose(); // the window closes with the question open and its ticket live
    const later = 4 * 3_600_000;
    gatewayClock.advance(later);
    const windowClock = new OffsetClock(systemClock);
    if (windowLater) windowClock.advance(later);
    const before = world.upstream.messageRequests().length;

    const h = await start('park', 600_000, windowClock);
    const card = await waitFor(
      () => {
        const c = cardOf(created.id);
        return c?.ask && c.ask.id !== asked.id ? c : undefined;
      },
      'the question asked again',
      90_000,
    );
    assert.deepEqual(
      await link!.webview.channel.request('answerAsk', {
        taskId: created.id,
        askId: card.ask!.id,
        decision: 'allow',
        inputDigest: card.ask!.inputDigest,
      }),
      { outcome: 'accepted' },
    );
    await waitFor(() => h.service.getTask(created.id)?.status === 'completed', 'completed', 90_000);
    assert.equal(fs.readFileSync(path.join(ws, 'ran.txt'), 'utf8'), 'ran\n', 'the command ran exactly once');
    return { id: created.id, asked, ticket, h, before };
  }

  it('a reload with an open question, reopened after its ticket\'s time ran out (docs/flows.md#a-question-across-a-reload): the task retakes and the question is asked again; nothing says "time limit" or records a segment that expired', async () => {
    const { id, asked, ticket, h } = await reopenWithOpenQuestion(true);
    const tickets = h.service.ticketsOf(id);
    assert.deepEqual(
      tickets.map((t) => [t.ticketId === ticket.ticketId, t.endReason]),
      [
        [true, 'interrupted'],
        [false, 'completed'],
      ],
      'the first segment ended by the reload, the second completed',
    );
    const { questions } = await link!.webview.channel.request('questions', { taskId: id });
    assert.deepEqual(
      questions.map((q) => [q.askId === asked.id, q.decision, q.answeredBy]),
      [
        [true, null, 'asked-again'],
        [false, 'allow', 'host'],
      ],
    );
    assert.doesNotMatch(questionAnswerText(questions[0]), /nobody|segment ended|time limit/);
    const tasksDir = path.join(engineDirs(storageDir()).runtimeDir, 'tasks', id);
    const log = fs
      .readdirSync(tasksDir)
      .filter((d) => d.startsWith('segment-'))
      .map((d) => fs.readFileSync(path.join(tasksDir, d, 'agent.log'), 'utf8'))
      .join('');
    assert.doesNotMatch(log, /time limit/);
  });

  it("a reload with an open question whose ticket the gateway ended unknown to the ledger (docs/flows.md#a-question-across-a-reload): the segment that meets the end before any model answer does not spend the question; the next segment's prompt asks again", async () => {
    const { before } = await reopenWithOpenQuestion(false);
    // The first model call the gateway let through after the reopen carries the statement as its prompt.
    const resumed = world.upstream.messageRequests()[before];
    assert.match(
      userTexts(resumed.body).at(-1) ?? '',
      /NOT ANSWERED: run_command/,
      'the segment that reached the model was told to ask again',
    );
  });

  it('a park survives a crash: the window that parked it is killed (SIGKILL); a new window shows the question, nothing is requeued, and Allow resumes the task', async () => {
    world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: COMMAND });
    const ws = makeGitWorkspace(world.root);
    const options = {
      storageDir: storageDir(),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      windowId: 'window-crashing',
      unansweredQuestion: 'park',
      askParkMs: 1_500,
      create: { title: 'crash while parked', prompt: 'append ran to ran.txt', permissionMode: 'default', workspacePath: ws },
    };
    // A window as its own process (test/e2e/host-process.ts), printing its runtime events.
    const child = spawn(process.execPath, [...tsNodeArgv('test/e2e/host-process.ts'), JSON.stringify(options)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      await waitFor(() => out.includes('"kind":"parked"'), 'the crashing window to park the task', 90_000);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const h = await start('park');
    await waitFor(() => h.recoveries.length > 0, "the new window's recovery");
    assert.deepEqual(
      h.recoveries.flatMap((r) => r.requeued),
      [],
      'a parked task is not taken for an interrupted one',
    );
    const id = h.service.listTasks()[0].id;
    assert.equal(h.service.getTask(id)?.status, 'needs_input');
    const card = await waitFor(() => cardOf(id)?.ask?.parkedAt !== undefined && cardOf(id), 'the parked card after the crash');
    world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: COMMAND }, { kind: 'text', text: 'Done.' });
    assert.deepEqual(
      await link!.webview.channel.request('answerAsk', {
        taskId: id,
        askId: card.ask!.id,
        decision: 'allow',
        inputDigest: card.ask!.inputDigest,
      }),
      { outcome: 'accepted' },
    );
    await waitFor(() => h.service.getTask(id)?.status === 'completed', 'completed', 90_000);
    assert.equal(fs.readFileSync(path.join(ws, 'ran.txt'), 'utf8'), 'ran\n');
  });

  it('the question settings apply without a reload: a window started in deny mode parks the next question once the setting says park, after the park time set then', async () => {
    const settings = { unanswered: 'deny' as 'park' | 'deny', askParkMs: 600_000 };
    const h = await startTestEngine({
      storageDir: storageDir(),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      unansweredQuestion: () => settings.unanswered,
      askParkMs: () => settings.askParkMs,
      askTimeoutMs: 3_600_000,
    });
    engines.push(h);
    await waitFor(() => h.service.isLeader, 'the lease');
    // The user changes the settings while the window runs.
    settings.unanswered = 'park';
    settings.askParkMs = 1_500;
    const { id } = await parkOne(h);
    assert.equal(h.service.ticketsOf(id)[0].endReason, 'parked');
    const tasksDir = path.join(engineDirs(storageDir()).runtimeDir, 'tasks', id);
    const log = fs
      .readdirSync(tasksDir)
      .filter((d) => d.startsWith('segment-'))
      .map((d) => fs.readFileSync(path.join(tasksDir, d, 'agent.log'), 'utf8'))
      .join('');
    assert.match(
      log,
      /the task waits for your answer without holding capacity after 2 s/,
      'the agent was launched with the park time in force',
    );
  });

  it('a parked task can be cancelled like any task (nothing left to settle)', async () => {
    const h = await start('park');
    const { id } = await parkOne(h);
    link!.host.confirmAnswers.push(true);
    assert.deepEqual(await link!.webview.channel.request('cancel', { taskId: id }), { done: true });
    assert.equal(h.service.getTask(id)?.status, 'cancelled');
    await waitFor(() => cardOf(id)?.status === 'cancelled', 'the cancelled card');
    assert.equal(cardOf(id)?.ask, null, 'no question left to answer');
  });

  it('deny mode keeps the old behaviour: the question is denied at the deadline and the task completes without the command; card, History and notification say "1 action denied (1 automatically)"', async () => {
    const h = await start('deny');
    world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: COMMAND }, { kind: 'text', text: 'Nobody answered.' });
    const ws = makeGitWorkspace(world.root);
    const created = await h.service.create({ title: 'deny at night', prompt: 'append ran', permissionMode: 'default', workspacePath: ws });
    await waitFor(() => h.service.getTask(created.id)?.status === 'completed', 'completed', 90_000);
    assert.equal(fs.existsSync(path.join(ws, 'ran.txt')), false);
    assert.deepEqual(
      h.service.ticketsOf(created.id).map((t) => t.endReason),
      ['completed'],
      'never parked',
    );

    const card = await waitFor(
      () => cardOf(created.id)?.status === 'completed' && cardOf(created.id)?.refusals && cardOf(created.id),
      'the completed card with its refusal',
    );
    assert.deepEqual(card.refusals, { denied: 1, automatic: 1 });
    assert.deepEqual(lastState().history.find((r) => r.taskId === created.id)?.refusals, { denied: 1, automatic: 1 });
    const notice = await waitFor(() => notices.find((n) => n.kind === 'completed' && n.taskId === created.id), 'the completed notice');
    assert.deepEqual(notice.kind === 'completed' && notice.refusals, { denied: 1, automatic: 1 });
    const { questions } = await link!.webview.channel.request('questions', { taskId: created.id });
    assert.equal(questions.length, 1);
    assert.equal(questions[0].tool, 'run_command');
    assert.equal(questions[0].decision, 'deny');
    assert.equal(questions[0].answeredBy, 'timeout');
    assert.ok(questions[0].answeredAt !== null && questions[0].answeredAt >= questions[0].askedAt);
  });
});
