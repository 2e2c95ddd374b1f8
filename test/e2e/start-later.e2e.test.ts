// "Not before" and "after <task>" with three windows on one globalStorage (docs/flows.md#schedules-and-chains):
// three HostEngines, each with its own store instance on ONE task DB as three VS Code windows are,
// on the real clock, in front of the REAL reference gateway (loopback) and the scripted fake model
// upstream (a fixture standing in for the model API); real reference-agent processes and real git.
import assert from 'node:assert/strict';
import path from 'node:path';
import type { HostEngine } from '../../src/engine/host-engine';
import type { RecordedRequest } from '../fixtures/fake-anthropic-upstream';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { waitFor } from './test-engine';
import { startWindow, type SharedStorage } from './two-windows';

const ENDED = ['completed', 'failed', 'cancelled'];

/** The task's prompt: the first user text of the conversation. */
function promptOf(request: RecordedRequest): string {
  const first = (request.body as { messages: { content: string | { type: string; text?: string }[] }[] }).messages[0]!.content;
  return typeof first === 'string' ? first : (first.find((c) => c.type === 'text')?.text ?? '');
}

describe('start later, three windows on one task DB (real gateway, reference agent processes)', function () {
  this.timeout(180_000);
  let world: GatewayWorld;
  let place: SharedStorage;

  beforeEach(async () => {
    world = await startWorld();
    place = {
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      engines: [] as HostEngine[],
    };
  });
  afterEach(async () => {
    for (const e of place.engines.splice(0)) await e.dispose();
    await world.close();
  });

  async function threeWindows(): Promise<HostEngine[]> {
    const windows: HostEngine[] = [];
    for (const id of ['window-1', 'window-2', 'window-3']) windows.push((await startWindow(place, id, [])).engine);
    assert.deepEqual(
      windows.map((w) => w.service.isLeader),
      [true, false, false],
      'one lease holder',
    );
    return windows;
  }

  it('"not before", queued in a window that does not hold the lease: no ticket until its time, then one ticket, taken at or after it, and the task completes', async () => {
    const [holder, , third] = await threeWindows();
    const ws = makeGitWorkspace(world.root, 'ws');
    for (let i = 0; i < 4; i++) world.upstream.enqueue({ kind: 'text', text: 'Done.' });
    const notBefore = Date.now() + 6_000;
    const task = await third!.service.create({ title: 'later', prompt: 'say hi', permissionMode: 'plan', workspacePath: ws, notBefore });
    assert.equal(task.serverTicketId, null, 'stored without a ticket');
    // Every window's view of the shared DB, until the time: still no ticket anywhere.
    while (Date.now() < notBefore - 1_500) {
      for (const w of place.engines) assert.equal(w.store.read((tx) => tx.tickets.forTask(task.id)).length, 0, 'no ticket before its time');
      await new Promise((r) => setTimeout(r, 500));
    }
    const done = await waitFor(
      () => {
        const t = holder!.service.getTask(task.id);
        return t && ENDED.includes(t.status) ? t : undefined;
      },
      'the task to end',
      90_000,
    );
    assert.equal(done.status, 'completed', done.failureReason ?? '');
    const ledger = holder!.store.read((tx) => tx.tickets.forTask(task.id));
    assert.equal(ledger.length, 1, 'one ticket, taken once across the three windows');
    assert.ok(ledger[0]!.takenAt >= notBefore, `taken at ${ledger[0]!.takenAt}, not before ${notBefore}`);
    assert.equal(holder!.service.history().filter((h) => h.taskId === task.id).length, 1, 'one History row');
  });

  it('A fails → B and C (each after the one before, in its branch) are skipped with the reason, take no ticket and never run', async () => {
    const [holder, second, third] = await threeWindows();
    const ws = makeGitWorkspace(world.root, 'repo');
    const prompts: string[] = [];
    for (let i = 0; i < 6; i++) {
      world.upstream.enqueue({
        kind: 'handler',
        handle: (request) => {
          prompts.push(promptOf(request));
          return promptOf(request) === 'step a'
            ? { kind: 'error', status: 400, message: 'scripted: this step cannot be done' }
            : { kind: 'text', text: 'Done.' };
        },
      });
    }
    const a = await holder!.service.create({
      title: 'A',
      prompt: 'step a',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      isolation: 'worktree',
    });
    const b = await second!.service.create({
      title: 'B',
      prompt: 'step b',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      afterTaskId: a.id,
      continueInBranch: true,
    });
    const c = await third!.service.create({
      title: 'C',
      prompt: 'step c',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      afterTaskId: b.id,
      continueInBranch: true,
    });
    await waitFor(() => [a, b, c].every((t) => ENDED.includes(holder!.service.getTask(t.id)!.status)), 'the chain to end', 120_000);

    const [ta, tb, tc] = [a, b, c].map((t) => holder!.service.getTask(t.id)!);
    assert.equal(ta!.status, 'failed');
    assert.equal(tb!.status, 'cancelled');
    assert.equal(tb!.failureReason, 'Skipped: A failed.');
    assert.equal(tc!.status, 'cancelled');
    assert.equal(tc!.failureReason, 'Skipped: A failed.', 'C names the step that broke the chain');
    for (const t of [tb, tc]) assert.equal(holder!.store.read((tx) => tx.tickets.forTask(t!.id)).length, 0, `${t!.title} took no ticket`);
    assert.deepEqual([...new Set(prompts)], ['step a'], 'only A ever reached the model');
  });
});
