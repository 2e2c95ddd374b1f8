// Cancel and Delete made in one window stop the agent another window runs. Two "windows" (two
// HostEngines with their own store instances on ONE globalStorage dir, as two VS Code windows
// are), the real gateway in demo mode whose DEMO model keeps the reference agent working through
// its tools (paced), and real agent processes. The lease holder (A) has no folder open; window B
// has the task's workspace, so the agent runs in B; the user acts in A.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';
import { systemClock } from '../../src/core/clock';
import { GatewayClient } from '../../src/gateway-client/client';
import { makeGitWorkspace, processAlive } from './gateway-fixture';
import { waitFor } from './test-engine';
import { startDemoWorld, startWindow, type DemoWorld } from './two-windows';

type Started = Extract<RuntimeEvent, { type: 'segment-started' }>;

describe('cross-window cancel and delete (two host engines on one globalStorage)', function () {
  this.timeout(120_000);
  let world: DemoWorld;

  /** Window A (lease holder, no folder) and window B (the workspace), and a task running in B. */
  async function taskRunningInB(title: string) {
    const { engine: a, events: eventsA } = await startWindow(world, 'window-a', []);
    assert.equal(a.service.isLeader, true);
    const ws = makeGitWorkspace(world.root, `ws-${title}`);
    const { engine: b, events: eventsB } = await startWindow(world, 'window-b', [ws]);
    await a.service.availability.refresh();
    const task = await a.service.create({
      title,
      prompt: 'Review this workspace and create notes.md.',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
    });
    const started = await waitFor(
      () => eventsB.find((e): e is Started => e.type === 'segment-started' && e.taskId === task.id),
      'the agent to start in window B',
      60_000,
    );
    // Working, not just launched: its first model call was admitted.
    await waitFor(() => eventsB.some((e) => e.type === 'admitted' && e.taskId === task.id), 'the first model call to be admitted', 30_000);
    assert.ok(processAlive(started.pid), 'the agent process runs');
    const proxyUrl = new URL(b.runtime.segment(task.id)!.agentRun!.proxy.baseUrl);
    assert.equal(proxyUrl.port, String(b.proxyListener.listeningPort), "the segment's proxy is on the window's one loopback listener");
    assert.ok(!eventsA.some((e) => e.type === 'segment-started'), 'nothing runs in window A');
    return { a, b, task, started, eventsB };
  }

  async function ticketStateOnGateway(ticketId: string): Promise<string> {
    const client = new GatewayClient({ baseUrl: world.gateway.gateway.url, apiKey: async () => world.apiKey, clock: systemClock });
    return (await client.status([ticketId])).tickets[0].state;
  }

  // The DEMO model paced so the agent keeps calling tools for many seconds, and a long segment,
  // so only the user's action ends this run.
  beforeEach(async () => (world = await startDemoWorld({ activeWindowMs: 120_000, demoStepMs: 1_000 })));
  afterEach(async () => world.close());

  it('Cancel in window A stops the agent running in window B: process gone, task cancelled, ticket settled, one History row', async () => {
    const { a, b, task, started, eventsB } = await taskRunningInB('cancel');
    await a.service.cancel(task.id);

    await waitFor(() => !processAlive(started.pid) || undefined, 'the agent process in window B to exit', 20_000);
    const ended = await waitFor(
      () => eventsB.find((e) => e.type === 'segment-ended' && e.taskId === task.id),
      "window B's segment to end",
      10_000,
    );
    assert.equal(ended.type === 'segment-ended' && ended.outcome.kind, 'cancelled', 'the segment closed as cancelled');
    assert.equal(b.service.getTask(task.id)?.status, 'cancelled');
    const ticket = await waitFor(
      () => {
        const t = a.service.ticketsOf(task.id).find((r) => r.ticketId === started.ticketId);
        return t?.settleState === 'settled' ? t : undefined;
      },
      'the ticket to be settled',
      20_000,
    );
    assert.equal(ticket.endReason, 'cancelled');
    assert.equal(a.service.ticketsOf(task.id).length, 1, 'one ticket, no retake after the cancel');
    assert.equal(await ticketStateOnGateway(started.ticketId), 'settled', 'the gateway released the ticket');
    assert.equal(a.service.history().filter((h) => h.taskId === task.id).length, 1, 'one History row');
    await waitFor(() => a.service.getTask(task.id)?.settledAt ?? undefined, 'the task to be marked settled', 10_000);
  });

  it('Delete (with its session) in window A stops the agent running in window B: process gone, task and its files gone, ticket settled and out of the ledger, no History row', async () => {
    const { a, b, task, started, eventsB } = await taskRunningInB('delete');
    assert.equal(await a.service.delete(task.id, { deleteSession: true }), true);

    await waitFor(() => !processAlive(started.pid) || undefined, 'the agent process in window B to exit', 20_000);
    const ended = await waitFor(
      () => eventsB.find((e) => e.type === 'segment-ended' && e.taskId === task.id),
      "window B's segment to end",
      10_000,
    );
    assert.equal(ended.type === 'segment-ended' && ended.outcome.kind, 'cancelled', 'stopped by the delete, not by a refused model call');
    assert.equal(b.service.getTask(task.id), undefined, 'the task row is gone in window B too');
    await waitFor(() => b.runtime.runningTaskIds.length === 0 || undefined, "window B's runtime to let the segment go", 10_000);
    // Settled, a deleted task's ticket leaves the ledger too (docs/flows.md#ticket-ledger).
    await waitFor(() => a.service.ticketsOf(task.id).length === 0 || undefined, 'the ticket to be settled and leave the ledger', 20_000);
    assert.equal(await ticketStateOnGateway(started.ticketId), 'settled', 'the gateway released the ticket');
    assert.equal(a.service.history().filter((h) => h.taskId === task.id).length, 0, 'no History row');
    // The agent wrote its session after window A removed it; window B removes it again once the agent stopped.
    const storage = world.storageDir;
    const transcript = path.join(storage, 'reference-agent-sessions', `${started.sessionId}.jsonl`);
    await waitFor(() => !fs.existsSync(transcript) || undefined, 'the session file to be removed', 10_000);
    await waitFor(() => !fs.existsSync(`${transcript}.delete`) || undefined, "window A's mark to be removed with it", 10_000);
    assert.equal(fs.existsSync(path.join(storage, 'runtime', 'tasks', task.id)), false, 'no segment directory left');
  });
});
