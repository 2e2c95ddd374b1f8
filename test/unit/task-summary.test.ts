// The status bar, the terminal picker and the panel's morning summary (src/panel/task-summary.ts).
import assert from 'node:assert/strict';
import {
  hostStatusView,
  statusBarView,
  queuedNoticeText,
  resultsSummary,
  sinceText,
  summaryLine,
  summaryOfTasks,
  taskCounts,
  taskStateWord,
} from '../../src/panel/task-summary';

describe('task summary (status bar, terminal picker, morning summary)', () => {
  it('item 2: tasks whose agent waits for an answer are "N need input", first and highlighted, never "running"', () => {
    const tasks = [
      { id: 'a', status: 'running' as const, filesChanged: null },
      { id: 'b', status: 'running' as const, filesChanged: null },
      { id: 'c', status: 'queued' as const, filesChanged: null },
    ];
    const asks = [{ taskId: 'a' }, { taskId: 'b' }];
    const view = hostStatusView(tasks, asks, [], null);
    assert.equal(view.text, '$(question) Off-Peak: 2 need input, 1 queued');
    assert.equal(view.highlight, true);
    assert.doesNotMatch(view.text, /running/);
    assert.match(view.tooltip, /2 task\(s\) wait for your answer/);
    const one = hostStatusView(tasks, [{ taskId: 'a' }], [], null);
    assert.equal(one.text, '$(question) Off-Peak: 1 needs input, 1 running, 1 queued');
    const none = hostStatusView(tasks, [], [], null);
    assert.equal(none.text, '$(watch) Off-Peak: 2 running, 1 queued');
    assert.equal(none.highlight, false);
    // A question left over from a task that is no longer running counts for nothing.
    assert.deepEqual(taskCounts([{ id: 'd', status: 'queued' }], new Set(['d'])), { needsInput: 0, running: 0, queued: 1 });
  });

  it('item 2: the Show Task Terminal picker says "needs input" for the same tasks', () => {
    const asking = new Set(['a']);
    assert.equal(taskStateWord({ id: 'a', status: 'running' }, asking), 'needs input');
    assert.equal(taskStateWord({ id: 'b', status: 'running' }, asking), 'running');
    assert.equal(taskStateWord({ id: 'c', status: 'completed' }, asking), 'completed');
  });

  it('the summary counts completed, ready for review, check failed, needs input and failed apart (docs/flows.md#outcomes)', () => {
    const cards = [
      { id: 'ok', status: 'completed' as const, filesChanged: 1, isNew: true, needsInput: false },
      { id: 'passed', status: 'completed' as const, filesChanged: 1, isNew: true, needsInput: false, outcome: { kind: 'ready' as const } },
      {
        id: 'red',
        status: 'completed' as const,
        filesChanged: 2,
        isNew: true,
        needsInput: false,
        outcome: { kind: 'check_failed' as const },
      },
      { id: 'f1', status: 'failed' as const, filesChanged: null, isNew: true, needsInput: false },
      { id: 'q1', status: 'needs_input' as const, filesChanged: null, isNew: false, needsInput: true },
    ];
    const summary = resultsSummary(cards, null)!;
    assert.deepEqual(
      summary.parts.map((p) => [p.text, p.taskIds]),
      [
        ['1 completed', ['ok']],
        ['1 ready for review · checks pass', ['passed']],
        ['1 check failed', ['red']],
        ['1 needs input', ['q1']],
        ['1 failed', ['f1']],
        ['4 files changed', ['ok', 'passed', 'red']],
      ],
    );
    // The status bar's tooltip words the same summary from the host's tasks.
    const tasks = cards.map(({ id, status, filesChanged, outcome }) => ({ id, status, filesChanged, outcome }));
    assert.match(
      hostStatusView(tasks, [], ['ok', 'passed', 'red', 'f1'], null).tooltip,
      /New results: 1 completed, 1 ready for review · checks pass, 1 check failed, 1 needs input, 1 failed, 4 files changed/,
    );
  });

  it('item 11: the summary says what happened since the user last looked, part by part, each naming its cards', () => {
    const cards = [
      { id: 'c1', status: 'completed' as const, filesChanged: 10, isNew: true, needsInput: false },
      { id: 'c2', status: 'completed' as const, filesChanged: 4, isNew: true, needsInput: false },
      { id: 'c3', status: 'completed' as const, filesChanged: 0, isNew: true, needsInput: false },
      { id: 'old', status: 'completed' as const, filesChanged: 7, isNew: false, needsInput: false },
      { id: 'f1', status: 'failed' as const, filesChanged: null, isNew: true, needsInput: false },
      { id: 'r1', status: 'running' as const, filesChanged: null, isNew: false, needsInput: true },
    ];
    const since = new Date(2026, 10, 30, 18, 40).getTime();
    const summary = resultsSummary(cards, since)!;
    assert.equal(
      summaryLine(summary, since + 12 * 3600_000),
      'Since Nov 30, 18:40: 3 completed, 1 needs input, 1 failed, 14 files changed'.replace(
        '18:40',
        new Date(since).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' }),
      ),
    );
    assert.deepEqual(
      summary.parts.map((p) => [p.filter, p.taskIds]),
      [
        ['completed', ['c1', 'c2', 'c3']],
        ['needs_input', ['r1']],
        ['failed', ['f1']],
        ['files_changed', ['c1', 'c2']],
      ],
    );
    assert.equal(
      resultsSummary(
        cards.map((c) => ({ ...c, isNew: false })),
        since,
      ),
      undefined,
      'nothing new: no summary',
    );
    assert.equal(sinceText(null), 'New results');
  });

  it('the morning summary says how many new results ran by schedule, naming their cards (docs/flows.md#schedules-and-chains)', () => {
    const cards = [
      { id: 'n1', status: 'completed' as const, filesChanged: 2, isNew: true, needsInput: false, scheduled: true },
      { id: 'n2', status: 'failed' as const, filesChanged: null, isNew: true, needsInput: false, scheduled: true },
      { id: 'old', status: 'completed' as const, filesChanged: 0, isNew: false, needsInput: false, scheduled: true },
      { id: 'hand', status: 'completed' as const, filesChanged: 0, isNew: true, needsInput: false },
    ];
    const summary = resultsSummary(cards, null)!;
    assert.equal(summaryLine(summary), 'New results: 2 completed, 1 failed, 2 files changed, 2 by schedule');
    assert.deepEqual(summary.parts.find((p) => p.filter === 'scheduled')?.taskIds, ['n1', 'n2']);
    const view = hostStatusView(
      cards.map(({ id, status, filesChanged, scheduled }) => ({ id, status, filesChanged, scheduled })),
      [],
      ['n1', 'n2', 'hand'],
      null,
    );
    assert.match(view.tooltip, /2 by schedule/);
  });

  it('summaryOfTasks: one builder, whatever the caller holds the facts in (the panel its cards, the status bar the store)', () => {
    const tasks = [
      { id: 'a', status: 'completed' as const, filesChanged: 2, seen: false, red: true, byRule: true },
      { id: 'b', status: 'running' as const, filesChanged: null, seen: true, red: false, byRule: false },
    ];
    const summary = summaryOfTasks(
      tasks,
      (t) => ({
        isNew: !t.seen,
        needsInput: t.id === 'b',
        outcome: { kind: t.red ? ('check_failed' as const) : ('completed' as const) },
        scheduled: t.byRule,
      }),
      null,
    )!;
    assert.deepEqual(summary, {
      since: null,
      parts: [
        { filter: 'check_failed', count: 1, text: '1 check failed', taskIds: ['a'] },
        { filter: 'needs_input', count: 1, text: '1 needs input', taskIds: ['b'] },
        { filter: 'files_changed', count: 2, text: '2 files changed', taskIds: ['a'] },
        { filter: 'scheduled', count: 1, text: '1 by schedule', taskIds: ['a'] },
      ],
    });
  });

  it('item 11: the status bar tooltip says the same as the panel summary', () => {
    const tasks = [
      { id: 'c1', status: 'completed' as const, filesChanged: 3 },
      { id: 'f1', status: 'failed' as const, filesChanged: null },
      { id: 'r1', status: 'running' as const, filesChanged: null },
    ];
    const since = Date.now() - 60_000;
    const view = hostStatusView(tasks, [{ taskId: 'r1' }], ['c1', 'f1'], since);
    const panel = resultsSummary(
      tasks.map((t) => ({ ...t, isNew: t.id !== 'r1', needsInput: t.id === 'r1' })),
      since,
    )!;
    assert.equal(view.tooltip.split('\n')[1], summaryLine(panel));
    assert.match(view.tooltip, /: 1 completed, 1 needs input, 1 failed, 3 files changed/);
    assert.equal(view.text, '$(question) Off-Peak: 1 needs input, 2 new');
  });

  it('item 7: the palette\'s "Queued" toast names no queue position: the card is the one source for it', () => {
    const text = queuedNoticeText('Fix the flaky test');
    assert.equal(text, 'Queued "Fix the flaky test". It runs when the gateway admits it; the panel shows its place in the queue.');
    assert.doesNotMatch(text, /#\d/);
  });
});

describe('the status bar entry with nothing going on', () => {
  it('item 8: before any task exists (and with nothing queued, running or new) the entry is there, saying so, and opens the panel', () => {
    const idle = hostStatusView([], [], [], null);
    assert.equal(idle.visible, true);
    assert.equal(idle.text, '$(watch) Off-Peak');
    assert.match(idle.tooltip, /^Off-Peak Tasks\nNothing queued or running\.\nClick to open the panel\.$/);
    assert.equal(statusBarView({ needsInput: 0, running: 0, queued: 0 }, undefined, 0).visible, true);
  });
});
