/**
 * The Schedules section's words (docs/flows.md#schedules-and-chains), from a real sql.js store on
 * an injected clock: the rule, the next run, and what the last occurrence came to.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { epochAtWallTime } from '../../src/core/zoned-time';
import { scheduleRunMarks, scheduleViews } from '../../src/panel/schedule-panel';
import { fireDueSchedules } from '../../src/service/schedule-firing';
import { TaskStore, type ScheduleDraftRecord } from '../../src/store';

const ZONE = 'Europe/Berlin';
const berlin = (day: number, minute: number) => epochAtWallTime({ year: 2026, month: 12, day }, minute, ZONE);
const DRAFT: ScheduleDraftRecord = {
  title: 'Nightly deps',
  prompt: 'p',
  workspacePath: '/w',
  workspaceIdentity: null,
  permissionMode: 'plan',
  model: null,
  thoughtLevel: null,
  isolation: 'worktree',
  checkCommand: null,
};

describe('schedules: what the Schedules section and a run card say', () => {
  let dir: string;
  let clock: ManualClock;
  let store: TaskStore;
  let n = 0;
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-schedule-panel-'));
    clock = new ManualClock(berlin(1, 12 * 60)); // Tue 1 Dec 12:00
    store = await TaskStore.open({ directory: dir, clock, watch: false });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const fire = () => store.mutate((tx) => fireDueSchedules(tx, () => `run-${++n}`));

  it('a catch-up says how many were missed, a skip says why, a cancelled run says so; the card names its schedule, when it was due and (catch-up)', async () => {
    await store.mutate((tx) => tx.schedules.insert('s1', DRAFT, { kind: 'daily', at: 120 }, ZONE));
    let [view] = scheduleViews(store, clock.now(), ZONE);
    assert.deepEqual([view!.ruleText, view!.nextRunText, view!.lastRun], ['Every day at 02:00', 'Wed 02:00', null]);
    assert.deepEqual(view!.draft, {
      title: 'Nightly deps',
      prompt: 'p',
      workspacePath: '/w',
      permissionMode: 'plan',
      model: null,
      thoughtLevel: null,
      ownBranch: true,
    });

    clock.set(berlin(8, 9 * 60)); // a week asleep
    await fire();
    [view] = scheduleViews(store, clock.now(), ZONE);
    assert.deepEqual(view!.lastRun, { taskId: 'run-1', at: berlin(8, 120), text: 'Missed 6, caught up · Queued', catchUp: true });
    assert.deepEqual(scheduleRunMarks(store, clock.now(), ZONE).get('run-1'), {
      scheduleId: 's1',
      scheduleTitle: 'Nightly deps',
      dueText: 'Tue 02:00',
      catchUp: true,
    });

    clock.set(berlin(9, 121));
    await fire();
    [view] = scheduleViews(store, clock.now(), ZONE);
    assert.deepEqual(view!.lastRun, {
      taskId: null,
      at: berlin(9, 120),
      text: 'Skipped the Wed 02:00 run: the previous run is still queued.',
      catchUp: false,
    });

    await store.mutate((tx) => tx.tasks.cancel('run-1'));
    clock.set(berlin(10, 121));
    await fire();
    await store.mutate((tx) => tx.tasks.cancel('run-2', { failureReason: 'Cancelled by you' }));
    [view] = scheduleViews(store, clock.now(), ZONE);
    assert.equal(view!.lastRun?.text, 'Cancelled by you');
    await store.mutate((tx) => tx.schedules.setPaused('s1', true));
    [view] = scheduleViews(store, clock.now(), ZONE);
    assert.deepEqual([view!.paused, view!.nextRunAt, view!.nextRunText], [true, null, null]);
  });
});
