// The Schedules section's requests end to end in Node (docs/flows.md#schedules-and-chains): the
// host's PanelController and the webview's HostChannel over a real MessageChannel; behind them the
// real TaskService on a real sql.js file and the real reference gateway on loopback.
import assert from 'node:assert/strict';
import { machineTimeZone, wallTimeAt } from '../../src/core/zoned-time';
import type { PanelState } from '../../src/protocol/webview';
import { connect, PANEL_WORKSPACE, until, type Webview } from './panel-link';
import { World } from './service-harness';

const lastState = (w: Webview): PanelState | undefined => w.states[w.states.length - 1];
const DRAFT = {
  title: 'Nightly deps',
  prompt: 'Update the dependencies',
  workspacePath: PANEL_WORKSPACE,
  permissionMode: 'acceptEdits' as const,
  model: null,
  thoughtLevel: null,
  checkCommand: 'npm test',
};

describe('panel: schedules (host controller <-> webview channel over a MessageChannel)', () => {
  let world: World;
  let link: ReturnType<typeof connect>;

  beforeEach(async () => {
    world = await World.start();
    await world.openWindow();
    link = connect({ service: world.windows[0].service, store: world.windows[0].store, clock: world.clock, hasApiKey: () => true });
    link.webview.channel.ready();
    await until('first snapshot', () => link.webview.states.length >= 1);
  });
  afterEach(async () => {
    link.close();
    await world.close();
  });

  it('createSchedule shows it in the snapshot with its rule, next run and draft; pause, edit and delete (after its confirmation) reach the store', async () => {
    assert.deepEqual(lastState(link.webview)?.schedules, [], 'none yet');
    const zone = machineTimeZone();
    const at = (wallTimeAt(world.clock.now(), zone).minuteOfDay + 120) % 1440;
    const { scheduleId } = await link.webview.channel.request('createSchedule', {
      draft: DRAFT,
      rule: { kind: 'weekdays', days: [1, 3, 5], at },
    });
    assert.ok(scheduleId);
    const view = await until('the schedule in a snapshot', () => lastState(link.webview)?.schedules?.find((s) => s.id === scheduleId));
    assert.equal(view.title, 'Nightly deps');
    assert.match(view.ruleText, /^Mon, Wed, Fri at \d\d:\d\d$/);
    assert.equal(view.paused, false);
    assert.ok(view.nextRunAt !== null && view.nextRunAt > world.clock.now());
    assert.match(view.nextRunText ?? '', /\d\d:\d\d$/);
    assert.equal(view.lastRun, null);
    assert.deepEqual(view.draft, { ...DRAFT, ownBranch: false });
    const stored = world.windows[0].service.schedules.list()[0]!;
    assert.equal(stored.workspaceIdentity, `vscode-remote://ssh-remote+box${PANEL_WORKSPACE}`, "the folder's identity comes from the host");

    await link.webview.channel.request('pauseSchedule', { id: scheduleId, paused: true });
    const paused = await until('paused in a snapshot', () =>
      lastState(link.webview)?.schedules?.find((s) => s.id === scheduleId && s.paused),
    );
    assert.equal(paused.nextRunAt, null);

    assert.deepEqual(
      await link.webview.channel.request('editSchedule', {
        id: scheduleId,
        draft: { ...DRAFT, prompt: 'Only the lock file' },
        rule: { kind: 'daily', at },
      }),
      { done: true },
    );
    assert.equal(world.windows[0].service.schedules.list()[0]!.prompt, 'Only the lock file');

    link.host.confirmAnswers.push(false);
    assert.deepEqual(await link.webview.channel.request('deleteSchedule', { id: scheduleId }), { done: false }, 'declined: kept');
    assert.equal(world.windows[0].service.schedules.list().length, 1);
    link.host.confirmAnswers.push(true);
    assert.deepEqual(await link.webview.channel.request('deleteSchedule', { id: scheduleId }), { done: true });
    assert.match(link.host.asked[1]!.message, /^Delete the schedule "Nightly deps"\?$/);
    await until('gone from the snapshot', () => lastState(link.webview)?.schedules?.length === 0);
  });

  it("a run's card says which schedule queued it and for when; the section's last run says what became of it", async () => {
    const zone = machineTimeZone();
    const start = world.clock.now();
    const at = (wallTimeAt(start, zone).minuteOfDay + 2) % 1440;
    const { scheduleId } = await link.webview.channel.request('createSchedule', { draft: DRAFT, rule: { kind: 'daily', at } });
    await world.advance(3 * 60_000);
    const card = await until('the run in a snapshot', () =>
      lastState(link.webview)?.tasks.find((t) => t.scheduleRun?.scheduleId === scheduleId),
    );
    assert.deepEqual(card.scheduleRun, { scheduleId, scheduleTitle: 'Nightly deps', dueText: card.scheduleRun!.dueText, catchUp: false });
    assert.match(card.scheduleRun!.dueText, /^[A-Z][a-z]{2} \d\d:\d\d$/);
    assert.match(card.title, /^Nightly deps \d{4}-\d{2}-\d{2}$/);
    const section = await until('its last run', () => lastState(link.webview)?.schedules?.find((s) => s.id === scheduleId && s.lastRun));
    assert.deepEqual(section.lastRun, { taskId: card.id, at: section.lastRun!.at, text: 'Queued', catchUp: false });
  });

  it('refuses a malformed rule, a folder not open in the window and an unknown schedule, saying why', async () => {
    await assert.rejects(
      link.webview.channel.request('createSchedule', { draft: DRAFT, rule: { kind: 'weekdays', days: [], at: 120 } } as never),
      /Invalid request: rule/,
    );
    await assert.rejects(
      link.webview.channel.request('createSchedule', { draft: DRAFT, rule: { kind: 'daily', at: 1440 } } as never),
      /Invalid request: rule/,
    );
    await assert.rejects(
      link.webview.channel.request('createSchedule', { draft: { ...DRAFT, workspacePath: '/not/open' }, rule: { kind: 'daily', at: 120 } }),
      /folder/i,
    );
    await assert.rejects(link.webview.channel.request('pauseSchedule', { id: 'nope', paused: true }), /there is no schedule nope/);
    assert.equal(world.windows[0].service.schedules.list().length, 0, 'nothing was saved');
  });
});
