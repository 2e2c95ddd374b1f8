// One truth per outcome (docs/flows.md#outcomes): every outcome walked through every surface that
// speaks of it — the card, History's row and filters, the toast, the status bar, the morning
// summary and the away notification — each read from a real sql.js task DB through the functions
// those surfaces call.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PendingAsk } from '../../src/core/ask-types';
import { questionNotification } from '../../src/core/ask-notice';
import { ManualClock } from '../../src/core/clock';
import type { HistoryFilterKey, OutcomeKind } from '../../src/core/outcome';
import { awayEventOf } from '../../src/engine/notice-events';
import { resultToastText } from '../../src/engine/notice-texts';
import { TaskNotices, type TaskNotice } from '../../src/engine/task-notices';
import { INCLUDE_NOTHING } from '../../src/notify/notify-include';
import { messageOf } from '../../src/notify/notify-message';
import { historyPager } from '../../src/panel/history-panel';
import { broughtHomeOf, checkViewOf, toTaskCard } from '../../src/panel/task-card';
import { outcomeFactsOf } from '../../src/service/outcome-facts';
import { recordMergedOnForge } from '../../src/service/pull-request-follow';
import { cardSummaryFacts, hostStatusView, statusTasksOf, summaryLine, summaryOfTasks } from '../../src/panel/task-summary';
import { workplaceViews } from '../../src/panel/workplace-panel';
import { historyRowsOf } from '../../src/service/history-archive';
import { TaskStore, type StoreTx } from '../../src/store';
import { phaseLabel } from '../../webview/format';

const ID = 'task-4ea89496-0000';
const TITLE = 'Fix the parser';

/** What each outcome reads on every surface; null: the surface does not speak of it (said where). */
interface Expected {
  label: string;
  filters: HistoryFilterKey[];
  /** The toast's words (a result's toast, or the question's); null: no toast. */
  toast: string | null;
  /** The status bar (its text and tooltip); null: hidden. */
  statusBar: string | null;
  /** The morning summary's part; null: nothing new to sum up. */
  summary: string | null;
  /** The away notification's title and text; null: none. */
  away: string | null;
}

const FAILED_REASON = 'The agent exited with code 1.';

// merged, applied and discarded are the user's own doing, after the result was notified and seen:
// no notification or summary speaks of them again; the card and History carry them.
const EXPECTED: Record<Exclude<OutcomeKind, 'in_progress'>, Expected> = {
  completed: {
    label: 'Completed',
    filters: ['completed', 'succeeded'],
    toast: 'completed',
    statusBar: '1 completed',
    summary: '1 completed',
    away: 'completed',
  },
  ready: {
    label: 'Ready for review · checks pass',
    filters: ['ready', 'succeeded'],
    toast: 'ready for review · checks pass',
    statusBar: '1 ready for review · checks pass',
    summary: '1 ready for review · checks pass',
    away: 'ready for review · checks pass',
  },
  check_failed: {
    label: 'Check failed after 2 rounds',
    filters: ['check_failed', 'failure'],
    toast: 'check failed after 2 rounds',
    statusBar: '1 check failed',
    summary: '1 check failed',
    away: 'check failed after 2 rounds',
  },
  needs_input: {
    label: 'Needs input',
    filters: ['needs_input', 'in_progress'],
    toast: 'needs input',
    statusBar: '1 needs input',
    summary: null,
    away: 'needs input',
  },
  failed: { label: 'Failed', filters: ['failed', 'failure'], toast: 'failed', statusBar: '1 failed', summary: '1 failed', away: 'failed' },
  cancelled: { label: 'Cancelled', filters: ['cancelled'], toast: null, statusBar: null, summary: null, away: null },
  skipped: { label: 'Skipped', filters: ['skipped'], toast: null, statusBar: null, summary: null, away: null },
  merged: { label: 'Merged', filters: ['merged', 'succeeded'], toast: null, statusBar: null, summary: null, away: null },
  applied: { label: 'Applied', filters: ['applied', 'succeeded'], toast: null, statusBar: null, summary: null, away: null },
  discarded: { label: 'Discarded', filters: ['discarded'], toast: null, statusBar: null, summary: null, away: null },
};

