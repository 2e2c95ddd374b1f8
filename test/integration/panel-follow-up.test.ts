// "Follow up…" and "Open session" through the webview protocol (docs/flows.md#follow-up): the
// host's PanelController and the webview's HostChannel over a real MessageChannel, the real
// TaskService on a real sql.js file and the real reference gateway on loopback.
import assert from 'node:assert/strict';
import { createServiceBackend } from '../../src/panel/service-backend';
import { BARE_HOST, connect, NO_ASKS, PANEL_WORKSPACE } from './panel-link';
import { World } from './service-harness';

const SESSION = '0f7d2c1e-8b8a-4b8e-9a53-2f1a2b3c4d5e';

describe('webview protocol: Follow up… and Open session', () => {
  let world: World;
  let link: ReturnType<typeof connect>;

  beforeEach(async () => {
    world = await World.start();
    await world.openWindow();
    link = connect({
      service: world.windows[0].service,
      store: world.windows[0].store,
      clock: world.clock,
      hasApiKey: () => world.apiKey !== undefined,
    });
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
  });
  afterEach(async () => {
    link.close();
    await world.close();
  });

  /** A task that ran with `agent` and finished (written as the runtime writes it: no agent runs in this world). */
  async function finishedTask(permissionMode: 'plan' | 'bypassPermissions'): Promise<string> {
    const { service, store } = world.windows[0];
    const task = await service.create({ title: 'the first', prompt: 'p', workspacePath: PANEL_WORKSPACE, permissionMode });
    await world.promote();
    await world.advance(60_000);
    for (let i = 0; i < 400 && !service.getTask(task.id)?.schedulable; i++) await new Promise((r) => setTimeout(r, 5));
    await store.mutate((tx) => {
      tx.tasks.claim(task.id, {});
      tx.runtime.recordFirstStart({ taskId: task.id, agent: 'reference', baseCommit: null });
      tx.tasks.markRunning(task.id, { sessionId: SESSION });
      return tx.tasks.complete(task.id, { filesChanged: 0 });
    });
    assert.equal(service.getTask(task.id)?.status, 'completed');
    return task.id;
  }

  it('queues a linked follow-up in the same folder, with another permission mode when asked; Bypass asks first and a decline spends nothing', async () => {
    const firstId = await finishedTask('plan');
    const takes = world.takeRequests();
    link.host.confirmAnswers.push(false);
    assert.deepEqual(
      await link.webview.channel.request('followUp', { taskId: firstId, prompt: 'now do it', permissionMode: 'bypassPermissions' }),
      { taskId: null },
    );
    assert.equal(world.takeRequests(), takes, 'declined: no ticket taken');

    const { taskId } = await link.webview.channel.request('followUp', {
      taskId: firstId,
      prompt: 'now do it\nin detail',
      permissionMode: 'acceptEdits',
    });
    assert.ok(taskId);
    const follow = world.windows[0].service.getTask(taskId)!;
    assert.deepEqual(
      [follow.workspacePath, follow.permissionMode, follow.title, follow.status],
      [PANEL_WORKSPACE, 'acceptEdits', 'Follow-up: now do it', 'queued'],
    );
    assert.equal(world.takeRequests(), takes + 1, 'its own ticket');
    const card = await (async () => {
      for (let i = 0; i < 400; i++) {
        const c = link.webview.states.at(-1)?.tasks.find((t) => t.id === taskId);
        if (c) return c;
        await new Promise((r) => setTimeout(r, 5));
      }
      throw new Error('no card for the follow-up');
    })();
    assert.deepEqual([card.followUpOfId, card.followUpOfTitle], [firstId, 'the first']);

    // One follow-up of a session at a time: the second is refused with the reason, nothing taken.
    await assert.rejects(link.webview.channel.request('followUp', { taskId: firstId, prompt: 'again' }), /already continues this session/);
    assert.equal(world.takeRequests(), takes + 1);
  });

  it('refuses a follow-up of an unfinished task, and empty or malformed instructions, with a clear error', async () => {
    const { service } = world.windows[0];
    const queued = await service.create({ title: 'q', prompt: 'p', workspacePath: PANEL_WORKSPACE, permissionMode: 'plan' });
    await assert.rejects(
      link.webview.channel.request('followUp', { taskId: queued.id, prompt: 'more' }),
      /Cannot follow up "q" yet: it is queued/,
    );
    await assert.rejects(link.webview.channel.request('followUp', { taskId: queued.id, prompt: '' }), /Invalid request/);
    await assert.rejects(
      link.webview.channel.request('followUp', { taskId: queued.id, prompt: 'x', permissionMode: 'yolo' } as never),
      /Invalid request/,
    );
  });

  it("refuses a follow-up while the user's own Claude Code runs on the session in a terminal of this window, and takes no ticket", async () => {
    const firstId = await finishedTask('plan');
    const { service, store } = world.windows[0];
    const open = new Set([SESSION]);
    const backend = createServiceBackend(service, store, { ...BARE_HOST, sessionInUseHere: (sessionId) => open.has(sessionId) }, NO_ASKS);
    const takes = world.takeRequests();
    await assert.rejects(backend.followUp({ taskId: firstId, prompt: 'more' }), /close it first/);
    assert.equal(world.takeRequests(), takes);
    open.clear(); // the terminal was closed
    assert.ok((await backend.followUp({ taskId: firstId, prompt: 'more' })).taskId);
  });

  it('Open session without a host terminal for sessions shows the task terminal (the transcript)', async () => {
    const firstId = await finishedTask('plan');
    assert.deepEqual(await link.webview.channel.request('openSession', { taskId: firstId }), { opened: 'transcript' });
    await assert.rejects(link.webview.channel.request('openSession', { taskId: 'gone' }), /no longer exists/);
  });
});
