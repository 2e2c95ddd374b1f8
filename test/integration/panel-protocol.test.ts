// The webview protocol end to end in Node: the host's PanelController and the webview's
// HostChannel talk over a real MessageChannel; behind the controller is the real TaskService on a
// real sql.js file and the real reference gateway on loopback (the service test world).
import assert from 'node:assert/strict';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { PanelController } from '../../src/panel/panel-controller';
import { createServiceBackend } from '../../src/panel/service-backend';
import type { HostToWebview, PanelState } from '../../src/protocol/webview';
import { HostChannel } from '../../webview/host-channel';
import { World } from './service-harness';

interface Webview {
  channel: HostChannel;
  states: PanelState[];
  received: HostToWebview[];
  focusForms: number;
  raw: MessagePort;
}

function connect(world: World): { controller: PanelController; webview: Webview; close(): void } {
  const { port1, port2 } = new MessageChannel();
  const w = world.windows[0];
  const backend = createServiceBackend(w.service, w.store, {
    hasApiKey: async () => world.apiKey !== undefined,
    setApiKey: async () => undefined,
    workspaces: () => [{ name: 'ws-a', path: '/tmp/ws-a' }],
    models: () => ['claude-sonnet-4-5'],
    openTerminal: async () => undefined,
    notice: () => undefined,
  });
  const controller = new PanelController(
    {
      postMessage: (m) => port1.postMessage(m),
      onDidReceiveMessage: (listener) => {
        const l = (data: unknown) => listener(data);
        port1.on('message', l);
        return { dispose: () => port1.off('message', l) };
      },
    },
    backend,
    world.clock,
  );
  const webview: Webview = { states: [], received: [], focusForms: 0, raw: port2, channel: undefined as unknown as HostChannel };
  webview.channel = new HostChannel(
    { postMessage: (m) => port2.postMessage(m) },
    {
      onState: (s) => webview.states.push(s),
      onFocusForm: () => webview.focusForms++,
      onInvalidMessage: () => undefined,
    },
  );
  port2.on('message', (data) => {
    webview.received.push(data as HostToWebview);
    webview.channel.receive(data);
  });
  return {
    controller,
    webview,
    close() {
      controller.dispose();
      port1.close();
      port2.close();
    },
  };
}

async function until<T>(what: string, fn: () => T | undefined): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const lastState = (w: Webview) => w.states[w.states.length - 1];