const ALL_FILTERS: HistoryFilterKey[] = [
  'in_progress',
  'needs_input',
  'succeeded',
  'completed',
  'ready',
  'merged',
  'applied',
  'failure',
  'failed',
  'check_failed',
  'cancelled',
  'skipped',
  'discarded',
];

function insert(tx: StoreTx, check?: boolean): void {
  tx.tasks.insert({
    id: ID,
    title: TITLE,
    prompt: 'Fix the parser\nand its tests',
    permissionMode: 'default',
    workspacePath: '/w',
    serverTicketId: 'T-1',
    schedulable: true,
  });
  if (check) tx.checks.insert(ID, 'npm test', '/w');
}

function run(tx: StoreTx): void {
  tx.tasks.claim(ID);
  tx.tasks.markRunning(ID, { sessionId: 'session-1' });
}

/** Brings the one task of the store to the outcome. */
function reach(tx: StoreTx, kind: OutcomeKind): void {
  switch (kind) {
    case 'completed':
      insert(tx);
      run(tx);
      tx.tasks.complete(ID, { filesChanged: 0 });
      return;
    case 'ready':
    case 'check_failed':
      insert(tx, true);
      run(tx);
      tx.checks.record(
        ID,
        kind === 'ready'
          ? { state: 'passed', round: 1, exitCode: 0, output: 'ok' }
          : { state: 'failed', round: 2, exitCode: 1, output: 'FAIL' },
      );
      tx.tasks.complete(ID, { filesChanged: 0 });
      return;
    case 'needs_input':
      insert(tx);
      run(tx);
      tx.tasks.park(ID);
      return;
    case 'failed':
      insert(tx);
      run(tx);
      tx.tasks.fail(ID, { failureReason: FAILED_REASON });
      return;
    case 'cancelled':
      insert(tx);
      tx.tasks.cancel(ID);
      return;
    case 'skipped':
      insert(tx);
      tx.tasks.cancel(ID, { failureReason: 'Skipped: Step A failed.' });
      return;
    case 'merged':
    case 'applied':
    case 'discarded':
      insert(tx);
      tx.isolation.insert({ taskId: ID, mode: 'worktree', repoPath: '/w', worktreePath: '/wt/x', branch: 'offpeak/x', baseCommit: 'abc' });
      run(tx);
      tx.tasks.complete(ID, { filesChanged: 1 });
      return;
    case 'in_progress':
      throw new Error('not an outcome this walk reaches');
  }
}

const ASK: PendingAsk = {
  id: 'ask-1',
  taskId: ID,
  tool: 'Bash',
  summary: 'run npm install',
  input: 'npm install',
  inputDigest: 'd',
  askedAt: 1,
  deadlineAt: 2,
};

