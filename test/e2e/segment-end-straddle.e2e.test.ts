// Trust II (issue 17) item 3 end to end: the real engine (sync, runtime, ticket proxy), the real
// reference agent and the real gateway with a short active window; the scripted upstream (a test
// fixture) answers the segment's last model request only after the window ended. The request was
// admitted before active_until, so the agent finishes: the task, its ledger and its settle say
// completed, whatever the sync saw meanwhile (docs/flows.md#segments).
import assert from 'node:assert/strict';
import path from 'node:path';
import type { HostEngine } from '../../src/engine/host-engine';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { startTestEngine, waitFor } from './test-engine';

describe('a segment whose last model request straddles its end (real engine end to end)', function () {
  this.timeout(120_000);
  let world: GatewayWorld;
  let engine: HostEngine | undefined;

  afterEach(async () => {
    await engine?.dispose();
    await world.close();
  });

  it('item 3: the request admitted before active_until and answered after it completes the task: ledger end reason and settle reason say completed, not expired', async () => {
    world = await startWorld({ activeWindowMs: 3_000 });
    const ws = makeGitWorkspace(world.root);
    world.upstream.enqueue({ kind: 'text', text: 'Finished just after the segment ended.', delayMs: 7_000 });
    engine = await startTestEngine({
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
    });
    await engine.service.availability.refresh();
    const task = await engine.service.create({ title: 'straddle', prompt: 'one long answer', permissionMode: 'plan', workspacePath: ws });

    // While the answer is still on its way, the sync learns that the ticket's active window ended.
    const ticketId = await waitFor(
      () => {
        const t = engine!.service.getTask(task.id);
        const row = t?.serverTicketId ? engine!.service.ticketsOf(task.id).find((r) => r.ticketId === t.serverTicketId) : undefined;
        return t?.status === 'running' && row && ['expired', 'settled'].includes(row.serverState) ? row.ticketId : undefined;
      },
      'the sync to see the ticket end while the task runs',
      30_000,
    );
    assert.equal(world.upstream.messageRequests().filter((r) => r.completed).length, 0, 'the answer had not arrived yet');

    const done = await waitFor(
      () => {
        const t = engine!.service.getTask(task.id);
        return t && ['completed', 'failed', 'cancelled'].includes(t.status) ? t : undefined;
      },
      'the task to finish',
      60_000,
    );
    assert.equal(done.status, 'completed', done.failureReason ?? '');
    await waitFor(() => engine!.service.ticketsOf(task.id).every((r) => r.settleState === 'settled'), 'the ticket settled', 30_000);
    const tickets = engine.service.ticketsOf(task.id);
    assert.deepEqual(
      tickets.map((r) => [r.ticketId, r.endReason, r.settleReason]),
      [[ticketId, 'completed', 'completed']],
      'one ticket, ended and settled as completed',
    );
    assert.equal(engine.service.history()[0].status, 'succeeded');
  });
});
