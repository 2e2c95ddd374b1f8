// Trust II (issue 17) item 1: a window that is NOT the lease holder is killed with SIGKILL while its
// agent runs. The segment's watchdog stops the agent's process group as the window dies (Trust III
// item 1: an agent never outlives its window); the holder's next lease tick finds the dead window's
// task (docs/flows.md#recovery) and it is requeued with its session; a window opened afterwards
// on the same folder picks it up and the same session completes, no step run twice. Real
// processes: the gateway, the killed window (its own process, host-process.ts), the reference
// agent; the model upstream is the scripted fixture.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { HostEngine } from '../../src/engine/host-engine';
import { makeGitWorkspace, processAlive, shape, startWorld, toolUseIds, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { spawnHost } from './spawn-host';
import { waitFor } from './test-engine';
import { startWindow, type SharedStorage } from './two-windows';

describe('a crashed window that is not the lease holder (real processes end to end)', function () {
  this.timeout(180_000);
  let world: GatewayWorld;
  let place: SharedStorage;
  const children: ChildProcess[] = [];
  let straggler: number | undefined;

  afterEach(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    if (straggler && processAlive(straggler)) process.kill(straggler, 'SIGKILL');
    for (const e of place.engines.splice(0)) await e.dispose();
    await world.close();
  });

  it("item 1: the dead window's agent group is stopped (its watchdog) and its task is requeued with its session; a window opened afterwards completes it in the same session, no step run twice", async () => {
    world = await startWorld();
    place = {
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      engines: [] as HostEngine[],
    };
    const ws = makeGitWorkspace(world.root);
    // The command leaves a process behind in the agent's group that is not its descendant (it
    // double-forks), as a build server or a watcher would.
    world.upstream.enqueue(
      {
        kind: 'tool_use',
        name: 'run_command',
        input: { command: 'echo step >> steps.txt; (sleep 300 >/dev/null 2>&1 & echo $! > straggler.pid); sleep 60' },
      },
      { kind: 'text', text: 'Resumed after the crash and finished.' },
    );

    // The lease holder has no folder open. Its lease tick is driven by the test: one call is one tick.
    const holder = await startWindow(place, 'window-holder', [], { lease: { ttlMs: 3_600_000, tickMs: 3_600_000 } });
    assert.equal(holder.engine.service.isLeader, true);
    const b = spawnHost({
      storageDir: place.storageDir,
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      windowId: 'window-B',
      workspaceKeys: [ws],
    });
    children.push(b.child);
    await waitFor(() => holder.engine.windows.remoteHosts().some((h) => h.windowId === 'window-B'), 'window B to register', 60_000);

    await holder.engine.service.availability.refresh();
    const task = await holder.engine.service.create({
      title: 'crash',
      prompt: 'long work',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
    });
    const started = await waitFor(
      () => b.lines.find((l) => l.event?.type === 'segment-started' && l.event.taskId === task.id)?.event,
      'the segment in window B',
      60_000,
    );
    const stragglerFile = path.join(ws, 'straggler.pid');
    await waitFor(
      () => fs.existsSync(stragglerFile) && fs.readFileSync(stragglerFile, 'utf8').trim().length > 0,
      'the command to run',
      30_000,
    );
    straggler = Number(fs.readFileSync(stragglerFile, 'utf8').trim());
    assert.ok(processAlive(straggler));

    b.child.kill('SIGKILL');
    await b.exited;
    // The segment's watchdog stops the agent's whole group, the double-forked child included.
    await waitFor(() => !processAlive(started.pid), 'the orphaned agent to end', 20_000);
    await waitFor(() => !processAlive(straggler), 'what the agent started to end with its window', 20_000);
    assert.equal(holder.engine.service.getTask(task.id)!.status, 'running', 'the dead window left the task running');

    // A window opened afterwards on the same folder (not the holder).
    const c = await startWindow(place, 'window-C', [ws]);
    assert.equal(c.engine.service.isLeader, false);

    // One lease tick of the holder.
    await holder.engine.service.leadership.tick();
    await waitFor(
      () => holder.engine.service.getTask(task.id)!.status !== 'running' || undefined,
      'the holder to requeue the task',
      20_000,
    );
    assert.equal(holder.engine.service.isLeader, true, 'the holder stayed the holder');

    const resumed = await waitFor(
      () => c.events.find((e) => e.type === 'segment-started' && e.taskId === task.id),
      'window C to resume the task',
      60_000,
    );
    assert.equal(resumed.type === 'segment-started' && resumed.resume, true);
    assert.equal(resumed.type === 'segment-started' && resumed.sessionId, started.sessionId, 'the same session');
    const done = await waitFor(
      () => {
        const t = holder.engine.service.getTask(task.id);
        return t && ['completed', 'failed', 'cancelled'].includes(t.status) ? t : undefined;
      },
      'the task to finish',
      60_000,
    );
    assert.equal(done.status, 'completed', done.failureReason ?? '');
    assert.equal(done.sessionId, started.sessionId);
    assert.ok(!holder.events.some((e) => e.type === 'segment-started'), 'the holder ran nothing itself');

    // No step run twice: the command ran once, the model was asked twice (the first call, then the resume).
    assert.equal(fs.readFileSync(path.join(ws, 'steps.txt'), 'utf8'), 'step\n');
    const requests = world.upstream.messageRequests();
    assert.equal(requests.length, 2);
    assert.deepEqual(shape(requests[1].body), ['user:text', 'assistant:tool_use', 'user:tool_result+text']);
    const firstToolUseId = /"type":"tool_use","id":"(toolu_[^"]+)"/.exec(requests[0].sentBody.toString('utf8'))?.[1];
    assert.deepEqual(toolUseIds(requests[1].body), [firstToolUseId]);
    const tickets = holder.engine.service.ticketsOf(task.id);
    assert.equal(tickets.length, 1, 'the still-active ticket was reused');
    assert.equal(tickets[0].endReason, 'completed');
  });

  it("an answer left for a crashed window's question is carried over (POSIX only: the window is frozen with SIGSTOP): recovery records it, the resumed session's repeat is answered from it, the command runs once and nobody is asked again", async () => {
    world = await startWorld();
    place = {
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      engines: [] as HostEngine[],
    };
    const ws = makeGitWorkspace(world.root);
    const command = { command: 'echo ran >> ran.txt' };
    // The scripted model (a fixture) asks to run the command; after the resume it makes the call again, then finishes.
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'run_command', input: command },
      { kind: 'tool_use', name: 'run_command', input: command },
      { kind: 'text', text: 'Done.' },
    );

    const holder = await startWindow(place, 'window-holder', [], { lease: { ttlMs: 3_600_000, tickMs: 3_600_000 }, askParkMs: 600_000 });
    const b = spawnHost({
      storageDir: place.storageDir,
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      windowId: 'window-B',
      workspaceKeys: [ws],
      askParkMs: 600_000,
    });
    children.push(b.child);
    await waitFor(() => holder.engine.windows.remoteHosts().some((h) => h.windowId === 'window-B'), 'window B to register', 60_000);
    await holder.engine.service.availability.refresh();
    const task = await holder.engine.service.create({
      title: 'crash with an answer left',
      prompt: 'append ran to ran.txt',
      permissionMode: 'default',
      workspacePath: ws,
    });
    const ask = await waitFor(() => holder.engine.questions.pendingAsks(task.id)[0], "window B's question, listed in the holder", 60_000);

    // Window B freezes (it cannot apply what is left for it), the user answers in the holder, then B dies.
    b.child.kill('SIGSTOP');
    assert.equal(
      await holder.engine.questions.answerAsk(task.id, ask.id, 'allow', ask.inputDigest),
      'accepted',
      'the answer is left for window B',
    );
    b.child.kill('SIGKILL');
    await b.exited;

    // The holder's lease ticks (every 2 s here, as a holder's timer would; its own timer is set to an
    // hour): the first recovers B's task, later ones retake its ticket if a take failed meanwhile.
    // The task then runs in the holder.
    let lastStatus = '';
    const ticking = setInterval(() => void holder.engine.service.leadership.tick(), 2_000);
    await holder.engine.service.leadership.tick();
    const end = await waitFor(
      () => {
        const t = holder.engine.service.getTask(task.id)!;
        lastStatus = `${t.status}${t.lastError ? ` (${t.lastError})` : ''}`;
        if (['completed', 'failed', 'cancelled'].includes(t.status)) return t.status;
        // Without the answer, the resumed session is told to make the call again and it is asked anew.
        return holder.engine.store.read((tx) => tx.questions.get(ask.id))?.answeredBy === 'asked-again' && 'asked again';
      },
      'the task to finish or ask again',
      90_000,
    )
      .finally(() => clearInterval(ticking))
      .catch((err: Error) => {
        // What the holder did, so a failure under load says where it stopped.
        const seen = {
          recoveries: holder.engine.recoveries,
          events: holder.events.filter((e) => 'taskId' in e && e.taskId === task.id).map((e) => e.type),
          windows: holder.engine.windows.remoteHosts().map((h) => h.windowId),
        };
        throw new Error(`${err.message}; the task is ${lastStatus}; the holder saw ${JSON.stringify(seen)}`);
      });
    assert.equal(end, 'completed', 'the answer left before the crash answered the repeated call');
    assert.equal(fs.readFileSync(path.join(ws, 'ran.txt'), 'utf8'), 'ran\n', 'the command ran once');
    const record = holder.engine.store.read((tx) => tx.questions.forTask(task.id));
    const first = record.find((q) => q.askId === ask.id);
    assert.deepEqual(
      [first?.decision, first?.answeredBy],
      ['allow', 'other-window'],
      "the record keeps the answer left for the crashed window's question",
    );
    assert.ok(
      record.every((q) => q.answeredBy !== 'asked-again' && q.answeredBy !== 'host'),
      'nobody was asked again',
    );
  });
});