describe('item 1: one truth per outcome, in every surface', () => {
  let dir: string;
  let store: TaskStore;
  const clock = new ManualClock(1_700_000_000_000);
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-outcomes-'));
    store = await TaskStore.open({ directory: dir, clock, watch: false, durable: false });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [kind, expected] of Object.entries(EXPECTED) as [Exclude<OutcomeKind, 'in_progress'>, Expected][]) {
    it(`item 1: ${kind} reads "${expected.label}" on the card, History (row and filters), toast, status bar, summary and away notification`, async () => {
      await store.mutate((tx) => reach(tx, kind));
      // The result is notified as it ends: what the window that ran it shows, and what goes to the outbox.
      const notices: TaskNotice[] = [];
      const notifier = new TaskNotices({ store, windowId: 'w1', isLeader: () => true, clock, onNotice: (n) => notices.push(n) });
      notifier.noteRunHere(ID);
      notifier.start();
      await notifier.idle();
      if (kind === 'needs_input') notifier.runtimeEvent({ type: 'input-needed', taskId: ID, ask: ASK });
      notifier.dispose();
      // The user's own action comes after the result was told ("completed") and seen; nothing tells it again.
      if (kind === 'merged' || kind === 'applied' || kind === 'discarded') {
        assert.deepEqual(
          notices.map((n) => n.kind === 'completed' && n.outcome.label),
          ['Completed'],
        );
        notices.length = 0;
        await store.mutate((tx) => {
          tx.outcomes.markSeen([ID]);
          tx.isolation.recordBroughtHome(ID, kind);
        });
        const again = new TaskNotices({ store, windowId: 'w2', isLeader: () => true, clock, onNotice: (n) => notices.push(n) });
        again.start();
        await again.idle();
        again.dispose();
      }
      clock.advance(1_000);
      const now = clock.now();

      // The card, as the panel's snapshot builds it.
      const card = store.read((tx) => {
        const task = tx.tasks.get(ID)!;
        const check = tx.checks.get(ID);
        const workplace = workplaceViews(tx, [task]).get(ID);
        const asks = kind === 'needs_input' ? [{ ...ASK, parkedAt: 1 }] : [];
        const unseen = tx.outcomes.unseen().includes(ID);
        return toTaskCard(
          task,
          [],
          asks,
          unseen,
          undefined,
          undefined,
          undefined,
          check && checkViewOf(check),
          false,
          broughtHomeOf(workplace),
        );
      });
      assert.equal(phaseLabel(card, now), expected.label, 'the card');

      // History: the row, and the filters that find it (and only those).
      const rows = store.read((tx) => historyRowsOf(tx, now));
      assert.equal(rows.length, 1);
      assert.equal(rows[0].outcome.label, expected.label, 'the History row');
      const page = historyPager(store, undefined, () => store.read((tx) => historyRowsOf(tx, now)));
      const found: HistoryFilterKey[] = [];
      for (const status of ALL_FILTERS) if ((await page({ offset: 0, limit: 10, filter: { status } })).total === 1) found.push(status);
      assert.deepEqual(found.sort(), [...expected.filters].sort(), 'the History filters that find it');

      // The toast (a result's, or the question's) and the away notification made of the same notice.
      const toast = notices.map((n) =>
        n.kind === 'input-needed' ? questionNotification(n.title, n.ask).message : resultToastText(n).text,
      );
      const away = store.read((tx) =>
        notices.map((n) => {
          const m = messageOf(awayEventOf(n, tx.tasks.get(ID), tx.checks.get(ID)).event, INCLUDE_NOTHING, () => '07:00');
          return `${m.title} | ${m.text}`;
        }),
      );
      if (expected.toast === null) {
        assert.deepEqual(toast, [], 'no toast');
        assert.deepEqual(away, [], 'no away notification');
      } else {
        assert.equal(toast.length, 1);
        assert.ok(toast[0].toLowerCase().includes(expected.toast.toLowerCase()), `the toast "${toast[0]}" says "${expected.toast}"`);
        assert.ok(
          away[0].toLowerCase().includes(expected.away!.toLowerCase()),
          `the away notification "${away[0]}" says "${expected.away}"`,
        );
        assert.ok(!toast[0].toLowerCase().includes(kind === 'completed' ? 'ready' : ' completed'), 'and no other outcome');
      }

      // The status bar and the morning summary (the panel's, from its cards).
      const bar = store.read((tx) =>
        hostStatusView(statusTasksOf(tx.tasks.list(), tx.checks.all(), new Set<string>()), [], tx.outcomes.unseen(), null),
      );
      // Nothing to say: the idle entry (it is always there, docs/flows.md#what-the-panel-says).
      if (expected.statusBar === null)
        assert.equal(
          `${bar.text}\n${bar.tooltip}`,
          '$(watch) Off-Peak\nOff-Peak Tasks\nNothing queued or running.\nClick to open the panel.',
          'the status bar has nothing to say',
        );
      else assert.ok(`${bar.text}\n${bar.tooltip}`.includes(expected.statusBar), `the status bar "${bar.text} / ${bar.tooltip}"`);
      const summary = summaryOfTasks([card], cardSummaryFacts, null);
      if (expected.summary === null) assert.equal(summary, undefined, 'no summary');
      else {
        assert.ok(summary, 'a summary');
        assert.equal(summary.parts[0].text, expected.summary, 'the morning summary');
        assert.ok(summaryLine(summary).includes(expected.summary));
      }
    });
  }

  // Not the user's own doing here: the forge merged it (docs/flows.md#pull-requests), so it is news again.
  it('item 3: a pull request merged on the forge reads "Merged in #123" on the card, History (row and filters), toast, status bar and summary', async () => {
    await store.mutate((tx) => {
      reach(tx, 'merged');
      tx.outcomes.claimNotice(ID, 'w1');
      tx.outcomes.markSeen([ID]);
      tx.pullRequests.record({
        taskId: ID,
        forge: 'github',
        apiUrl: 'https://api.github.com',
        owner: 'team',
        repo: 'app',
        number: 123,
        url: 'https://github.com/team/app/pull/123',
        head: 'offpeak/x',
        base: 'main',
        state: 'open',
      });
    });
    clock.advance(1_000);
    await store.mutate((tx) => recordMergedOnForge(tx, [ID], { state: 'merged' }));
    const notices: TaskNotice[] = [];
    const notifier = new TaskNotices({ store, windowId: 'w1', isLeader: () => true, clock, onNotice: (n) => notices.push(n) });
    notifier.pullRequestMerged(ID);
    notifier.dispose();
    const now = clock.now();

    const card = store.read((tx) => {
      const task = tx.tasks.get(ID)!;
      const workplace = workplaceViews(tx, [task]).get(ID);
      const unseen = tx.outcomes.unseen().includes(ID);
      return toTaskCard(
        task,
        [],
        [],
        unseen,
        undefined,
        undefined,
        undefined,
        undefined,
        false,
        broughtHomeOf(workplace),
        workplace?.mergedIn,
      );
    });
    assert.equal(phaseLabel(card, now), 'Merged in #123', 'the card');
    assert.equal(card.unseen, true, 'the card is new again');

    const rows = store.read((tx) => historyRowsOf(tx, now));
    assert.equal(rows[0].outcome.label, 'Merged in #123', 'the History row');
    const page = historyPager(store, undefined, () => store.read((tx) => historyRowsOf(tx, now)));
    const found: HistoryFilterKey[] = [];
    for (const status of ALL_FILTERS) if ((await page({ offset: 0, limit: 10, filter: { status } })).total === 1) found.push(status);
    assert.deepEqual(found.sort(), ['merged', 'succeeded'], 'the History filters that find it');

    assert.equal(notices.length, 1, 'one toast');
    const [notice] = notices;
    assert.equal(notice.kind, 'completed');
    if (notice.kind !== 'completed') return;
    assert.ok(resultToastText(notice).text.includes('merged in #123'), `the toast "${resultToastText(notice).text}"`);

    const bar = store.read((tx) =>
      hostStatusView(
        statusTasksOf(tx.tasks.list(), tx.checks.all(), new Set<string>(), outcomeFactsOf(tx)),
        [],
        tx.outcomes.unseen(),
        null,
      ),
    );
    assert.ok(bar.tooltip.includes('merged in #123'), `the status bar "${bar.tooltip}"`);
    const summary = summaryOfTasks([card], cardSummaryFacts, null);
    assert.equal(summary?.parts[0].text, 'merged in #123', 'the morning summary');
  });
});
