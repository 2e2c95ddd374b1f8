// End to end in Node: the REAL reference gateway (loopback) in front of the scripted fake model
// upstream, the real task store/service/scheduler/runtime, and real reference-agent processes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cardPhaseOf } from '../../src/panel/task-card';
import { TaskTerminalFeed } from '../../src/agent/runtime/task-terminal-feed';
import { GatewayClient } from '../../src/gateway-client/client';
import { systemClock } from '../../src/core/clock';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';
import { makeGitWorkspace, processAlive, shape, startWorld, toolUseIds, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { engineDirs, type HostEngine } from '../../src/engine/host-engine';
import { startTestEngine, waitFor, type TestEngineOptions } from './test-engine';

describe('runtime end to end (real gateway, fake upstream, reference agent processes)', function () {
  let world: GatewayWorld;
  let host: HostEngine | undefined;

  afterEach(async () => {
    await host?.dispose();
    host = undefined;
    await world?.close();
  });

  const storageDir = () => path.join(world.root, 'globalStorage');

  async function boot(
    config: Parameters<typeof startWorld>[0] = {},
    events: RuntimeEvent[] = [],
    hostOptions: Partial<TestEngineOptions> = {},
    onEvent?: (event: RuntimeEvent) => void,
  ): Promise<HostEngine> {
    world = await startWorld(config);
    host = await startTestEngine({
      storageDir: storageDir(),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      onEvent: (e) => {
        events.push(e);
        onEvent?.(e);
      },
      ...hostOptions,
    });
    await waitFor(() => host!.service.isLeader, 'the lease');
    return host;
  }

  const task = (h: HostEngine, id: string) => h.service.getTask(id)!;

  /** Takes the gateway's only model-request slot with another ticket's request that hangs until released. */
  async function occupyCapacity(): Promise<{ release(): void }> {
    const client = new GatewayClient({ baseUrl: world.gateway.url, apiKey: async () => USER_KEY, clock: systemClock });
    const ticket = (await client.take('blocker-task')).ticketId;
    for (let i = 0; i < 200 && (await client.status([ticket])).tickets[0].state !== 'ready'; i++)
      await new Promise((r) => setTimeout(r, 50));
    const abort = new AbortController();
    void fetch(`${world.gateway.url}/api/anthropic/v1/messages`, {
      method: 'POST',
      signal: abort.signal,
      headers: { authorization: `Bearer ${USER_KEY}`, 'x-off-peak-ticket-id': ticket, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'BLOCKER' }] }),
    })
      .then(
        (r) => r.text(),
        () => undefined,
      )
      .catch(() => undefined);
    await world.upstream.waitForMessageRequest(1);
    return { release: () => abort.abort() };
  }

  it('one segment: queued -> ready -> run -> completed; one History row; ticket settled', async () => {
    const h = await boot();
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'hello.txt', content: 'hi\n' } },
      { kind: 'text', text: 'Wrote hello.txt.' },
    );
    const ws = makeGitWorkspace(world.root);
    const created = await h.service.create({
      title: 'hello',
      prompt: 'write hello.txt',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
    });
    await waitFor(() => task(h, created.id).status === 'completed', 'completed');
    const done = task(h, created.id);
    assert.equal(done.failureReason, null);
    assert.equal(done.filesChanged, 1);
    assert.ok(done.sessionId);
    assert.equal(fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8'), 'hi\n');
    const history = h.service.history();
    assert.equal(history.length, 1);
    assert.equal(history[0].status, 'succeeded');
    await waitFor(() => h.service.ticketsOf(created.id).every((t) => t.settleState === 'settled'), 'the ticket to be settled');
    const tickets = h.service.ticketsOf(created.id);
    assert.equal(tickets.length, 1);
    assert.ok(tickets[0].activeAt, 'the ledger recorded the first admitted request');
    assert.equal(tickets[0].endReason, 'completed');
    const requests = world.upstream.messageRequests();
    assert.equal(requests.length, 2);
    assert.equal(requests[0].headers['x-api-key'], 'upstream-secret', 'the gateway, not the agent, authenticates upstream');
  });

  /** A task terminal's feed on this host (what src/vscode/task-terminals.ts renders). */
  function terminalFeed(h: HostEngine, taskId: string): { feed: TaskTerminalFeed; shown: () => string } {
    let shown = '';
    const source = h.terminalSource();
    return {
      feed: new TaskTerminalFeed(
        taskId,
        (text) => (shown += text),
        () => source,
      ),
      shown: () => shown,
    };
  }

  it('3102 mid-task: requeue, new ticket, the SAME session resumes, completed; one History row; two tickets settled; the terminal shows both segments live and replays them later', async () => {
    // Active window 2 s; the tool runs 3 s, so the next model request meets an expired ticket (a real 3102).
    let live: ReturnType<typeof terminalFeed> | undefined;
    // The terminal attaches when a segment starts, as the extension does on 'segment-started'.
    const h = await boot({ activeWindowMs: 2_000 }, [], {}, (e) => {
      if (e.type === 'segment-started') {
        live ??= terminalFeed(host!, e.taskId);
        void live.feed.sync();
      }
    });
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'run_command', input: { command: 'sleep 3; echo slept > step1.txt' } },
      { kind: 'text', text: 'All steps done after resuming.' },
    );
    const ws = makeGitWorkspace(world.root);
    const created = await h.service.create({
      title: 'long',
      prompt: 'do the long task',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
    });
    await waitFor(() => task(h, created.id).status === 'completed', 'completed', 90_000);
    assert.equal(h.service.history().length, 1);
    assert.equal(h.service.history()[0].status, 'succeeded');
    await waitFor(
      () => h.service.ticketsOf(created.id).length === 2 && h.service.ticketsOf(created.id).every((t) => t.settleState === 'settled'),
      'both tickets settled',
    );
    const tickets = h.service.ticketsOf(created.id);
    assert.deepEqual(
      tickets.map((t) => t.endReason),
      ['expired', 'completed'],
    );
    assert.notEqual(tickets[0].ticketId, tickets[1].ticketId);

    // What the model saw: request 1 (segment 1), request 2 refused by the gateway (3102, never
    // reached upstream), request 3 = the resumed conversation on the new ticket.
    const requests = world.upstream.messageRequests();
    assert.equal(requests.length, 2);
    const first = requests[0];
    const resumed = requests[1];
    assert.deepEqual(shape(first.body), ['user:text']);
    assert.deepEqual(shape(resumed.body), ['user:text', 'assistant:tool_use', 'user:tool_result+text']);
    const firstToolUseId = /"type":"tool_use","id":"(toolu_[^"]+)"/.exec(first.sentBody.toString('utf8'))?.[1];
    assert.ok(firstToolUseId);
    assert.deepEqual(toolUseIds(resumed.body), [firstToolUseId], "the resumed conversation carries segment 1's tool call");
    assert.ok(fs.existsSync(path.join(ws, 'step1.txt')), 'the tool of segment 1 ran');
    const sessions = fs.readdirSync(engineDirs(storageDir()).referenceSessionsDir);
    assert.deepEqual(sessions, [`${task(h, created.id).sessionId}.jsonl`], 'one session for both segments');

    // Live: segment 1's output, its end, then segment 2 resuming, in one terminal.
    const liveText = live!.shown();
    assert.match(
      liveText,
      /──── Segment 1 · ticket 1[\s\S]*sleep 3[\s\S]*\[off-peak\] Segment 1 ended \(time limit\); the task resumes with a new ticket\.[\s\S]*──── Segment 2 · ticket 2[\s\S]*All steps done after resuming\.[\s\S]*\[off-peak\] Task completed\./,
    );
    // After a reload (a new terminal, nothing running): both segments from their logs, in order, with how each ended.
    const replayed = terminalFeed(h, created.id);
    await replayed.feed.sync();
    assert.match(
      replayed.shown(),
      /──── Segment 1 · ticket 1[\s\S]*sleep 3[\s\S]*Segment 1 ended \(time limit\); the task resumes with a new ticket[\s\S]*──── Segment 2 · ticket 2[\s\S]*All steps done after resuming\.[\s\S]*Segment 2 ended: the task completed/,
    );
    replayed.feed.input('y');
    assert.match(replayed.shown(), /typing does nothing\.\n$/);
  });

  it('429/3105 is held until admitted; the card says "waiting for admission" until then', async () => {
    // One model request at a time: a blocker request holds the capacity for a while.
    const h = await boot({ maxConcurrentModelRequests: 1, busyRetryAfterMs: 200 });
    world.upstream.setDefaultReply((r) => (r.rawBody.includes('BLOCKER') ? { kind: 'hang' } : { kind: 'text', text: 'Task finished.' }));
    const blocker = await occupyCapacity();

    const ws = makeGitWorkspace(world.root);
    const created = await h.service.create({ title: 'held', prompt: 'quick task', permissionMode: 'bypassPermissions', workspacePath: ws });
    const phases: string[] = [];
    let holding = false;
    const sampler = setInterval(() => {
      const t = h.service.getTask(created.id);
      if (!t) return;
      const ticket = t.serverTicketId ? h.service.ticketsOf(created.id).find((k) => k.ticketId === t.serverTicketId) : undefined;
      const phase = cardPhaseOf(t, ticket);
      if (phases.at(-1) !== phase) phases.push(phase);
      if (h.runtime.segment(created.id)?.agentRun?.proxy.state === 'holding') holding = true;
    }, 20);
    await waitFor(() => holding && h.runtime.segment(created.id)?.agentRun?.proxy.state === 'holding', 'the proxy to hold the request');
    await new Promise((r) => setTimeout(r, 700)); // several re-probes answered 3105 meanwhile
    assert.equal(task(h, created.id).status, 'running');
    blocker.release();
    await waitFor(() => task(h, created.id).status === 'completed', 'completed', 60_000);
    clearInterval(sampler);
    assert.equal(task(h, created.id).failureReason, null);
    const waitingAt = phases.indexOf('waiting_for_admission');
    const runningAt = phases.indexOf('running');
    assert.ok(waitingAt >= 0 && runningAt > waitingAt, `phases seen: ${phases.join(' -> ')}`);
    const ticket = h.service.ticketsOf(created.id)[0];
    assert.ok(ticket.activeAt! >= ticket.segmentStartedAt!, 'admitted only after the segment started');
  });

  it('cancel during a hold: the agent stops, nothing is left running, the ticket is settled', async () => {
    const h = await boot({ maxConcurrentModelRequests: 1, busyRetryAfterMs: 200 });
    world.upstream.setDefaultReply((r) => (r.rawBody.includes('BLOCKER') ? { kind: 'hang' } : { kind: 'text', text: 'should not run' }));
    const blocker = await occupyCapacity();
    const ws = makeGitWorkspace(world.root);
    const created = await h.service.create({ title: 'cancel me', prompt: 'p', permissionMode: 'bypassPermissions', workspacePath: ws });
    await waitFor(() => h.runtime.segment(created.id)?.agentRun?.proxy.state === 'holding', 'the hold');
    const pid = h.runtime.segment(created.id)!.pid;
    assert.equal(cardPhaseOf(task(h, created.id), h.service.ticketsOf(created.id)[0]), 'waiting_for_admission');
    await h.service.cancel(created.id);
    assert.equal(task(h, created.id).status, 'cancelled');
    assert.equal(processAlive(pid), false);
    assert.deepEqual(h.runtime.runningTaskIds, []);
    await waitFor(() => h.service.ticketsOf(created.id).every((t) => t.settleState === 'settled'), 'settled');
    assert.equal(world.upstream.messageRequests().length, 1, 'the cancelled task never reached the model');
    blocker.release();
  });

  it('a permission ask in default mode keeps the task running, tells the host, and the answer is applied', async () => {
    const events: RuntimeEvent[] = [];
    const h = await boot({}, events);
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'asked.txt', content: 'yes' } },
      { kind: 'text', text: 'Done.' },
    );
    const ws = makeGitWorkspace(world.root);
    const created = await h.service.create({ title: 'ask', prompt: 'write asked.txt', permissionMode: 'default', workspacePath: ws });
    const needed = await waitFor(() => events.find((e) => e.type === 'input-needed'), 'the input-needed event');
    assert.match(needed.type === 'input-needed' ? needed.ask.summary : '', /asked\.txt/);
    assert.deepEqual(
      h.runtime.pendingAsks(created.id).map((a) => a.tool),
      ['write_file'],
    );
    assert.equal(task(h, created.id).status, 'running');
    const seen: string[] = [];
    h.runtime.attachTerminal(created.id, { write: (t) => seen.push(t) });
    // The question shows the tool call's whole input (the content to be written included) before [y/N].
    await waitFor(
      // eslint-disable-next-line no-control-regex -- the question's line ends its inverse video (docs/flows.md#terminal-text)
      () => /\? Allow write_file with this input\?\x1b\[27m\n {6}│ path: asked\.txt\n {6}│ content: yes\n.*\[y\/N\]/.test(seen.join('')),
      'the question in the attached terminal',
    );
    h.runtime.writeInput(created.id, 'y\r');
    await waitFor(() => task(h, created.id).status === 'completed', 'completed');
    assert.equal(fs.readFileSync(path.join(ws, 'asked.txt'), 'utf8'), 'yes');
  });

  for (const decision of ['allow', 'deny'] as const) {
    it(`a permission ask answered through the runtime API (${decision}): the agent ${decision === 'allow' ? 'runs the command' : 'is refused'}, the task completes`, async () => {
      const events: RuntimeEvent[] = [];
      const h = await boot({}, events);
      world.upstream.enqueue(
        { kind: 'tool_use', name: 'run_command', input: { command: 'echo ran > ran.txt' } },
        { kind: 'text', text: 'Done.' },
      );
      const ws = makeGitWorkspace(world.root);
      const created = await h.service.create({ title: 'ask', prompt: 'run it', permissionMode: 'default', workspacePath: ws });
      const [ask] = await waitFor(
        () => h.runtime.pendingAsks(created.id).length === 1 && h.runtime.pendingAsks(created.id),
        'the pending ask',
      );
      assert.equal(ask.tool, 'run_command');
      assert.equal(task(h, created.id).status, 'running');
      assert.equal(h.runtime.answerAsk(created.id, ask.id, decision, ask.inputDigest), 'accepted');
      assert.equal(
        h.runtime.answerAsk(created.id, ask.id, decision === 'allow' ? 'deny' : 'allow', ask.inputDigest),
        'already-answered',
        'a second answer is ignored',
      );
      await waitFor(() => task(h, created.id).status === 'completed', 'completed');
      assert.equal(fs.existsSync(path.join(ws, 'ran.txt')), decision === 'allow');
      const answered = events
        .filter((e) => e.type === 'input-answered')
        .map((e) => e.type === 'input-answered' && [e.ask.id, e.decision, e.by]);
      assert.deepEqual(answered, [[ask.id, decision, 'host']]);
    });
  }

  it('with offPeak.unansweredQuestion = deny, an unanswered permission ask is denied at its deadline and the run goes on', async () => {
    const events: RuntimeEvent[] = [];
    const h = await boot({}, events, { askTimeoutMs: 1_000, unansweredQuestion: 'deny' });
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'never.txt', content: 'no' } },
      { kind: 'text', text: 'Gave up.' },
    );
    const ws = makeGitWorkspace(world.root);
    const created = await h.service.create({ title: 'ask', prompt: 'write it', permissionMode: 'default', workspacePath: ws });
    await waitFor(() => task(h, created.id).status === 'completed', 'completed');
    assert.equal(fs.existsSync(path.join(ws, 'never.txt')), false);
    const answered = events.filter((e) => e.type === 'input-answered').map((e) => e.type === 'input-answered' && [e.decision, e.by]);
    assert.deepEqual(answered, [['deny', 'timeout']]);
    assert.match(JSON.stringify(world.upstream.messageRequests()[1].body), /nobody answered the permission prompt in time/);
  });

  it('cancel during a run: the agent and its command stop, nothing is left running', async () => {
    const h = await boot();
    const ws = makeGitWorkspace(world.root);
    const marker = path.join(world.root, 'cmd.pid');
    world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: { command: `echo $$ > ${marker}; sleep 120` } });
    const created = await h.service.create({ title: 'cancel run', prompt: 'p', permissionMode: 'bypassPermissions', workspacePath: ws });
    await waitFor(() => fs.existsSync(marker) && fs.readFileSync(marker, 'utf8').trim(), 'the command');
    const commandPid = Number(fs.readFileSync(marker, 'utf8').trim());
    const agentPid = h.runtime.segment(created.id)!.pid;
    assert.equal(cardPhaseOf(task(h, created.id), h.service.ticketsOf(created.id)[0]), 'running');
    await h.service.cancel(created.id);
    assert.equal(task(h, created.id).status, 'cancelled');
    assert.equal(processAlive(agentPid), false);
    await waitFor(() => !processAlive(commandPid), 'the command to stop', 5_000);
    assert.equal(h.service.history()[0].status, 'skipped');
  });
});
