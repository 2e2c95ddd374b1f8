// Away notifications across three windows (docs/flows.md#away-notifications): three HostEngines on
// one globalStorage, the real gateway in demo mode and real reference-agent processes; the target
// is a local receiver (test/fixtures/notify-receiver.ts, a FIXTURE standing in for a JSON webhook).
// Every event is posted once, by the lease holder, whichever window noticed it; after the holder
// closes, the next one sends what comes, and nothing is sent twice.
import assert from 'node:assert/strict';
import { systemClock } from '../../src/core/clock';
import { WebhookPayloadSchema } from '../../src/protocol/notify';
import { TaskStore } from '../../src/store';
import { startNotifyReceiver, type NotifyReceiver } from '../fixtures/notify-receiver';
import { makeGitWorkspace } from './gateway-fixture';
import { waitFor } from './test-engine';
import { startDemoWorld, startWindow, type DemoWorld } from './two-windows';

const SECRET_PATH = 'hook-3b1f-SECRET';

describe('away notifications across three windows (three host engines on one globalStorage)', function () {
  this.timeout(180_000);
  let world: DemoWorld;
  let receiver: NotifyReceiver;

  beforeEach(async () => {
    world = await startDemoWorld({ activeWindowMs: 120_000, demoStepMs: 100 });
    receiver = await startNotifyReceiver();
  });
  afterEach(async () => {
    await world.close();
    await receiver.close();
  });

  const notify = () => ({
    target: async () => ({ kind: 'webhook' as const, url: `${receiver.origin}/${SECRET_PATH}` }),
    enabled: () => true,
    retryDelaysMs: [200, 200],
  });
  const open = (id: string, workspaces: string[]) =>
    startWindow(world, id, workspaces, { noticeGraceMs: 200, lease: { tickMs: 300 }, notify: notify() });
  const received = () => receiver.posts.filter((p) => p.status === 200).map((p) => WebhookPayloadSchema.parse(p.json));

  it('each event is posted once, by the lease holder; a 500 is retried; no prompt text, question input or key in any payload; the next holder takes over', async () => {
    const a = await open('window-a', []);
    const wsB = makeGitWorkspace(world.root, 'ws-b');
    const wsC = makeGitWorkspace(world.root, 'ws-c');
    const b = await open('window-b', [wsB]);
    const c = await open('window-c', [wsC]);
    assert.equal(a.engine.service.isLeader, true);
    await a.engine.service.availability.refresh();

    // Ready: runs in window B. Needs input: runs in window C, answered there.
    receiver.failNext(500);
    const done = await a.engine.service.create({
      title: 'Create hello.txt PROMPTMARK',
      prompt: 'Create hello.txt.',
      permissionMode: 'bypassPermissions',
      workspacePath: wsB,
    });
    const ask = await a.engine.service.create({
      title: 'node ASKMARK',
      prompt: 'Check the node version.',
      permissionMode: 'default',
      workspacePath: wsC,
    });
    const asked = await waitFor(
      () => c.notices.find((n) => n.taskId === ask.id && n.kind === 'input-needed'),
      'the question in window C',
      90_000,
    );
    assert.equal(
      asked.kind === 'input-needed' && (await c.engine.questions.answerAsk(ask.id, asked.ask.id, 'deny', asked.ask.inputDigest)),
      'accepted',
    );
    // Failed: a fourth window finishes a task and goes away before notifying it; the holder does.
    const gone = await TaskStore.open({ directory: world.storageDir, clock: systemClock, watch: false });
    await gone.mutate((tx) => {
      tx.tasks.insert({
        id: 'orphan-failed',
        title: 'orphan FAILMARK',
        prompt: 'p',
        permissionMode: 'plan',
        workspacePath: world.root,
        serverTicketId: 'tk-orphan',
        schedulable: true,
      });
      tx.tasks.claim('orphan-failed', {});
      tx.tasks.markRunning('orphan-failed', { sessionId: 's' });
      tx.tasks.fail('orphan-failed', { failureReason: 'REASONMARK the agent exited with code 1' });
    });
    await gone.close();

    const want = (events: ReturnType<typeof received>, taskId: string, event: string) =>
      events.filter((e) => e.task?.id === taskId && e.event === event).length;
    await waitFor(
      () => {
        const got = received();
        return want(got, done.id, 'ready') > 0 && want(got, ask.id, 'needs-input') > 0 && want(got, 'orphan-failed', 'failed') > 0;
      },
      'the three events at the receiver',
      90_000,
    );
    await a.engine.service.cancel(ask.id);
    // Time for a second post of any of them (retries, scans of the other windows) to arrive.
    await new Promise((r) => setTimeout(r, 1_500));
    for (const w of [a, b, c]) await w.engine.away.idle();
    const got = received();
    const rows = a.engine.store.read((tx) => tx.notify.all());
    // Each event in the outbox (one row per key, whoever wrote it) reached the receiver exactly once.
    const sentEvents = rows.filter((r) => r.state === 'sent').map((r) => JSON.parse(r.event) as { kind: string; taskId: string });
    assert.deepEqual(
      got.map((e) => `${e.event} ${e.task?.id}`).sort(),
      sentEvents.map((e) => `${e.kind} ${e.taskId}`).sort(),
      'each event once',
    );
    assert.deepEqual([want(got, done.id, 'ready'), want(got, 'orphan-failed', 'failed')], [1, 1]);
    assert.ok(
      rows.every((r) => r.state === 'sent'),
      JSON.stringify(rows.map((r) => [r.key, r.state])),
    );
    assert.deepEqual(
      receiver.posts.map((p) => p.status).filter((s) => s !== 200),
      [500],
      'the first post got the scripted 500',
    );
    assert.equal(receiver.posts.length, got.length + 1, 'and its event was posted again, once');
    assert.equal(got.find((e) => e.event === 'needs-input')?.tool, 'run_command', 'the question names its tool');
    for (const post of receiver.posts) {
      for (const secret of [
        'PROMPTMARK',
        'ASKMARK',
        'FAILMARK',
        'REASONMARK',
        'hello.txt',
        'node --version',
        world.apiKey,
        SECRET_PATH,
        world.root,
      ]) {
        assert.ok(!post.raw.includes(secret), `"${secret}" in a payload: ${post.raw}`);
      }
    }
    assert.deepEqual([...new Set(rows.filter((r) => r.state === 'sent').map((r) => r.doneBy))], ['window-a'], 'only the lease holder sent');

    // The holder closes: another window takes the lease and sends the next event, once.
    const before = receiver.posts.length;
    await a.engine.dispose();
    world.engines.splice(world.engines.indexOf(a.engine), 1);
    const holder = await waitFor(() => [b, c].find((w) => w.engine.service.isLeader), 'a new lease holder', 30_000);
    const next = await holder.engine.service.create({
      title: 'again',
      prompt: 'Create hello.txt.',
      permissionMode: 'bypassPermissions',
      workspacePath: wsB,
    });
    await waitFor(() => received().some((e) => e.task?.id === next.id), 'the next event from the new holder', 90_000);
    await new Promise((r) => setTimeout(r, 1_000));
    for (const w of [b, c]) await w.engine.away.idle();
    assert.equal(receiver.posts.length, before + 1, 'one more post, and none of the earlier events again');
    // A failed task's own reason says why (the payload leaves it out), so a failure here reads whole.
    const ended = holder.engine.store.read((tx) => tx.tasks.get(next.id));
    assert.equal(received().at(-1)?.event, 'ready', `the task ended ${ended?.status}: ${ended?.failureReason ?? ''}`);
    assert.equal(
      holder.engine.store.read((tx) => tx.notify.all().find((r) => r.event.includes(next.id))?.doneBy),
      holder === b ? 'window-b' : 'window-c',
    );
  });
});
