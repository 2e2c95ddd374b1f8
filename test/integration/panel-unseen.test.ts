// Unseen results through the webview protocol: two windows (two TaskServices, each with its own
// store on ONE DB file) with a panel each, over real MessageChannels, against the real reference
// gateway. A finished task is marked unseen on its card in every window until a panel reports it
// shown (markSeen); then the mark goes in both.
import assert from 'node:assert/strict';
import type { PanelState } from '../../src/protocol/webview';
import { connect, PANEL_WORKSPACE } from './panel-link';
import { World } from './service-harness';

async function until<T>(what: string, fn: () => T | undefined | false): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const cardOf = (states: PanelState[], taskId: string) => states[states.length - 1]?.tasks.find((t) => t.id === taskId);

describe('unseen results on the cards (two windows, a panel each, over MessageChannels)', () => {
  let world: World;
  let links: ReturnType<typeof connect>[];

  beforeEach(async () => {
    world = await World.start();
    await world.openWindow('window-a');
    await world.openWindow('window-b');
    links = world.windows.map((w) => connect({ service: w.service, store: w.store, clock: world.clock, hasApiKey: () => true }));
    for (const l of links) l.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
  });
  afterEach(async () => {
    for (const l of links) l.close();
    await world.close();
  });

  async function createTask(title: string): Promise<string> {
    const task = await world.windows[0].service.create({
      title,
      prompt: `do ${title}`,
      permissionMode: 'plan',
      workspacePath: PANEL_WORKSPACE,
    });
    return task.id;
  }

  /** Window B's store takes in window A's writes (the file watcher's job in the extension). */
  const reloadB = () => world.windows[1].store.checkForExternalChange();

  it('a failed task is unseen in both windows until one panel shows it; then the mark goes in both', async () => {
    const id = await createTask('fails');
    assert.equal(await world.windows[0].service.lifecycle.fail(id, { failureReason: 'the workspace folder no longer exists' }), true);
    reloadB();
    const [a, b] = links;
    await until('unseen card in window A', () => cardOf(a.webview.states, id)?.unseen);
    await until('unseen card in window B', () => cardOf(b.webview.states, id)?.unseen);

    assert.deepEqual(await b.webview.channel.request('markSeen', { taskIds: [id] }), { marked: 1 });
    await until('the mark gone in window B', () => cardOf(b.webview.states, id)?.unseen === false);
    world.windows[0].store.checkForExternalChange();
    await until('the mark gone in window A', () => cardOf(a.webview.states, id)?.unseen === false);
    assert.deepEqual(await a.webview.channel.request('markSeen', { taskIds: [id] }), { marked: 0 }, 'already seen: nothing left to mark');
  });

  it('item 7: one rule for seen: a result shown in the open panel stays "New" (and counted) until the panel is hidden, then goes everywhere', async () => {
    const id = await createTask('shown');
    assert.equal(await world.windows[0].service.lifecycle.fail(id, { failureReason: 'the workspace folder no longer exists' }), true);
    const [a] = links;
    await until('unseen card in window A', () => cardOf(a.webview.states, id)?.unseen);
    assert.deepEqual(await a.webview.channel.request('showing', { taskIds: [id] }), { held: 1 });
    // While the panel is open the card keeps its mark, and the store (the status bar's count) agrees.
    assert.equal((await a.controller.snapshot()).tasks.find((t) => t.id === id)?.unseen, true);
    assert.deepEqual(
      world.windows[0].store.read((tx) => tx.outcomes.unseen()),
      [id],
    );
    const lookedAt = world.clock.now();
    a.setVisible(false);
    await until('seen in the store once the panel is hidden', () => world.windows[0].store.read((tx) => tx.outcomes.unseen()).length === 0);
    await until('the mark gone from the card', () => cardOf(a.webview.states, id)?.unseen === false);
    assert.ok((await a.controller.snapshot()).lastSeenAt! >= lookedAt, 'the summary\'s "Since" moves to when the user looked');
  });

  it('item 7: a panel closed while showing a result marks it seen', async () => {
    const id = await createTask('closed');
    assert.equal(await world.windows[0].service.lifecycle.fail(id, { failureReason: 'gone' }), true);
    await links[0].webview.channel.request('showing', { taskIds: [id] });
    links[0].controller.dispose();
    await until('seen once the panel closed', () => world.windows[0].store.read((tx) => tx.outcomes.unseen()).length === 0);
  });

  it('queued and cancelled tasks are never marked unseen, and marking them changes nothing', async () => {
    const queued = await createTask('waits');
    const cancelled = await createTask('stopped');
    await world.windows[0].service.cancel(cancelled);
    const [a] = links;
    await until('both cards', () => cardOf(a.webview.states, queued) && cardOf(a.webview.states, cancelled)?.status === 'cancelled');
    assert.equal(cardOf(a.webview.states, queued)?.unseen, false);
    assert.equal(cardOf(a.webview.states, cancelled)?.unseen, false);
    assert.deepEqual(await a.webview.channel.request('markSeen', { taskIds: [queued, cancelled, 'no-such-task'] }), { marked: 0 });
  });

  it('refuses a markSeen without task ids with a clear error', async () => {
    await assert.rejects(links[0].webview.channel.request('markSeen', { taskIds: [] }), /Invalid request: taskIds/);
  });
});
