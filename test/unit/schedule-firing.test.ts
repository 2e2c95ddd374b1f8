/**
 * Repeating schedules in the store (schema v20) and their firing (docs/flows.md#schedules-and-chains),
 * on a real sql.js file with an injected clock: one occurrence key is recorded once, a due
 * occurrence queues one ticketless task in the same transaction, a run still going makes the next
 * occurrence a skip, a missed stretch gives one catch-up.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { epochAtWallTime } from '../../src/core/zoned-time';
import { TaskStore, type ScheduleDraftRecord } from '../../src/store';
import { fireDueSchedules, scheduleWakeAt } from '../../src/service/schedule-firing';
import type { ScheduleRule } from '../../src/core/schedule-rules';

const ZONE = 'Europe/Berlin';
const DRAFT: ScheduleDraftRecord = {
  title: 'Nightly deps',
  prompt: 'Update the dependencies and fix what breaks.',
  workspacePath: '/w',
  workspaceIdentity: null,
  permissionMode: 'acceptEdits',
  model: null,
  thoughtLevel: null,
  isolation: 'worktree',
  checkCommand: 'npm test',
};
const DAILY_0200: ScheduleRule = { kind: 'daily', at: 120 };
/** 2026-12-01 … in Berlin, at `minute` of the day. */
const berlin = (day: number, minute: number) => epochAtWallTime({ year: 2026, month: 12, day }, minute, ZONE);

