// The History filter box's values as the webview sends them (docs/flows.md#archive).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { deriveHistoryRow } from '../../src/core/history';
import { historyPager } from '../../src/panel/history-panel';
import { TaskStore } from '../../src/store';
import { HistoryFilterSchema } from '../../src/protocol/webview';
import { matchesHistoryFilter, type HistoryRow } from '../../src/core/history';
import { outcomeOf } from '../../src/core/outcome';
import { activeFilter, dayBound } from '../../webview/history-filter';
import { historyRowDuration } from '../../webview/format';

describe('History filter box', () => {
  it('a date field is a whole local day: from its first to its last millisecond; anything else is no bound', () => {
    assert.equal(dayBound('2026-03-05', false), new Date(2026, 2, 5, 0, 0, 0, 0).getTime());
    assert.equal(dayBound('2026-03-05', true), new Date(2026, 2, 5, 23, 59, 59, 999).getTime());
    assert.equal(dayBound('', false), undefined);
    assert.equal(dayBound('05/03/2026', true), undefined);
  });

  it('sends only what was asked: blank text and no status are no filter at all, and what it sends the host accepts', () => {
    assert.equal(activeFilter({ text: '   ', status: undefined }), undefined);
    const asked = activeFilter({ text: '  parser ', status: 'failure', from: 10 });
    assert.deepEqual(asked, { text: 'parser', status: 'failure', from: 10 });
    assert.equal(HistoryFilterSchema.safeParse(asked).success, true);
    assert.equal(HistoryFilterSchema.safeParse({ text: 'x'.repeat(201) }).success, false, 'a text over 200 characters is refused');
  });

  it('a live row matches by text in the title or prompt (any case), status and the day range, all together', () => {
    const row: HistoryRow = {
      taskId: 't',
      title: 'Fix Parser',
      prompt: 'Split the LEXER',
      triggeredAt: 1000,
      status: 'failure',
      durationMs: 5,
      sessionId: null,
      failureReason: null,
      outcome: outcomeOf({ status: 'failed' }),
    };
    assert.equal(matchesHistoryFilter(row, { text: 'parser' }), true);
    assert.equal(matchesHistoryFilter(row, { text: 'lexer' }), true);
    assert.equal(matchesHistoryFilter(row, { text: 'docs' }), false);
    assert.equal(matchesHistoryFilter(row, { text: 'parser', status: 'succeeded' }), false);
    assert.equal(matchesHistoryFilter(row, { status: 'failure' }), true, 'Failure (all) finds a failed row');
    assert.equal(matchesHistoryFilter(row, { status: 'failed' }), true);
    assert.equal(matchesHistoryFilter(row, { status: 'check_failed' }), false);
    assert.equal(matchesHistoryFilter(row, { from: 1000, to: 1000 }), true);
    assert.equal(matchesHistoryFilter(row, { from: 1001 }), false);
  });
});

describe("a History row's duration", () => {
  it("counts on with the panel's clock while the task is in progress, as its card does; a finished row keeps what it took", () => {
    const row = { triggeredAt: 10_000, durationMs: 5_000 };
    assert.equal(historyRowDuration({ ...row, status: 'in_progress' }, 60_000), 50_000, 'not frozen at the snapshot');
    assert.equal(historyRowDuration({ ...row, status: 'succeeded' }, 60_000), 5_000);
  });
});

describe('a task that failed before its first segment has its History row (real sql.js store)', () => {
  let dir: string;
  let store: TaskStore;
  const clock = new ManualClock(1_000_000);
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-history-'));
    store = await TaskStore.open({ directory: dir, clock, watch: false, durable: false });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a Failure row with its reason, triggered when it failed, found by the Failure filter; a task cancelled before it started has a Cancelled row saying so; Remove hides the rows', async () => {
    await store.mutate((tx) => {
      tx.tasks.insert({ id: 'F', title: 'folder gone', prompt: 'p', permissionMode: 'default', workspacePath: '/gone', schedulable: true });
      tx.tasks.insert({
        id: 'C',
        title: 'cancelled early',
        prompt: 'p',
        permissionMode: 'default',
        workspacePath: '/w',
        schedulable: true,
      });
    });
    clock.advance(5_000);
    await store.mutate((tx) => {
      assert.equal(tx.tasks.fail('F', { failureReason: "The task's folder /gone no longer exists." }), true);
      assert.equal(tx.tasks.cancel('C'), true);
    });
    const live = () => store.read((tx) => tx.tasks.list({ historyVisible: true })).flatMap((t) => deriveHistoryRow(t, clock.now()) ?? []);
    const page = historyPager(store, undefined, live);

    const all = await page({ offset: 0, limit: 20 });
    assert.deepEqual(all.rows.map((r) => [r.taskId, r.status, r.triggeredAt, r.durationMs, r.failureReason]).sort(), [
      ['C', 'skipped', 1_005_000, 0, 'Cancelled before it started.'],
      ['F', 'failure', 1_005_000, 0, "The task's folder /gone no longer exists."],
    ]);
    assert.deepEqual(
      (await page({ offset: 0, limit: 20, filter: { status: 'failure' } })).rows.map((r) => r.taskId),
      ['F'],
      'the Failure filter finds it',
    );
    assert.deepEqual(
      (await page({ offset: 0, limit: 20, filter: { status: 'cancelled' } })).rows.map((r) => r.taskId),
      ['C'],
      'the Cancelled filter finds the cancelled one',
    );
    assert.deepEqual(
      (await page({ offset: 0, limit: 20, filter: { status: 'failure', from: 1_005_000, to: 1_005_000 } })).rows.map((r) => r.taskId),
      ['F'],
      'on the day it failed',
    );

    assert.equal(await store.mutate((tx) => tx.tasks.deleteHistory('F') && tx.tasks.deleteHistory('C')), true, 'Remove hides their rows');
    assert.deepEqual((await page({ offset: 0, limit: 20 })).rows, []);
  });
});
