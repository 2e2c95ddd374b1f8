// The webview protocol end to end in Node: the host's PanelController and the webview's
// HostChannel talk over a real MessageChannel; behind the controller is the real TaskService on a
// real sql.js file and the real reference gateway on loopback (the service test world).
import assert from 'node:assert/strict';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { PanelController } from '../../src/panel/panel-controller';
import type { Confirmation } from '../../src/panel/confirmations';
import { createServiceBackend, type PanelClientConfigs } from '../../src/panel/service-backend';
import type { HostToWebview, PanelState } from '../../src/protocol/webview';
import { HostChannel } from '../../webview/host-channel';
import { World } from './service-harness';

interface Host {
  /** Answers for the next confirmation dialogs, in order (true = the user chose the action). */
  confirmAnswers: boolean[];
  asked: Confirmation[];
  configs: PanelClientConfigs | undefined;
  configLoads: number;
}

interface Webview {
  channel: HostChannel;
  states: PanelState[];
  received: HostToWebview[];
  focusForms: number;
  raw: MessagePort;
}

function connect(world: World): { controller: PanelController; webview: Webview; host: Host; close(): void } {
  const { port1, port2 } = new MessageChannel();
  const w = world.windows[0];
  const host: Host = { confirmAnswers: [], asked: [], configs: undefined, configLoads: 0 };
  const backend = createServiceBackend(w.service, w.store, {
    hasApiKey: async () => world.apiKey !== undefined,
    setApiKey: async () => undefined,
    workspaces: () => [{ name: 'ws-a', path: '/tmp/ws-a', identity: 'vscode-remote://ssh-remote+box/tmp/ws-a' }],
    models: () => ['claude-sonnet-4-5'],
    configs: () => host.configs,
    reloadConfigs: async () => host.configLoads++,
    openTerminal: async () => undefined,
    confirm: async (question) => {
      host.asked.push(question);
      const answer = host.confirmAnswers.shift();
      assert.ok(answer !== undefined, `an unexpected confirmation: ${question.message}`);
      return answer;
    },
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
    host,
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
    const created = await link.webview.channel.request('createTask', {
      input: { title: 'Refactor', prompt: 'Split the module', workspacePath: '/tmp/ws-a', permissionMode: 'acceptEdits', model: null, thoughtLevel: null },
    });
    const queued = await until('card in queue', () => lastState(link.webview)?.tasks.find((t) => t.title === 'Refactor'));
    assert.equal(created.taskId, queued.id, 'the result names the new task');
    assert.equal(
      world.windows[0].service.getTask(queued.id)?.workspaceIdentity,
      'vscode-remote://ssh-remote+box/tmp/ws-a',
      "a task created from the panel carries its folder's identity (from the host, not the webview)",
    );
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

  it('pause, continue (with its result), cancel and delete round-trip to the store, each asking first', async () => {
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
    const task = await world.windows[0].service.create({ title: 'T', prompt: 'p', permissionMode: 'plan', workspacePath: '/tmp/ws-a' });
    assert.deepEqual(await link.webview.channel.request('pause', { taskId: task.id }), {});
    assert.equal(world.windows[0].service.getTask(task.id)?.status, 'paused');
    const paused = await until('paused card', () => lastState(link.webview)?.tasks.find((t) => t.id === task.id && t.phase === 'paused'));
    assert.equal(paused.queuePosition, 1, 'a paused card keeps its queue position');
    assert.deepEqual(await link.webview.channel.request('continue', { taskId: task.id }), { ticket: 'reused' }, "continue's outcome reaches the webview");
    assert.equal(world.windows[0].service.getTask(task.id)?.status, 'queued');

    link.host.confirmAnswers.push(false);
    assert.deepEqual(await link.webview.channel.request('cancel', { taskId: task.id }), { done: false });
    assert.equal(world.windows[0].service.getTask(task.id)?.status, 'queued', 'a declined cancel changes nothing');
    assert.match(link.host.asked[0].detail, /leaves the gateway queue/);
    link.host.confirmAnswers.push(true);
    assert.deepEqual(await link.webview.channel.request('cancel', { taskId: task.id }), { done: true });
    assert.equal(world.windows[0].service.getTask(task.id)?.status, 'cancelled');
    const cancelled = await until('cancelled card', () => lastState(link.webview)?.tasks.find((t) => t.id === task.id && t.phase === 'cancelled'));
    assert.equal(cancelled.actions.cancel, false);
    // Delete of a finished task asks nothing (confirmAnswers is empty: a question would fail the test).
    assert.deepEqual(await link.webview.channel.request('delete', { taskId: task.id }), { done: true });
    assert.equal(world.windows[0].service.getTask(task.id), undefined);
    await until('card gone', () => lastState(link.webview) && !lastState(link.webview).tasks.some((t) => t.id === task.id));
    assert.equal(link.host.asked.length, 2);
  });

  it('delete of a queued task asks, and a declined delete keeps the task and its ticket', async () => {
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
    const task = await world.windows[0].service.create({ title: 'Q', prompt: 'p', permissionMode: 'plan', workspacePath: '/tmp/ws-a' });
    link.host.confirmAnswers.push(false, true);
    assert.deepEqual(await link.webview.channel.request('delete', { taskId: task.id }), { done: false });
    assert.equal(world.windows[0].service.getTask(task.id)?.status, 'queued');
    assert.equal((await world.gatewayStates([task.serverTicketId!])).get(task.serverTicketId!), 'queued');
    assert.deepEqual(await link.webview.channel.request('delete', { taskId: task.id }), { done: true });
    assert.equal(world.windows[0].service.getTask(task.id), undefined);
    assert.match(link.host.asked[1].message, /^Delete "Q"\?/);
  });

  it('create with Bypass permissions asks first; declined, nothing reaches the gateway', async () => {
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
    const input = { title: '', prompt: 'p', workspacePath: '/tmp/ws-a', permissionMode: 'bypassPermissions' as const, model: null, thoughtLevel: null };
    link.host.confirmAnswers.push(false, true);
    assert.deepEqual(await link.webview.channel.request('createTask', { input }), { taskId: null });
    assert.equal(world.takeRequests(), 0);
    const { taskId } = await link.webview.channel.request('createTask', { input });
    assert.equal(world.windows[0].service.getTask(taskId!)?.permissionMode, 'bypassPermissions');
    assert.match(link.host.asked[0].detail, /never asks/);
  });

  it('an expanded card gets its segments from the ledger', async () => {
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
    const task = await world.windows[0].service.create({ title: 'S', prompt: 'p', permissionMode: 'plan', workspacePath: '/tmp/ws-a' });
    const { segments } = await link.webview.channel.request('segments', { taskId: task.id });
    assert.equal(segments.length, 1);
    assert.equal(segments[0].ticketId, task.serverTicketId);
    assert.equal(segments[0].ordinal, 1);
    assert.equal(segments[0].serverState, 'queued');
    assert.equal(segments[0].admittedAt, null);
    assert.equal(segments[0].endReason, null);
  });

  it('opening the panel re-checks availability and the client configs', async () => {
    const before = world.proxy.forwarded({ pathIncludes: '/ticket/availability' }).length;
    link.webview.channel.ready();
    await until('a config reload', () => link.host.configLoads === 1);
    await until('an availability check', () => world.proxy.forwarded({ pathIncludes: '/ticket/availability' }).length > before);
  });

  it('the exposure switch and the plan lock reach the snapshot', async () => {
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
    link.host.configs = { exposed: false, planEligible: true, upgradeHint: null, upgradeUrl: null };
    assert.equal((await link.controller.snapshot()).availability.kind, 'hidden');
    link.host.configs = { exposed: true, planEligible: false, upgradeHint: 'Upgrade to Coding', upgradeUrl: 'https://example.test/upgrade' };
    const locked = (await link.controller.snapshot()).availability;
    assert.deepEqual(
      { kind: locked.kind, canCreate: locked.canCreate, hint: locked.upgradeHint, url: locked.upgradeUrl },
      { kind: 'plan_locked', canCreate: false, hint: 'Upgrade to Coding', url: 'https://example.test/upgrade' },
    );
  });

  it('History removal answers whether the row was hidden', async () => {
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
    const task = await world.windows[0].service.create({ title: 'H', prompt: 'p', permissionMode: 'plan', workspacePath: '/tmp/ws-a' });
    assert.deepEqual(await link.webview.channel.request('deleteHistory', { taskId: task.id }), { hidden: false, reason: 'never_started' });
  });

  it('refuses an edit the service refuses, with the service error as the result', async () => {
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
    const task = await world.windows[0].service.create({ title: 'T', prompt: 'p', permissionMode: 'plan', workspacePath: '/tmp/ws-a' });
    await world.windows[0].service.cancel(task.id);
    await assert.rejects(link.webview.channel.request('editTask', { taskId: task.id, patch: { prompt: 'changed' } }), /./);
    assert.equal(world.windows[0].service.getTask(task.id)?.prompt, 'p', 'a terminal task keeps its prompt');
  });

  it('answers malformed and hostile messages with a clear error and changes nothing', async () => {
    link.webview.channel.ready();
    await until('first snapshot', () => link.webview.states.length >= 1);
    const hostile: unknown[] = [
      null,
      'ready',
      42,
      { type: 'request', method: 'nope', requestId: 'x1', params: {} },
      { type: 'request', method: 'pause', requestId: 'x2', params: {} },
      { type: 'request', method: 'pause', requestId: 'x3', params: { taskId: 17 } },
      { type: 'request', method: 'createTask', requestId: 'x4', params: { input: { prompt: '', workspacePath: '/tmp/ws-a', permissionMode: 'plan', title: '', model: null, thoughtLevel: null } } },
      { type: 'request', method: 'createTask', requestId: 'x5', params: { input: { prompt: 'x', workspacePath: '/tmp/ws-a', permissionMode: 'rm -rf /', title: '', model: null, thoughtLevel: null } } },
      { type: 'request', method: 'editTask', requestId: 'x6', params: { taskId: 't', patch: { workspacePath: '/elsewhere' } } },
      { type: 'request', method: 'createTask', requestId: 'x7', params: { input: { prompt: 'x'.repeat(200_001), workspacePath: '/tmp/ws-a', permissionMode: 'plan', title: '', model: null, thoughtLevel: null } } },
      { type: 'request', method: 'pause', requestId: 'x8', params: { taskId: 'no-such-task' } },
      { type: 'request', method: 'createTask', requestId: 'x9', params: { input: { prompt: 'x', workspacePath: '/tmp/ws-a', permissionMode: 'plan', title: '', model: null, thoughtLevel: null, workspaceIdentity: 'forged' } } },
    ];
    for (const m of hostile) link.webview.raw.postMessage(m);
    const results = await until('results for every message with a request id', () => {
      const r = link.webview.received.filter((m): m is Extract<HostToWebview, { type: 'result' }> => m.type === 'result');
      return r.length >= 9 ? r : undefined;
    });
    const byId = new Map(results.map((r) => [r.requestId, r]));
    const errors = new Map<string, string>();
    for (const id of ['x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8', 'x9']) {
      const r = byId.get(id);
      assert.ok(r, `an answer for ${id}`);
      assert.ok(r.ok === false, `${id} must be refused`);
      assert.ok(r.error.length > 5, `${id} carries a readable error`);
      errors.set(id, r.error);
    }
    assert.match(errors.get('x4')!, /prompt/i);
    assert.match(errors.get('x6')!, /workspacePath|Unrecognized/i);
    assert.match(errors.get('x9')!, /workspaceIdentity|Unrecognized/i);
    assert.equal(world.windows[0].service.listTasks().length, 0, 'nothing was created');
    assert.equal(world.takeRequests(), 0, 'nothing reached the gateway');
  });

  it("the webview rejects a result that does not match its method's result schema", async () => {
    const sent: { requestId: string }[] = [];
    const channel = new HostChannel({ postMessage: (m) => sent.push(m as { requestId: string }) }, { onState: () => undefined, onFocusForm: () => undefined, onInvalidMessage: () => undefined });
    const good = channel.request('continue', { taskId: 't1' });
    const bad = channel.request('continue', { taskId: 't2' });
    channel.receive({ type: 'result', requestId: sent[0].requestId, ok: true, result: { ticket: 'retake_pending', error: 'gateway down' } });
    channel.receive({ type: 'result', requestId: sent[1].requestId, ok: true, result: { ticket: 'maybe' } });
    assert.deepEqual(await good, { ticket: 'retake_pending', error: 'gateway down' });
    await assert.rejects(bad, /unexpected result/);
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