describe('webview protocol (host controller <-> webview channel over a MessageChannel)', () => {
  let world: World;
  let link: ReturnType<typeof connect>;

  beforeEach(async () => {
    world = await World.start();
    await world.openWindow();
    link = connect(world);
  });
  afterEach(async () => {
    link.close();
    await world.close();
  });

  it('posts nothing before ready, then one snapshot and the held messages', async () => {
    link.controller.post({ type: 'focusForm' });
    link.controller.schedulePush();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(link.webview.received.length, 0, 'nothing may reach a webview that is not ready');
    link.webview.channel.ready();
    await until('first snapshot', () => link.webview.states.length === 1);
    await until('held focusForm', () => link.webview.focusForms === 1);
    assert.equal(link.webview.received[0].type, 'state', 'the snapshot comes first');
    assert.deepEqual(lastState(link.webview).tasks, []);
    assert.equal(lastState(link.webview).hasApiKey, true);
  });

  it('creates a task on the real gateway and shows its card moving from the queue to ready', async () => {
    link.webview.channel.ready();
    await until('first snapshot', () => link.webview.states.length >= 1);
    await world.windows[0].service.availability.refresh();
    await link.webview.channel.request({
      type: 'createTask',
      input: { title: 'Refactor', prompt: 'Split the module', workspacePath: '/tmp/ws-a', permissionMode: 'acceptEdits', model: null, thoughtLevel: null },
    });
    const queued = await until('card in queue', () => lastState(link.webview)?.tasks.find((t) => t.title === 'Refactor'));
    assert.equal(queued.phase, 'in_queue');
    assert.equal(queued.queuePosition, 1);
    assert.deepEqual(queued.actions, { pause: true, continue: false, edit: true, cancel: true, delete: true });
    assert.equal(world.takeRequests(), 1, 'exactly one take reached the gateway');

    await world.promote();
    // The service polls when the ticket's next poll time comes (the gateway's hint), not before.
    await world.advance(60_000);
    const ready = await until('card ready', () => lastState(link.webview)?.tasks.find((t) => t.id === queued.id && t.phase === 'ready'));
    assert.equal(ready.status, 'queued');
    const versions = link.webview.states.map((s) => s.version);
    assert.deepEqual(versions, [...versions].sort((a, b) => a - b), 'snapshot versions only grow');
  });

  it('pause, continue, cancel, delete and History removal round-trip to the store', async () => {
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
    const task = await world.windows[0].service.create({ title: 'T', prompt: 'p', permissionMode: 'plan', workspacePath: '/tmp/ws-a' });
    await link.webview.channel.request({ type: 'pause', taskId: task.id });
    assert.equal(world.windows[0].service.getTask(task.id)?.status, 'paused');
    await until('paused card', () => lastState(link.webview)?.tasks.find((t) => t.id === task.id && t.phase === 'paused'));
    await link.webview.channel.request({ type: 'continue', taskId: task.id });
    assert.equal(world.windows[0].service.getTask(task.id)?.status, 'queued');
    await link.webview.channel.request({ type: 'cancel', taskId: task.id });
    assert.equal(world.windows[0].service.getTask(task.id)?.status, 'cancelled');
    const cancelled = await until('cancelled card', () => lastState(link.webview)?.tasks.find((t) => t.id === task.id && t.phase === 'cancelled'));
    assert.equal(cancelled.actions.cancel, false);
    await link.webview.channel.request({ type: 'delete', taskId: task.id });
    assert.equal(world.windows[0].service.getTask(task.id), undefined);
    await until('card gone', () => lastState(link.webview) && !lastState(link.webview).tasks.some((t) => t.id === task.id));
  });

  it('refuses an edit the service refuses, with the service error as the result', async () => {
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
    const task = await world.windows[0].service.create({ title: 'T', prompt: 'p', permissionMode: 'plan', workspacePath: '/tmp/ws-a' });
    await world.windows[0].service.cancel(task.id);
    await assert.rejects(link.webview.channel.request({ type: 'editTask', taskId: task.id, patch: { prompt: 'changed' } }), /./);
    assert.equal(world.windows[0].service.getTask(task.id)?.prompt, 'p', 'a terminal task keeps its prompt');
  });

  it('answers malformed and hostile messages with a clear error and changes nothing', async () => {
    link.webview.channel.ready();
    await until('first snapshot', () => link.webview.states.length >= 1);
    const hostile: unknown[] = [
      null,
      'ready',
      42,
      { type: 'nope', requestId: 'x1' },
      { type: 'pause', requestId: 'x2' },
      { type: 'pause', requestId: 'x3', taskId: 17 },
      { type: 'createTask', requestId: 'x4', input: { prompt: '', workspacePath: '/tmp/ws-a', permissionMode: 'plan', title: '', model: null, thoughtLevel: null } },
      { type: 'createTask', requestId: 'x5', input: { prompt: 'x', workspacePath: '/tmp/ws-a', permissionMode: 'rm -rf /', title: '', model: null, thoughtLevel: null } },
      { type: 'editTask', requestId: 'x6', taskId: 't', patch: { workspacePath: '/elsewhere' } },
      { type: 'createTask', requestId: 'x7', input: { prompt: 'x'.repeat(200_001), workspacePath: '/tmp/ws-a', permissionMode: 'plan', title: '', model: null, thoughtLevel: null } },
      { type: 'pause', requestId: 'x8', taskId: 'no-such-task' },
    ];
    for (const m of hostile) link.webview.raw.postMessage(m);
    const results = await until('results for every message with a request id', () => {
      const r = link.webview.received.filter((m): m is Extract<HostToWebview, { type: 'result' }> => m.type === 'result');
      return r.length >= 8 ? r : undefined;
    });
    const byId = new Map(results.map((r) => [r.requestId, r]));
    for (const id of ['x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8']) {
      const r = byId.get(id);
      assert.ok(r, `an answer for ${id}`);
      assert.equal(r.ok, false, `${id} must be refused`);
      assert.ok(r.error && r.error.length > 5, `${id} carries a readable error`);
    }
    assert.match(byId.get('x4')!.error!, /prompt/i);
    assert.match(byId.get('x6')!.error!, /workspacePath|Unrecognized/i);
    assert.equal(world.windows[0].service.listTasks().length, 0, 'nothing was created');
    assert.equal(world.takeRequests(), 0, 'nothing reached the gateway');
  });

  it('the webview ignores a snapshot older than the one it shows', async () => {
    const shown: number[] = [];
    const channel = new HostChannel({ postMessage: () => undefined }, { onState: (s) => shown.push(s.version), onFocusForm: () => undefined, onInvalidMessage: () => undefined });
    const snapshot = await link.controller.snapshot();
    channel.receive({ type: 'state', state: { ...snapshot, version: 5 } });
    channel.receive({ type: 'state', state: { ...snapshot, version: 4 } });
    channel.receive({ type: 'state', state: { ...snapshot, version: 6 } });
    assert.deepEqual(shown, [5, 6]);
  });
});
