// Each completed / failed / needs-input event is notified once across all windows: by the window
// that ran the task, or by the lease holder when that window is gone, never by both. Two windows
// (two HostEngines on one globalStorage), the real gateway in demo mode and real agent processes.
// The lease holder's grace period is short here, so it would have had every chance to notify too.
import assert from 'node:assert/strict';
import path from 'node:path';
import { systemClock } from '../../src/core/clock';
import type { TaskNotice } from '../../src/engine/task-notices';
import { TaskStore } from '../../src/store';
import { makeGitWorkspace } from './gateway-fixture';
import { waitFor } from './test-engine';
import { startDemoWorld, startWindow, type DemoWorld } from './two-windows';

const GRACE_MS = 200;

describe('notified once across windows (two host engines on one globalStorage)', function () {
  this.timeout(120_000);
  let world: DemoWorld;

  beforeEach(async () => (world = await startDemoWorld({ activeWindowMs: 300, demoStepMs: 100 })));
  afterEach(async () => world.close());

  /** Lets the lease holder's grace period pass and its scans finish, so a second notice would have shown. */
  async function graceOver(...windows: { engine: { notices: { scan(): void; idle(): Promise<void> } } }[]): Promise<void> {
    await new Promise((r) => setTimeout(r, GRACE_MS * 3));
    for (const w of windows) {
      w.engine.notices.scan();
      await w.engine.notices.idle();
    }
  }

  const ofTask = (notices: TaskNotice[], taskId: string) => notices.filter((n) => n.taskId === taskId).map((n) => n.kind);

  it('a completed task is notified once, by the window that ran it, not by the lease holder', async () => {
    const a = await startWindow(world, 'window-a', [], { noticeGraceMs: GRACE_MS });
    const ws = makeGitWorkspace(world.root, 'ws-done');
    const b = await startWindow(world, 'window-b', [ws], { noticeGraceMs: GRACE_MS });
    assert.equal(a.engine.service.isLeader, true);
    await a.engine.service.availability.refresh();
    const task = await a.engine.service.create({
      title: 'done',
      prompt: 'Create hello.txt.',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
    });
    await waitFor(() => b.notices.some((n) => n.taskId === task.id) || undefined, 'the notice in window B', 60_000);
    await graceOver(a, b);
    assert.equal(a.engine.service.getTask(task.id)?.status, 'completed');
    assert.deepEqual(ofTask(b.notices, task.id), ['completed'], 'window B (it ran the agent) notified once');
    assert.deepEqual(ofTask(a.notices, task.id), [], 'the lease holder did not notify it again');
    assert.equal(
      a.engine.store.read((tx) => tx.outcomes.notifiedBy(task.id)),
      'window-b',
    );
  });

  it('a failure before the agent started (its binary is missing) is notified once, by the window that tried to start it', async () => {
    const a = await startWindow(world, 'window-a', [], { noticeGraceMs: GRACE_MS });
    const ws = makeGitWorkspace(world.root, 'ws-missing');
    const b = await startWindow(world, 'window-b', [ws], {
      noticeGraceMs: GRACE_MS,
      referenceAgent: { command: path.join(world.root, 'no-such-agent'), argsPrefix: [] },
    });
    await a.engine.service.availability.refresh();
    const task = await a.engine.service.create({ title: 'missing', prompt: 'Say hi.', permissionMode: 'plan', workspacePath: ws });
    await waitFor(() => b.notices.some((n) => n.taskId === task.id) || undefined, 'the notice in window B', 60_000);
    await graceOver(a, b);
    const failed = b.notices.filter((n) => n.taskId === task.id);
    assert.deepEqual(
      failed.map((n) => n.kind),
      ['failed'],
    );
    assert.match(failed[0].kind === 'failed' ? failed[0].reason : '', /could not start the reference agent/);
    assert.equal(b.events.filter((e) => e.type === 'segment-started').length, 0, 'the agent never started');
    assert.deepEqual(ofTask(a.notices, task.id), []);
  });

  it('a result whose window is gone is notified once, by the lease holder after its grace period', async () => {
    const a = await startWindow(world, 'window-a', [], { noticeGraceMs: GRACE_MS });
    const b = await startWindow(world, 'window-b', [], { noticeGraceMs: GRACE_MS });
    // A third window finishes a task and goes away before claiming its notice (as if it crashed).
    const gone = await TaskStore.open({ directory: world.storageDir, clock: systemClock, watch: false });
    await gone.mutate((tx) => {
      tx.tasks.insert({
        id: 'orphan-result',
        title: 'orphan',
        prompt: 'p',
        permissionMode: 'plan',
        workspacePath: world.root,
        serverTicketId: 'tk-orphan',
        schedulable: true,
      });
      tx.tasks.claim('orphan-result', {});
      tx.tasks.markRunning('orphan-result', { sessionId: 's' });
      tx.tasks.fail('orphan-result', { failureReason: 'the agent exited with code 1' });
    });
    await gone.close();
    await waitFor(() => a.notices.some((n) => n.taskId === 'orphan-result') || undefined, 'the lease holder to notify', 20_000);
    await graceOver(a, b);
    assert.deepEqual(ofTask(a.notices, 'orphan-result'), ['failed']);
    assert.deepEqual(ofTask(b.notices, 'orphan-result'), [], 'a window that neither ran it nor holds the lease stays quiet');
  });

  it('a result that finished while no window was open is not notified when windows open; it keeps its unseen mark', async () => {
    const before = await TaskStore.open({ directory: world.storageDir, clock: systemClock, watch: false });
    await before.mutate((tx) => {
      tx.tasks.insert({
        id: 'while-away',
        title: 'away',
        prompt: 'p',
        permissionMode: 'plan',
        workspacePath: world.root,
        serverTicketId: 'tk-away',
        schedulable: true,
      });
      tx.tasks.claim('while-away', {});
      tx.tasks.markRunning('while-away', { sessionId: 's' });
      tx.tasks.complete('while-away', {});
    });
    await before.close();
    const a = await startWindow(world, 'window-a', [], { noticeGraceMs: GRACE_MS });
    const b = await startWindow(world, 'window-b', [], { noticeGraceMs: GRACE_MS });
    assert.equal(a.engine.service.isLeader, true);
    await graceOver(a, b);
    assert.deepEqual([...a.notices, ...b.notices], [], 'no toast for it in any window');
    assert.deepEqual(
      a.engine.store.read((tx) => [tx.outcomes.notifiedBy('while-away'), tx.outcomes.unseen()]),
      [null, ['while-away']],
    );
  });

  it('a permission question is notified once, in the window whose agent asks', async () => {
    const a = await startWindow(world, 'window-a', [], { noticeGraceMs: GRACE_MS });
    const ws = makeGitWorkspace(world.root, 'ws-ask');
    const b = await startWindow(world, 'window-b', [ws], { noticeGraceMs: GRACE_MS });
    await a.engine.service.availability.refresh();
    // "Ask before edits and commands": the DEMO model's `node --version` needs an answer.
    const task = await a.engine.service.create({
      title: 'ask',
      prompt: 'Check the node version.',
      permissionMode: 'default',
      workspacePath: ws,
    });
    const asked = await waitFor(
      () => b.notices.find((n) => n.taskId === task.id && n.kind === 'input-needed'),
      'the question in window B',
      60_000,
    );
    assert.equal(asked.kind, 'input-needed');
    assert.equal(
      asked.kind === 'input-needed' && (await b.engine.questions.answerAsk(task.id, asked.ask.id, 'deny', asked.ask.inputDigest)),
      'accepted',
    );
    await a.engine.service.cancel(task.id);
    await graceOver(a, b);
    assert.deepEqual(ofTask(b.notices, task.id), ['input-needed']);
    assert.deepEqual(ofTask(a.notices, task.id), []);
  });
});
