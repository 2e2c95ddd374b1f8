/**
 * The history archive (docs/flows.md#archive) on real sql.js files: a real task store and a real
 * tasks-archive.sqlite beside it. A "crash" between the two files is a real failed system call
 * (a node:fs wrapper that fails the rename of one file, labelled as a fault injection): the run
 * stops there, both stores are closed and opened again from disk.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { HistoryArchive } from '../../src/service/history-archive';
import { ARCHIVE_FILE_NAME, TaskStore, type StoreFs } from '../../src/store';
import { deriveHistoryRow, type HistoryRow } from '../../src/core/history';

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.UTC(2026, 0, 1);

/** node:fs, except that renames onto `target` fail with EIO while `failing` is set (fault injection). */
function renameFaults(target: string): { fs: StoreFs; failing: boolean } {
  const state = { failing: false, fs: undefined as unknown as StoreFs };
  state.fs = {
    ...fs,
    renameSync: (from: fs.PathLike, to: fs.PathLike) => {
      if (state.failing && path.basename(String(to)) === target)
        throw Object.assign(new Error(`EIO: injected fault, rename '${String(to)}'`), { code: 'EIO', syscall: 'rename' });
      fs.renameSync(from, to);
    },
  } as StoreFs;
  return state;
}

describe('history archive: finished tasks move to tasks-archive.sqlite and stay findable', () => {
  let dir: string;
  let clock: ManualClock;
  let store: TaskStore;
  let archive: HistoryArchive;
  let keep = { keepDays: 90, keepCount: 500 };

  async function open(options: { storeFs?: StoreFs; archiveFs?: StoreFs } = {}): Promise<void> {
    store = await TaskStore.open({ directory: dir, clock, watch: false, durable: false, fs: options.storeFs, ioRetry: { attempts: 1 } });
    archive = new HistoryArchive({ store, clock, keep: () => keep, durable: false, fs: options.archiveFs, batchSize: 3 });
  }
  async function reopen(options: { storeFs?: StoreFs; archiveFs?: StoreFs } = {}): Promise<void> {
    await archive.close();
    await store.close();
    await open(options);
  }

  /** A task that ran at `at` for a minute and completed; its ticket settled (or only asked to be). */
  async function finished(
    id: string,
    at: number,
    options: { settled?: boolean; title?: string; prompt?: string; status?: 'completed' | 'failed' } = {},
  ): Promise<void> {
    clock.set(at);
    await store.mutate((tx) => {
      tx.tasks.insert({
        id,
        title: options.title ?? `Task ${id}`,
        prompt: options.prompt ?? `Do ${id}`,
        permissionMode: 'acceptEdits',
        workspacePath: '/w',
        serverTicketId: `k-${id}`,
        schedulable: true,
      });
      tx.tickets.insert({ ticketId: `k-${id}`, taskId: id, serverState: 'ready' });
      assert.ok(tx.tasks.claim(id));
      assert.ok(tx.tasks.markRunning(id, { conversationId: `c-${id}`, sessionId: `s-${id}` }));
      tx.runtime.recordFirstStart({ taskId: id, agent: 'reference', baseCommit: null });
    });
    clock.set(at + 60_000);
    await store.mutate((tx) => {
      if (options.status === 'failed') tx.tasks.fail(id, { failureReason: 'boom' });
      else tx.tasks.complete(id, { filesChanged: 1 });
      tx.tickets.requestSettle(`k-${id}`, 'completed');
      if (options.settled ?? true) tx.tickets.markSettled(`k-${id}`);
    });
  }

  const liveIds = () => store.read((tx) => tx.tasks.list().map((t) => t.id)).sort();
  const liveHistory = (): HistoryRow[] =>
    store
      .read((tx) => tx.tasks.list({ historyVisible: true }))
      .map((t) => deriveHistoryRow(t, clock.now())!)
      .sort((a, b) => b.triggeredAt - a.triggeredAt);
  const historyIds = async (filter?: Parameters<HistoryArchive['page']>[1]['filter']) =>
    (await archive.page(liveHistory(), { offset: 0, limit: 1000, filter })).rows.map((r) => r.row.taskId);
  const archivedIds = async () => [...(await archive.archiveFile()).rowsOf(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']).keys()].sort();

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-archive-'));
    clock = new ManualClock(T0);
    keep = { keepDays: 90, keepCount: 500 };
    await open();
  });
  afterEach(async () => {
    await archive.close();
    await store.close();
    // Windows: a file whose last handle just closed may still be being deleted (ENOTEMPTY for a
    // moment, seen in the Windows lane); rmSync retries as Node documents for that.
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
  });

  it('keepCount: all but the N most recent finished tasks move with their ledger, runtime and question rows; History pages the live rows, then the archived ones, newest first', async () => {
    for (const [i, id] of ['a', 'b', 'c', 'd', 'e'].entries()) await finished(id, T0 + i * 1000 * 60 * 5);
    await store.mutate((tx) => {
      tx.questions.recordAsked({
        askId: 'q1',
        taskId: 'a',
        tool: 'Bash',
        summary: 'rm -rf build',
        input: '{}',
        callDigest: null,
        askedAt: T0,
      });
      tx.questions.recordAnswer('q1', 'deny', 'timeout');
    });
    keep = { keepDays: 90, keepCount: 2 };
    assert.equal(fs.existsSync(path.join(dir, ARCHIVE_FILE_NAME)), false, 'nothing is written before a run');
    const report = await archive.run();
    assert.deepEqual([report.moved, report.batches], [3, 1]);
    assert.deepEqual(liveIds(), ['d', 'e']);
    assert.deepEqual(await archivedIds(), ['a', 'b', 'c']);
    const file = await archive.archiveFile();
    const rows = file.rowsOf(['a']).get('a')!;
    assert.deepEqual(Object.keys(rows).sort(), ['off_peak_task_questions', 'off_peak_task_runtime', 'off_peak_tasks', 'off_peak_tickets']);
    const archivedA = (await archive.page(liveHistory(), { offset: 4, limit: 1 })).rows[0];
    assert.deepEqual(
      [archivedA.row.taskId, archivedA.archived?.denials, archivedA.archived?.tickets.length],
      ['a', { denied: 1, automatic: 1 }, 1],
      'its decision record and ledger row came along',
    );
    assert.equal(store.read((tx) => tx.tickets.forTask('a')).length, 0, 'the settled ledger row moved along');
    assert.deepEqual(await historyIds(), ['e', 'd', 'c', 'b', 'a']);
    const page2 = await archive.page(liveHistory(), { offset: 1, limit: 2 });
    assert.deepEqual(
      [page2.rows.map((r) => [r.row.taskId, r.archived !== undefined]), page2.total],
      [
        [
          ['d', false],
          ['c', true],
        ],
        5,
      ],
    );
    assert.equal((await archive.run()).moved, 0, 'a second run finds nothing more to move');
  });

  it('a run that moved most tasks compacts the task DB file as it goes (at most a quarter of its pages left free, not rewritten on every later write)', async () => {
    for (let i = 0; i < 30; i++) await finished(`t${i}`, T0 + i * 60_000, { prompt: `${i} ${'x'.repeat(4000)}` });
    const before = fs.statSync(store.filePath).size;
    keep = { keepDays: 90, keepCount: 1 };
    await archive.run();
    const after = fs.statSync(store.filePath).size;
    assert.ok(after < before / 1.3, `the file shrank from ${before} to ${after} bytes`);
    assert.ok(store.read((tx) => tx.archive.freeShare()) <= 0.25, 'at most a quarter of its pages free');
    assert.equal(liveIds().length, 1);
  });

  it('the archive is not read until History asks past the task DB rows, and its copy leaves memory after 5 idle minutes', async () => {
    for (const [i, id] of ['a', 'b', 'c'].entries()) await finished(id, T0 + i * 60_000);
    keep = { keepDays: 90, keepCount: 1 };
    await archive.run();
    await reopen();
    const file = await archive.archiveFile();
    assert.equal(file.loaded, false, 'not read at open');
    await archive.page(liveHistory(), { offset: 0, limit: 1 });
    assert.equal(file.loaded, false, 'a first page the task DB fills reads nothing');
    assert.equal((await archive.page(liveHistory(), { offset: 0, limit: 50 })).rows.length, 3);
    assert.equal(file.loaded, true);
    clock.advance(4 * 60_000);
    archive.unloadIfIdle();
    assert.equal(file.loaded, true);
    clock.advance(2 * 60_000);
    archive.unloadIfIdle();
    assert.equal(file.loaded, false);
    assert.equal((await archive.page(liveHistory(), { offset: 0, limit: 50 })).rows.length, 3, 'read again when asked');
  });

  it('keepDays: a task that ended more than keepDays ago moves even when it is among the keepCount most recent', async () => {
    await finished('a', T0);
    await finished('b', T0 + 50 * DAY);
    clock.set(T0 + 100 * DAY);
    await archive.run();
    assert.deepEqual([liveIds(), await archivedIds()], [['b'], ['a']]);
  });

  it('a finished task whose ticket is not settled yet stays in the task DB', async () => {
    await finished('a', T0, { settled: false });
    await finished('b', T0 + 1000);
    keep = { keepDays: 90, keepCount: 0 };
    await archive.run();
    assert.deepEqual([liveIds(), await archivedIds()], [['a'], ['b']]);
    assert.equal(store.read((tx) => tx.tickets.forTask('a'))[0].settleState, 'pending');
  });

  it('a task and its follow-up (one session) move together, only once both are due, and come back together', async () => {
    await finished('a', T0);
    await finished('b', T0 + 60_000 * 10);
    clock.set(T0 + 60_000 * 11);
    await store.mutate((tx) =>
      tx.followUps.insert({ taskId: 'b', followUpOf: 'a', ofTitle: 'Task a', sessionId: 's-a', agent: 'reference' }),
    );
    await finished('c', T0 + 60_000 * 20);
    keep = { keepDays: 90, keepCount: 2 }; // 'a' is due, its follow-up 'b' is not
    await archive.run();
    assert.deepEqual([liveIds(), await archivedIds()], [['a', 'b', 'c'], []], "the follow-up's first task stays while the follow-up does");
    keep = { keepDays: 90, keepCount: 0 };
    const report = await archive.run();
    assert.deepEqual([liveIds(), await archivedIds()], [[], ['a', 'b', 'c']]);
    assert.ok(report.batches >= 1);
    assert.equal(await archive.restore('a'), true);
    assert.deepEqual([liveIds(), await archivedIds()], [['a', 'b'], ['c']], 'Open session on the first task brings its follow-up back too');
    assert.equal(
      store.read((tx) => tx.followUps.sessionInUse('s-a', 'a')),
      true,
      "so deleting one never removes the other's transcript",
    );
  });

  it('a follow-up made while a run goes on keeps the task it continues in the task DB (each batch is checked again before it moves)', async () => {
    for (const [i, id] of ['a', 'b', 'c'].entries()) await finished(id, T0 + i * 60_000);
    keep = { keepDays: 90, keepCount: 0 };
    // Fault injection: right after the first batch reaches the archive, the user follows up on 'c'.
    let followUp: Promise<unknown> | undefined;
    const archiveFs = {
      ...fs,
      renameSync: (from: fs.PathLike, to: fs.PathLike) => {
        fs.renameSync(from, to);
        if (path.basename(String(to)) === ARCHIVE_FILE_NAME) {
          followUp ??= store.mutate((tx) => {
            tx.tasks.insert({ id: 'd', title: 'More on c', prompt: 'More', permissionMode: 'acceptEdits', workspacePath: '/w' });
            tx.followUps.insert({ taskId: 'd', followUpOf: 'c', ofTitle: 'Task c', sessionId: 's-c', agent: 'reference' });
          });
        }
      },
    } as StoreFs;
    await archive.close();
    archive = new HistoryArchive({ store, clock, keep: () => keep, durable: false, fs: archiveFs, batchSize: 1 });
    await archive.run();
    await followUp;
    assert.deepEqual(
      [liveIds(), await archivedIds()],
      [
        ['c', 'd'],
        ['a', 'b'],
      ],
    );
  });

  it('crash after the archive write, before the task DB delete: reopened, each task shows once (the task DB copy), and the next run finishes the move without duplicates', async () => {
    for (const [i, id] of ['a', 'b', 'c', 'd'].entries()) await finished(id, T0 + i * 60_000 * 5);
    keep = { keepDays: 90, keepCount: 1 };
    const faults = renameFaults('tasks-index.sqlite');
    await reopen({ storeFs: faults.fs });
    faults.failing = true;
    await assert.rejects(archive.run(), /EIO|saving a change/);
    faults.failing = false;
    await reopen();
    assert.deepEqual(liveIds(), ['a', 'b', 'c', 'd'], 'the task DB lost nothing');
    assert.deepEqual(await archivedIds(), ['a', 'b', 'c'], 'the archive holds the batch');
    assert.deepEqual(await historyIds(), ['d', 'c', 'b', 'a'], 'each task once');
    await archive.run();
    assert.deepEqual([liveIds(), await archivedIds()], [['d'], ['a', 'b', 'c']]);
    assert.deepEqual(await historyIds(), ['d', 'c', 'b', 'a']);
  });

  it('crash in the archive write (the reverse order: nothing reached the archive): the task DB keeps every task and the next run moves them', async () => {
    for (const [i, id] of ['a', 'b', 'c'].entries()) await finished(id, T0 + i * 60_000);
    keep = { keepDays: 90, keepCount: 0 };
    await archive.run(); // an archive with rows in it, so the failed write replaces a real file
    for (const [i, id] of ['d', 'e'].entries()) await finished(id, T0 + (i + 10) * 60_000);
    const faults = renameFaults(ARCHIVE_FILE_NAME);
    await reopen({ archiveFs: faults.fs });
    faults.failing = true;
    await assert.rejects(archive.run(), /EIO/);
    faults.failing = false;
    await reopen();
    assert.deepEqual(
      [liveIds(), await archivedIds()],
      [
        ['d', 'e'],
        ['a', 'b', 'c'],
      ],
    );
    assert.deepEqual(await historyIds(), ['e', 'd', 'c', 'b', 'a']);
    await archive.run();
    assert.deepEqual([liveIds(), await archivedIds()], [[], ['a', 'b', 'c', 'd', 'e']]);
    assert.deepEqual(await historyIds(), ['e', 'd', 'c', 'b', 'a']);
  });

  it('the first run after the upgrade moves its batches in the background: History asked meanwhile is answered before the run ends, every task once', async () => {
    for (let i = 0; i < 12; i++) await finished(`t${String(i).padStart(2, '0')}`, T0 + i * 60_000);
    keep = { keepDays: 90, keepCount: 0 };
    let runEnded = false;
    const run = archive.run().then((r) => {
      runEnded = true;
      return r;
    });
    const page = await archive.page(liveHistory(), { offset: 0, limit: 50 });
    assert.equal(runEnded, false, 'answered while the run still had batches to move');
    assert.equal(page.total, 12);
    assert.equal(new Set(page.rows.map((r) => r.row.taskId)).size, 12);
    const report = await run;
    assert.deepEqual([report.moved, report.batches], [12, 4]);
    assert.equal((await archive.page(liveHistory(), { offset: 0, limit: 50 })).total, 12);
  });

  it('a task changed between the archive write and the task DB delete stays in the task DB (its change kept), and the next run moves it as changed', async () => {
    await finished('a', T0);
    await finished('b', T0 + 1000);
    keep = { keepDays: 90, keepCount: 1 };
    // Fault injection: right after the archive file is renamed into place, the user removes 'a' from History.
    let hide: Promise<unknown> | undefined;
    const archiveFs = {
      ...fs,
      renameSync: (from: fs.PathLike, to: fs.PathLike) => {
        fs.renameSync(from, to);
        if (path.basename(String(to)) === ARCHIVE_FILE_NAME) hide ??= store.mutate((tx) => tx.tasks.deleteHistory('a'));
      },
    } as StoreFs;
    await reopen({ archiveFs });
    const report = await archive.run();
    await hide;
    assert.deepEqual([report.moved, report.changedMeanwhile], [0, 1]);
    assert.deepEqual(liveIds(), ['a', 'b'], 'the changed task stays');
    assert.deepEqual(await historyIds(), ['b'], "the task DB's copy (hidden from History) wins over the archive's");
    await archive.run();
    assert.deepEqual([liveIds(), await archivedIds(), await historyIds()], [['b'], ['a'], ['b']]);
  });

  it('an archive file that is not SQLite is refused with a clear error and left as it is; the task DB keeps every task', async () => {
    await finished('a', T0);
    await finished('b', T0 + 1000);
    keep = { keepDays: 90, keepCount: 0 };
    const archivePath = path.join(dir, ARCHIVE_FILE_NAME);
    fs.writeFileSync(archivePath, "not a database, but someone's bytes all the same");
    await assert.rejects(
      archive.run(),
      (e: Error & { code?: string }) => e.code === 'UNREADABLE' && /history archive .* cannot be read/.test(e.message),
    );
    assert.deepEqual(liveIds(), ['a', 'b']);
    assert.equal(fs.readFileSync(archivePath, 'utf8'), "not a database, but someone's bytes all the same");
    await assert.rejects(archive.page(liveHistory(), { offset: 0, limit: 50 }), /cannot be read/);
  });

  it('the filter finds live and archived tasks by text in the title or prompt, by status and by date', async () => {
    await finished('a', T0, { title: 'Refactor parser', prompt: 'Split the lexer' });
    await finished('b', T0 + DAY, { title: 'Fix login', prompt: 'The 100% case', status: 'failed' });
    await finished('c', T0 + 2 * DAY, { title: 'Parser docs', prompt: 'Write docs' });
    // c's check never passed: an outcome of its own, found by Failure in the archive too (docs/flows.md#outcomes).
    await store.mutate((tx) => {
      tx.checks.insert('c', 'npm test', '/w');
      tx.checks.record('c', { state: 'failed', round: 2, exitCode: 1, output: 'FAIL' });
    });
    await finished('d', T0 + 3 * DAY, { title: 'Bump deps', prompt: 'Lexer too' });
    keep = { keepDays: 90, keepCount: 1 };
    await archive.run();
    assert.deepEqual(liveIds(), ['d']);
    assert.deepEqual(await historyIds({ text: 'PARSER' }), ['c', 'a']);
    assert.deepEqual(await historyIds({ text: 'lexer' }), ['d', 'a'], 'the prompt counts, live rows first');
    assert.deepEqual(await historyIds({ text: '100%' }), ['b'], 'a % in the text is taken literally');
    assert.deepEqual(await historyIds({ text: '%' }), ['b']);
    assert.deepEqual(await historyIds({ status: 'failure' }), ['c', 'b'], 'a failed task and an archived check that never passed');
    assert.deepEqual(await historyIds({ status: 'check_failed' }), ['c']);
    assert.deepEqual(await historyIds({ status: 'succeeded' }), ['d', 'a']);
    const archivedC = (await archive.page(liveHistory(), { offset: 0, limit: 5, filter: { status: 'check_failed' } })).rows[0];
    assert.equal(archivedC.row.outcome.label, 'Check failed after 2 rounds');
    assert.ok(archivedC.archived, 'from the archive');
    assert.deepEqual(await historyIds({ from: T0 + DAY, to: T0 + 2 * DAY }), ['c', 'b']);
    const page = await archive.page(liveHistory(), { offset: 0, limit: 1, filter: { text: 'parser' } });
    assert.deepEqual([page.rows.map((r) => r.row.taskId), page.total], [['c'], 2]);
  });

  it('an archived task comes back to the task DB when acted on, and a Delete then removes it from both files', async () => {
    await finished('a', T0);
    await finished('b', T0 + 1000);
    keep = { keepDays: 90, keepCount: 1 };
    await archive.run();
    assert.equal(await archive.isArchived('a'), true);
    assert.equal(await archive.restore('a'), true);
    assert.deepEqual([liveIds(), await archivedIds()], [['a', 'b'], []]);
    assert.equal(store.read((tx) => tx.tickets.forTask('a'))[0].settleState, 'settled', 'its ledger row came back too');
    assert.equal(store.read((tx) => tx.runtime.get('a'))?.agent, 'reference');
    assert.ok(await store.mutate((tx) => tx.tasks.delete('a')));
    assert.equal(await archive.forget('a'), 0);
    assert.deepEqual([liveIds(), await archivedIds(), await historyIds()], [['b'], [], ['b']]);
    assert.equal(await archive.restore('zzz'), false, 'an unknown task is not restored');
  });

  it('runIfDue starts at most one run a day (the archive file written today counts after a restart)', async () => {
    await finished('a', T0);
    await finished('b', T0 + 1000);
    keep = { keepDays: 3650, keepCount: 1 };
    assert.equal((await archive.runIfDue())?.moved, 1);
    await finished('c', T0 + 2000);
    assert.equal(await archive.runIfDue(), undefined, 'not again in this process the same day');
    await reopen();
    clock.set(Date.now()); // the archive file's mtime is the wall clock's
    assert.equal(await archive.runIfDue(), undefined, 'not again after a restart the same day');
    assert.deepEqual(liveIds(), ['b', 'c'], 'no second run within a day');
    clock.advance(DAY + 1000);
    await reopen();
    assert.equal((await archive.runIfDue())?.moved, 1, 'a day later');
    assert.deepEqual([liveIds(), await archivedIds()], [['c'], ['a', 'b']]);
  });
});
