// A card's Edit moves a "not before" time (docs/flows.md#schedules-and-chains) through the webview
// protocol: the host's PanelController and the webview's HostChannel over a real MessageChannel, the
// real TaskService on a real sql.js file and the real reference gateway on loopback, one manual clock.
import assert from 'node:assert/strict';
import { connect, PANEL_WORKSPACE } from './panel-link';
import { World } from './service-harness';

const HOUR = 3_600_000;

describe('webview protocol: Edit moves a task\'s "not before" time', () => {
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

  async function cardOf(taskId: string, ok: (card: { notBefore?: number; scheduledFor?: string }) => boolean) {
    for (let i = 0; i < 400; i++) {
      const card = link.webview.states.at(-1)?.tasks.find((t) => t.id === taskId);
      if (card && ok(card)) return card;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(
      `no snapshot with the card as expected: ${JSON.stringify(link.webview.states.at(-1)?.tasks.find((t) => t.id === taskId))}`,
    );
  }

  it('the card carries its time for the form; a moved time is stored and shown; cleared, the task takes its ticket now', async () => {
    const { service } = world.windows[0];
    const at = world.clock.now() + 5 * HOUR;
    const task = await service.create({
      title: 'later',
      prompt: 'p',
      workspacePath: PANEL_WORKSPACE,
      permissionMode: 'plan',
      notBefore: at,
    });
    const takes = world.takeRequests();
    const card = await cardOf(task.id, (c) => c.notBefore === at);
    assert.ok(card.scheduledFor, 'it says when');

    const moved = at + 2 * HOUR;
    await link.webview.channel.request('editTask', { taskId: task.id, patch: { prompt: 'p2', notBefore: moved } });
    assert.equal(service.getTask(task.id)?.notBefore, moved);
    assert.equal(service.getTask(task.id)?.prompt, 'p2');
    await cardOf(task.id, (c) => c.notBefore === moved);
    assert.equal(world.takeRequests(), takes, 'moving the time takes nothing');

    await link.webview.channel.request('editTask', { taskId: task.id, patch: { notBefore: null } });
    assert.equal(service.getTask(task.id)?.notBefore, null);
    await world.advance(1_000);
    for (let i = 0; i < 400 && !service.getTask(task.id)?.serverTicketId; i++) await new Promise((r) => setTimeout(r, 5));
    assert.ok(service.getTask(task.id)?.serverTicketId, 'cleared: its ticket is taken now');
    assert.equal(world.takeRequests(), takes + 1);
    await cardOf(task.id, (c) => c.notBefore === undefined && c.scheduledFor === undefined);

    await assert.rejects(
      link.webview.channel.request('editTask', { taskId: task.id, patch: { notBefore: at } }),
      /ticket was taken meanwhile/,
    );
  });

  it('a malformed time is refused by the protocol and changes nothing', async () => {
    const { service } = world.windows[0];
    const at = world.clock.now() + 5 * HOUR;
    const task = await service.create({
      title: 'later',
      prompt: 'p',
      workspacePath: PANEL_WORKSPACE,
      permissionMode: 'plan',
      notBefore: at,
    });
    await assert.rejects(link.webview.channel.request('editTask', { taskId: task.id, patch: { notBefore: -5 } as never }));
    await assert.rejects(link.webview.channel.request('editTask', { taskId: task.id, patch: { notBefore: 'tomorrow' } as never }));
    assert.equal(service.getTask(task.id)?.notBefore, at);
  });
});