describe('schedules: store and firing (schema v20)', () => {
  let dir: string;
  let clock: ManualClock;
  let store: TaskStore;
  let ids: number;
  const newId = () => `run-${++ids}`;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-schedules-'));
    clock = new ManualClock(berlin(1, 12 * 60)); // Tue 1 Dec 12:00
    store = await TaskStore.open({ directory: dir, clock, watch: false });
    ids = 0;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an occurrence key is recorded once: a second insert of the same key is refused and queues nothing', async () => {
    await store.mutate((tx) => tx.schedules.insert('s1', DRAFT, DAILY_0200, ZONE));
    clock.set(berlin(2, 120) + 1_000);
    const first = await store.mutate((tx) => fireDueSchedules(tx, newId));
    assert.deepEqual(
      first.map((f) => [f.occurrenceKey, f.outcome, f.taskId]),
      [['s1@2026-12-02T02:00', 'queued', 'run-1']],
    );
    // Another window that read the schedule before this write fires the same occurrence: the key refuses it.
    const again = await store.mutate((tx) =>
      tx.schedules.insertRun({
        occurrenceKey: 's1@2026-12-02T02:00',
        scheduleId: 's1',
        dueAt: berlin(2, 120),
        taskId: 'run-other',
        outcome: 'queued',
        catchUp: false,
        missedCount: 0,
        note: null,
      }),
    );
    assert.equal(again, false);
    assert.equal(store.read((tx) => tx.schedules.getRun('s1@2026-12-02T02:00'))?.taskId, 'run-1');
    // Firing again at the same time finds nothing due and queues nothing.
    assert.deepEqual(await store.mutate((tx) => fireDueSchedules(tx, newId)), []);
    assert.deepEqual(
      store.read((tx) => tx.tasks.list().map((t) => t.id)),
      ['run-1'],
    );
  });

  it('a due occurrence queues an ordinary ticketless task in the same transaction: not before its due time, dated title, its check and own branch', async () => {
    await store.mutate((tx) => tx.schedules.insert('s1', DRAFT, DAILY_0200, ZONE));
    assert.equal(
      store.read((tx) => scheduleWakeAt(tx)),
      berlin(2, 120),
    );
    clock.set(berlin(2, 120) + 30_000);
    await store.mutate((tx) => fireDueSchedules(tx, newId));
    const task = store.read((tx) => tx.tasks.get('run-1'))!;
    assert.equal(task.status, 'queued');
    assert.equal(task.serverTicketId, null);
    assert.equal(task.notBefore, berlin(2, 120));
    assert.equal(task.title, 'Nightly deps 2026-12-02');
    assert.equal(store.read((tx) => tx.checks.get('run-1'))?.command, 'npm test');
    assert.equal(store.read((tx) => tx.isolation.get('run-1'))?.mode, 'worktree');
    const run = store.read((tx) => tx.schedules.runsByTask().get('run-1'))!;
    assert.deepEqual([run.scheduleId, run.outcome, run.catchUp, run.missedCount], ['s1', 'queued', false, 0]);
    // The one timer moves on to the next night.
    assert.equal(
      store.read((tx) => scheduleWakeAt(tx)),
      berlin(3, 120),
    );
  });

  it('skips an occurrence while the previous run has not ended (still queued), and says so; queues again once it ended', async () => {
    await store.mutate((tx) => tx.schedules.insert('s1', DRAFT, DAILY_0200, ZONE));
    clock.set(berlin(2, 121));
    await store.mutate((tx) => fireDueSchedules(tx, newId));
    clock.set(berlin(3, 121));
    const skipped = await store.mutate((tx) => fireDueSchedules(tx, newId));
    assert.deepEqual(
      skipped.map((f) => [f.outcome, f.taskId]),
      [['skipped', null]],
    );
    const note = store.read((tx) => tx.schedules.getRun('s1@2026-12-03T02:00'))?.note ?? '';
    assert.match(note, /^Skipped the Thu 02:00 run: the previous run is still queued/);
    assert.equal(
      store.read((tx) => tx.tasks.list().length),
      1,
    );
    await store.mutate((tx) => tx.tasks.cancel('run-1'));
    clock.set(berlin(4, 121));
    const queued = await store.mutate((tx) => fireDueSchedules(tx, newId));
    assert.deepEqual(
      queued.map((f) => f.outcome),
      ['queued'],
    );
  });

  it('a missed stretch (six nights asleep) gives one catch-up run, the latest, with the missed count', async () => {
    await store.mutate((tx) => tx.schedules.insert('s1', DRAFT, DAILY_0200, ZONE));
    clock.set(berlin(8, 9 * 60)); // Tue 8 Dec 09:00: 2nd … 8th missed
    const fired = await store.mutate((tx) => fireDueSchedules(tx, newId));
    assert.equal(fired.length, 1);
    const run = store.read((tx) => tx.schedules.getRun(fired[0]!.occurrenceKey))!;
    assert.deepEqual([run.occurrenceKey, run.catchUp, run.missedCount, run.outcome], ['s1@2026-12-08T02:00', true, 6, 'queued']);
    assert.deepEqual(await store.mutate((tx) => fireDueSchedules(tx, newId)), []);
    assert.equal(
      store.read((tx) => tx.tasks.list().length),
      1,
    );
  });

  it('a paused schedule fires nothing and has no wake time; resumed, the paused stretch is not caught up', async () => {
    await store.mutate((tx) => tx.schedules.insert('s1', DRAFT, DAILY_0200, ZONE));
    await store.mutate((tx) => tx.schedules.setPaused('s1', true));
    assert.equal(
      store.read((tx) => scheduleWakeAt(tx)),
      null,
    );
    clock.set(berlin(4, 12 * 60));
    assert.deepEqual(await store.mutate((tx) => fireDueSchedules(tx, newId)), []);
    await store.mutate((tx) => tx.schedules.setPaused('s1', false));
    assert.deepEqual(await store.mutate((tx) => fireDueSchedules(tx, newId)), []);
    assert.equal(
      store.read((tx) => scheduleWakeAt(tx)),
      berlin(5, 120),
    );
  });

  it('an edit applies to future occurrences only: the queued run keeps its draft; a deleted schedule fires no more and its run stays', async () => {
    await store.mutate((tx) => tx.schedules.insert('s1', DRAFT, DAILY_0200, ZONE));
    clock.set(berlin(2, 121));
    await store.mutate((tx) => fireDueSchedules(tx, newId));
    await store.mutate((tx) => tx.schedules.edit('s1', { ...DRAFT, prompt: 'Only the lock file.' }, { kind: 'daily', at: 180 }, ZONE));
    assert.equal(store.read((tx) => tx.tasks.get('run-1'))?.prompt, DRAFT.prompt);
    await store.mutate((tx) => tx.tasks.cancel('run-1'));
    clock.set(berlin(3, 181));
    await store.mutate((tx) => fireDueSchedules(tx, newId));
    assert.equal(store.read((tx) => tx.tasks.get('run-2'))?.prompt, 'Only the lock file.');
    await store.mutate((tx) => tx.schedules.delete('s1'));
    clock.set(berlin(5, 181));
    assert.deepEqual(await store.mutate((tx) => fireDueSchedules(tx, newId)), []);
    assert.equal(
      store.read((tx) => scheduleWakeAt(tx)),
      null,
    );
    assert.deepEqual(
      store.read((tx) =>
        tx.tasks
          .list()
          .map((t) => t.id)
          .sort(),
      ),
      ['run-1', 'run-2'],
    );
    assert.equal(
      store.read((tx) => tx.schedules.titles().get('s1')),
      'Nightly deps',
    );
  });
});
