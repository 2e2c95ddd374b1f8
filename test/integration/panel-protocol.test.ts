// The webview protocol end to end in Node: the host's PanelController and the webview's
// HostChannel talk over a real MessageChannel; behind the controller is the real TaskService on a
// real sql.js file and the real reference gateway on loopback (the service test world).
import assert from 'node:assert/strict';
import type { HostToWebview } from '../../src/protocol/webview';
import { HostChannel } from '../../webview/host-channel';
import { AskBroker, type AskDecision } from '../../src/agent/questions/asks';
import { askInputDigest } from '../../src/core/ask-input';
import type { OffPeakTask } from '../../src/core/types';
import { cardAskOf } from '../../src/panel/task-card';
import type { PanelAskSource } from '../../src/panel/host-bits';
import { connect, PANEL_WORKSPACE, type Webview } from './panel-link';
import { World } from './service-harness';
import { HistoryArchive } from '../../src/service/history-archive';

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
    link = connect({
      service: world.windows[0].service,
      store: world.windows[0].store,
      clock: world.clock,
      hasApiKey: () => world.apiKey !== undefined,
    });
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
      input: {
        title: 'Refactor',
        prompt: 'Split the module',
        workspacePath: PANEL_WORKSPACE,
        permissionMode: 'acceptEdits',
        model: null,
        thoughtLevel: null,
      },
    });
    const queued = await until('card in queue', () => lastState(link.webview)?.tasks.find((t) => t.title === 'Refactor'));
    assert.equal(created.taskId, queued.id, 'the result names the new task');
    assert.equal(
      world.windows[0].service.getTask(queued.id)?.workspaceIdentity,
      `vscode-remote://ssh-remote+box${PANEL_WORKSPACE}`,
      "a task created from the panel carries its folder's identity (from the host, not the webview)",
    );
    assert.equal(queued.phase, 'in_queue');
    assert.equal(queued.queuePosition, 1);
    assert.deepEqual(queued.actions, {
      pause: true,
      continue: false,
      edit: true,
      cancel: true,
      delete: true,
      followUp: false,
      openSession: false,
    });
    assert.equal(world.takeRequests(), 1, 'exactly one take reached the gateway');

    await world.promote();
    // The service polls when the ticket's next poll time comes (the gateway's hint), not before.
    await world.advance(60_000);
    const ready = await until('card ready', () => lastState(link.webview)?.tasks.find((t) => t.id === queued.id && t.phase === 'ready'));
    assert.equal(ready.status, 'queued');
    const versions = link.webview.states.map((s) => s.version);
    assert.deepEqual(
      versions,
      [...versions].sort((a, b) => a - b),
      'snapshot versions only grow',
    );
  });

  it('pause, continue (with its result), cancel and delete round-trip to the store, each asking first', async () => {
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
    const task = await world.windows[0].service.create({ title: 'T', prompt: 'p', permissionMode: 'plan', workspacePath: PANEL_WORKSPACE });
    assert.deepEqual(await link.webview.channel.request('pause', { taskId: task.id }), {});
    assert.equal(world.windows[0].service.getTask(task.id)?.status, 'paused');
    const paused = await until('paused card', () => lastState(link.webview)?.tasks.find((t) => t.id === task.id && t.phase === 'paused'));
    assert.equal(paused.queuePosition, 1, 'a paused card keeps its queue position');
    assert.deepEqual(
      await link.webview.channel.request('continue', { taskId: task.id }),
      { ticket: 'reused' },
      "continue's outcome reaches the webview",
    );
    assert.equal(world.windows[0].service.getTask(task.id)?.status, 'queued');

    link.host.confirmAnswers.push(false);
    assert.deepEqual(await link.webview.channel.request('cancel', { taskId: task.id }), { done: false });
    assert.equal(world.windows[0].service.getTask(task.id)?.status, 'queued', 'a declined cancel changes nothing');
    assert.match(link.host.asked[0].detail, /leaves the gateway queue/);
    link.host.confirmAnswers.push(true);
    assert.deepEqual(await link.webview.channel.request('cancel', { taskId: task.id }), { done: true });
    assert.equal(world.windows[0].service.getTask(task.id)?.status, 'cancelled');
    const cancelled = await until('cancelled card', () =>
      lastState(link.webview)?.tasks.find((t) => t.id === task.id && t.phase === 'cancelled'),
    );
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
    const task = await world.windows[0].service.create({ title: 'Q', prompt: 'p', permissionMode: 'plan', workspacePath: PANEL_WORKSPACE });
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
    const input = {
      title: '',
      prompt: 'p',
      workspacePath: PANEL_WORKSPACE,
      permissionMode: 'bypassPermissions' as const,
      model: null,
      thoughtLevel: null,
    };
    link.host.confirmAnswers.push(false, true);
    assert.deepEqual(await link.webview.channel.request('createTask', { input }), { taskId: null });
    assert.equal(world.takeRequests(), 0);
    const { taskId } = await link.webview.channel.request('createTask', { input });
    assert.equal(world.windows[0].service.getTask(taskId!)?.permissionMode, 'bypassPermissions');
    assert.match(link.host.asked[0].detail, /never asks/);
  });

  it('item 10: editing a queued task to Bypass permissions asks like create; declined, the task keeps its mode and prompt', async () => {
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
    const task = await world.windows[0].service.create({ title: 'E', prompt: 'p', permissionMode: 'plan', workspacePath: PANEL_WORKSPACE });
    link.host.confirmAnswers.push(false, true);
    assert.deepEqual(
      await link.webview.channel.request('editTask', { taskId: task.id, patch: { permissionMode: 'bypassPermissions', prompt: 'p2' } }),
      { title: 'E', prompt: 'p' },
    );
    assert.equal(world.windows[0].service.getTask(task.id)?.permissionMode, 'plan', 'declined: the mode is unchanged');
    assert.equal(world.windows[0].service.getTask(task.id)?.prompt, 'p', 'declined: nothing of the edit is applied');
    assert.match(link.host.asked[0].detail, /never asks/);
    assert.ok(link.host.asked[0].detail.includes(PANEL_WORKSPACE), 'the question names the folder');
    await link.webview.channel.request('editTask', { taskId: task.id, patch: { permissionMode: 'bypassPermissions' } });
    assert.equal(world.windows[0].service.getTask(task.id)?.permissionMode, 'bypassPermissions');
    assert.equal(link.host.asked.length, 2);
    // Already Bypass: an edit of its prompt asks nothing (confirmAnswers is empty: a question would fail the test).
    await link.webview.channel.request('editTask', { taskId: task.id, patch: { prompt: 'p3', permissionMode: 'bypassPermissions' } });
    assert.equal(world.windows[0].service.getTask(task.id)?.prompt, 'p3');
  });

  it('an expanded card gets its segments from the ledger', async () => {
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
    const task = await world.windows[0].service.create({ title: 'S', prompt: 'p', permissionMode: 'plan', workspacePath: PANEL_WORKSPACE });
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
    link.host.configs = {
      exposed: true,
      planEligible: false,
      upgradeHint: 'Upgrade to Coding',
      upgradeUrl: 'https://example.test/upgrade',
    };
    const locked = (await link.controller.snapshot()).availability;
    assert.deepEqual(
      { kind: locked.kind, canCreate: locked.canCreate, hint: locked.upgradeHint, url: locked.upgradeUrl },
      { kind: 'plan_locked', canCreate: false, hint: 'Upgrade to Coding', url: 'https://example.test/upgrade' },
    );
  });

  it('item 5: a refused API key reads "The gateway refused the API key (401)", not an outage; saving a key checks it', async () => {
    link.close();
    let nextKey: string | undefined;
    link = connect({
      service: world.windows[0].service,
      store: world.windows[0].store,
      clock: world.clock,
      hasApiKey: () => world.apiKey !== undefined,
      setApiKey: async () => {
        if (nextKey === undefined) return false;
        world.apiKey = nextKey;
        return true;
      },
    });
    const goodKey = world.apiKey;
    world.apiKey = 'opk-wrong-key';
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
    const refused = (await link.controller.snapshot()).availability;
    assert.deepEqual(
      { kind: refused.kind, reason: refused.reason, status: refused.refusedStatus, canCreate: refused.canCreate },
      { kind: 'key_refused', reason: 'The gateway refused the API key (401).', status: 401, canCreate: false },
    );
    // The box dismissed: nothing saved, nothing checked.
    assert.deepEqual(await link.webview.channel.request('setApiKey', {}), { saved: false });
    nextKey = 'opk-another-wrong-key';
    const again = await link.webview.channel.request('setApiKey', {});
    assert.deepEqual(again, {
      saved: true,
      check: { accepted: false, text: 'The gateway refused the API key (401). Check the key and set it again.' },
    });
    nextKey = goodKey;
    const accepted = await link.webview.channel.request('setApiKey', {});
    assert.deepEqual(accepted, { saved: true, check: { accepted: true, text: 'The gateway accepted the API key.' } });
    assert.equal((await link.controller.snapshot()).availability.kind, 'enabled');
  });

  it('History removal answers whether the row was hidden', async () => {
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
    const task = await world.windows[0].service.create({ title: 'H', prompt: 'p', permissionMode: 'plan', workspacePath: PANEL_WORKSPACE });
    assert.deepEqual(await link.webview.channel.request('deleteHistory', { taskId: task.id }), { hidden: false, reason: 'never_started' });
  });

  it('issue 22: History pages past the task DB into the archive, the filter finds archived rows, and Open session and Delete work on an archived task', async () => {
    const { service, store } = world.windows[0];
    await service.availability.refresh();
    const ids: string[] = [];
    for (const title of ['Old parser fix', 'Old docs', 'New feature']) {
      const task = await service.create({ title, prompt: `Do: ${title}`, permissionMode: 'plan', workspacePath: PANEL_WORKSPACE });
      world.clock.advance(60_000);
      // Stand-in for a run: the task starts, completes, and its ticket is settled (what the runtime and the settle outbox do).
      await store.mutate((tx) => {
        tx.tickets.updateServerState(task.serverTicketId!, { serverState: 'ready' });
        assert.ok(tx.tasks.claim(task.id));
        assert.ok(tx.tasks.markRunning(task.id, { conversationId: `c-${task.id}`, sessionId: `s-${task.id}` }));
      });
      world.clock.advance(60_000);
      await store.mutate((tx) => {
        tx.tasks.complete(task.id, { filesChanged: 0 });
        tx.tickets.requestSettle(task.serverTicketId!, 'completed');
        tx.tickets.markSettled(task.serverTicketId!);
      });
      ids.push(task.id);
    }
    const archive = new HistoryArchive({ store, clock: world.clock, keep: () => ({ keepDays: 90, keepCount: 1 }), durable: false });
    assert.equal((await archive.run()).moved, 2);
    link.close();
    link = connect({ service, store, clock: world.clock, hasApiKey: () => true, archive });
    link.webview.channel.ready();
    const first = await until('first snapshot', () => lastState(link.webview));
    assert.deepEqual([first.history.map((h) => h.taskId), first.historyTotal, first.historyArchived], [[ids[2]], 1, true]);
    const all = await link.webview.channel.request('historyPage', { offset: 0, limit: 50 });
    assert.deepEqual(
      all.rows.map((r) => [r.title, r.archived ?? false]),
      [
        ['New feature', false],
        ['Old docs', true],
        ['Old parser fix', true],
      ],
    );
    assert.equal(all.total, 3);
    const page2 = await link.webview.channel.request('historyPage', { offset: 1, limit: 1 });
    assert.deepEqual([page2.rows.map((r) => r.title), page2.total], [['Old docs'], 3]);
    const found = await link.webview.channel.request('historyPage', {
      offset: 0,
      limit: 50,
      filter: { text: 'parser', status: 'succeeded' },
    });
    assert.deepEqual([found.rows.map((r) => r.taskId), found.total], [[ids[0]], 1]);
    await assert.rejects(
      link.webview.channel.request('historyPage', { offset: 0, limit: 50, filter: { text: 'x', color: 'red' } as never }),
      /Invalid request/,
    );

    assert.deepEqual(await link.webview.channel.request('openSession', { taskId: ids[1] }), { opened: 'transcript' });
    assert.equal(service.getTask(ids[1])?.sessionId, `s-${ids[1]}`, 'Open session brought the archived task back to the task DB');
    assert.equal(await archive.isArchived(ids[1]), false);

    assert.deepEqual(await link.webview.channel.request('delete', { taskId: ids[0] }), { done: true });
    assert.equal(service.getTask(ids[0]), undefined);
    assert.equal((await archive.archiveFile()).rowsOf([ids[0]]).size, 0, 'gone from the archive too');
    const after = await link.webview.channel.request('historyPage', { offset: 0, limit: 50 });
    assert.deepEqual(
      after.rows.map((r) => r.title),
      ['New feature', 'Old docs'],
    );
    await archive.close();
  });

  it('refuses an edit the service refuses, with the service error as the result', async () => {
    link.webview.channel.ready();
    await world.windows[0].service.availability.refresh();
    const task = await world.windows[0].service.create({ title: 'T', prompt: 'p', permissionMode: 'plan', workspacePath: PANEL_WORKSPACE });
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
      {
        type: 'request',
        method: 'createTask',
        requestId: 'x4',
        params: {
          input: { prompt: '', workspacePath: PANEL_WORKSPACE, permissionMode: 'plan', title: '', model: null, thoughtLevel: null },
        },
      },
      {
        type: 'request',
        method: 'createTask',
        requestId: 'x5',
        params: {
          input: { prompt: 'x', workspacePath: PANEL_WORKSPACE, permissionMode: 'rm -rf /', title: '', model: null, thoughtLevel: null },
        },
      },
      { type: 'request', method: 'editTask', requestId: 'x6', params: { taskId: 't', patch: { workspacePath: '/elsewhere' } } },
      {
        type: 'request',
        method: 'createTask',
        requestId: 'x7',
        params: {
          input: {
            prompt: 'x'.repeat(200_001),
            workspacePath: PANEL_WORKSPACE,
            permissionMode: 'plan',
            title: '',
            model: null,
            thoughtLevel: null,
          },
        },
      },
      { type: 'request', method: 'pause', requestId: 'x8', params: { taskId: 'no-such-task' } },
      {
        type: 'request',
        method: 'createTask',
        requestId: 'x9',
        params: {
          input: {
            prompt: 'x',
            workspacePath: PANEL_WORKSPACE,
            permissionMode: 'plan',
            title: '',
            model: null,
            thoughtLevel: null,
            workspaceIdentity: 'forged',
          },
        },
      },
      {
        type: 'request',
        method: 'createTask',
        requestId: 'x10',
        params: { input: { prompt: 'x', workspacePath: '/etc', permissionMode: 'plan', title: '', model: null, thoughtLevel: null } },
      },
    ];
    for (const m of hostile) link.webview.raw.postMessage(m);
    const results = await until('results for every message with a request id', () => {
      const r = link.webview.received.filter((m): m is Extract<HostToWebview, { type: 'result' }> => m.type === 'result');
      return r.length >= 10 ? r : undefined;
    });
    const byId = new Map(results.map((r) => [r.requestId, r]));
    const errors = new Map<string, string>();
    for (const id of ['x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8', 'x9', 'x10']) {
      const r = byId.get(id);
      assert.ok(r, `an answer for ${id}`);
      assert.ok(r.ok === false, `${id} must be refused`);
      assert.ok(r.error.length > 5, `${id} carries a readable error`);
      errors.set(id, r.error);
    }
    assert.match(errors.get('x4')!, /prompt/i);
    assert.match(errors.get('x6')!, /workspacePath|Unrecognized/i);
    assert.match(errors.get('x9')!, /workspaceIdentity|Unrecognized/i);
    assert.match(errors.get('x10')!, /not a folder open in this window/, 'a folder that is not open is refused (issue 9, item 7)');
    assert.equal(world.windows[0].service.listTasks().length, 0, 'nothing was created');
    assert.equal(world.takeRequests(), 0, 'nothing reached the gateway');
  });

  describe('permission questions (a real AskBroker, the part of the runtime that holds them)', () => {
    let broker: AskBroker;
    let asks: PanelAskSource;
    let asked: ReturnType<typeof connect>;
    beforeEach(() => {
      broker = new AskBroker({ clock: world.clock, timeoutMs: () => 600_000, timers: world.timers });
      asks = {
        pendingAsks: () => broker.pending(),
        answerAsk: (taskId, askId, decision, inputDigest) => broker.answer(taskId, askId, decision, inputDigest),
        onAsksChange: (listener) => broker.onEvent(() => listener()),
      };
      asked = connect({
        service: world.windows[0].service,
        store: world.windows[0].store,
        clock: world.clock,
        hasApiKey: () => true,
        asks,
      });
    });
    afterEach(() => asked.close());
    /** Lets the pushes that opening the panel causes (its availability re-check) arrive first. */
    const openingPushesDone = () => new Promise((r) => setTimeout(r, 100));

    it('answerAsk reaches the holder of the question and its outcome comes back: accepted, then already-answered, unknown', async () => {
      asked.webview.channel.ready();
      await until('first snapshot', () => asked.webview.states.length >= 1);
      await openingPushesDone();
      const before = asked.webview.states.length;
      const delivered: AskDecision[] = [];
      const ask = broker.ask('t1', { tool: 'run_command', summary: 'run: echo hi', input: 'command: echo hi' }, (decision) =>
        delivered.push(decision),
      );
      await until('a snapshot pushed for the new question', () => asked.webview.states.length > before);
      assert.deepEqual(
        await asked.webview.channel.request('answerAsk', { taskId: 't1', askId: ask.id, decision: 'allow', inputDigest: ask.inputDigest }),
        { outcome: 'accepted' },
      );
      assert.deepEqual(delivered, ['allow'], 'the decision reached the agent side once');
      assert.deepEqual(broker.pending(), []);
      assert.deepEqual(
        await asked.webview.channel.request('answerAsk', { taskId: 't1', askId: ask.id, decision: 'deny', inputDigest: ask.inputDigest }),
        { outcome: 'already-answered' },
      );
      assert.deepEqual(delivered, ['allow'], 'a second answer is not delivered');
      assert.deepEqual(
        await asked.webview.channel.request('answerAsk', { taskId: 't2', askId: ask.id, decision: 'deny', inputDigest: ask.inputDigest }),
        { outcome: 'unknown' },
        "another task's id does not answer it",
      );
      assert.deepEqual(
        await asked.webview.channel.request('answerAsk', {
          taskId: 't1',
          askId: 'no-such-question',
          decision: 'deny',
          inputDigest: ask.inputDigest,
        }),
        { outcome: 'unknown' },
      );
    });

    it('item 5: the card carries the whole input and its digest; an answer through the panel protocol for another input is refused and the question stays open', async () => {
      asked.webview.channel.ready();
      await until('first snapshot', () => asked.webview.states.length >= 1);
      await openingPushesDone();
      const delivered: AskDecision[] = [];
      const command = `echo "${'release notes '.repeat(20)}" && node -e "require('fs').writeFileSync('p','x')"`;
      const ask = broker.ask('t1', { tool: 'Bash', summary: command.slice(0, 117) + '...', input: `command: ${command}` }, (decision) =>
        delivered.push(decision),
      );
      // The card of a running task with this question (the projection the host pushes to the panel).
      const card = cardAskOf({ id: 't1', status: 'running' } as OffPeakTask, broker.pending())!;
      assert.equal(card.input, `command: ${command}`, 'the card gets the whole input, the tail included');
      assert.equal(card.inputDigest, askInputDigest(card.input));
      const other = askInputDigest(`command: echo "${'release notes '.repeat(20)}"`);
      assert.deepEqual(
        await asked.webview.channel.request('answerAsk', { taskId: 't1', askId: ask.id, decision: 'allow', inputDigest: other }),
        { outcome: 'input-mismatch' },
      );
      assert.deepEqual(delivered, []);
      assert.deepEqual(
        await asked.webview.channel.request('answerAsk', { taskId: 't1', askId: ask.id, decision: 'deny', inputDigest: card.inputDigest }),
        { outcome: 'accepted' },
      );
      assert.deepEqual(delivered, ['deny']);
    });

    it('refuses a malformed answer with a clear error and answers nothing', async () => {
      asked.webview.channel.ready();
      await until('first snapshot', () => asked.webview.states.length >= 1);
      const delivered: AskDecision[] = [];
      const ask = broker.ask('t1', { tool: 'write_file', summary: 'write a.txt', input: 'path: a.txt' }, (decision) =>
        delivered.push(decision),
      );
      const inputDigest = ask.inputDigest;
      const malformed: [string, unknown][] = [
        ['y1', { taskId: 't1', askId: ask.id, decision: 'yes', inputDigest }],
        ['y2', { taskId: 't1', decision: 'allow', inputDigest }],
        ['y3', { taskId: 't1', askId: ask.id, decision: 'allow', by: 'terminal', inputDigest }],
        ['y4', { taskId: 't1', askId: 'x'.repeat(101), decision: 'allow', inputDigest }],
        ['y5', { taskId: 't1', askId: ask.id, decision: 'allow' }],
        ['y6', { taskId: 't1', askId: ask.id, decision: 'allow', inputDigest: 'not-a-digest' }],
      ];
      for (const [requestId, params] of malformed)
        asked.webview.raw.postMessage({ type: 'request', method: 'answerAsk', requestId, params });
      const results = await until('six refusals', () => {
        const r = asked.webview.received.filter((m): m is Extract<HostToWebview, { type: 'result' }> => m.type === 'result');
        return r.length >= 6 ? r : undefined;
      });
      const errors = new Map(results.map((r) => [r.requestId, r.ok ? '' : r.error]));
      assert.match(errors.get('y1')!, /^Invalid request: decision/);
      assert.match(errors.get('y2')!, /^Invalid request: askId/);
      assert.match(errors.get('y3')!, /^Invalid request: .*(by|Unrecognized)/);
      assert.match(errors.get('y4')!, /^Invalid request: askId/);
      assert.match(errors.get('y5')!, /^Invalid request: inputDigest/, 'an answer must name the input it was given for');
      assert.match(errors.get('y6')!, /^Invalid request: inputDigest/);
      assert.deepEqual(delivered, [], 'nothing was answered');
      assert.deepEqual(
        broker.pending().map((a) => a.id),
        [ask.id],
        'the question is still open',
      );
    });
  });

  it("the webview rejects a result that does not match its method's result schema", async () => {
    const sent: { requestId: string }[] = [];
    const channel = new HostChannel(
      { postMessage: (m) => sent.push(m as { requestId: string }) },
      { onState: () => undefined, onFocusForm: () => undefined, onInvalidMessage: () => undefined },
    );
    const good = channel.request('continue', { taskId: 't1' });
    const bad = channel.request('continue', { taskId: 't2' });
    channel.receive({
      type: 'result',
      requestId: sent[0].requestId,
      ok: true,
      result: { ticket: 'retake_pending', error: 'gateway down' },
    });
    channel.receive({ type: 'result', requestId: sent[1].requestId, ok: true, result: { ticket: 'maybe' } });
    assert.deepEqual(await good, { ticket: 'retake_pending', error: 'gateway down' });
    await assert.rejects(bad, /unexpected result/);
  });

  it('the webview refuses a snapshot with a card or History row without its id, and shows the rows it was given', async () => {
    const shown: unknown[][] = [];
    const refused: string[] = [];
    const channel = new HostChannel(
      { postMessage: () => undefined },
      { onState: (s) => shown.push(s.tasks), onFocusForm: () => undefined, onInvalidMessage: (why) => refused.push(why) },
    );
    const snapshot = await link.controller.snapshot();
    const card = { id: 'c1', title: 'kept as sent', extra: 1 };
    channel.receive({ type: 'state', state: { ...snapshot, version: 1, tasks: [{ title: 'no id' }] } });
    channel.receive({ type: 'state', state: { ...snapshot, version: 2, tasks: [{ id: 7 }] } });
    channel.receive({ type: 'state', state: { ...snapshot, version: 3, history: [{ title: 'no task id' }] } });
    channel.receive({ type: 'state', state: { ...snapshot, version: 4, tasks: [card] } });
    assert.equal(refused.length, 3);
    assert.deepEqual(shown, [[card]]);
  });

  it('the webview ignores a snapshot older than the one it shows', async () => {
    const shown: number[] = [];
    const channel = new HostChannel(
      { postMessage: () => undefined },
      { onState: (s) => shown.push(s.version), onFocusForm: () => undefined, onInvalidMessage: () => undefined },
    );
    const snapshot = await link.controller.snapshot();
    channel.receive({ type: 'state', state: { ...snapshot, version: 5 } });
    channel.receive({ type: 'state', state: { ...snapshot, version: 4 } });
    channel.receive({ type: 'state', state: { ...snapshot, version: 6 } });
    assert.deepEqual(shown, [5, 6]);
  });
});
