/** Schema versions and migrations, including the committed v1 fixture file upgrading in place. */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { StoreError, TaskStore } from '../../src/store';
import { LATEST_SCHEMA_VERSION, migrate, MIGRATIONS } from '../../src/store/migrations/migrate';
import { SCHEMA_V1_SQL, TASK_COLUMNS } from '../../src/store/migrations/v01-tasks';
import { SCHEMA_V2_SQL } from '../../src/store/migrations/v02-tickets';
import { TOPIC_TABLES } from '../../src/store/migrations/change-counters';
import { SqlDb } from '../../src/store/db/sql';
import { loadSqlJs } from '../../src/store/db/sqljs';
import { READABLE_BY } from '../../src/store/db/schema-mark';
import { editDbFile } from '../fixtures/edit-db-file';
import { V1_FIXTURE_ROWS } from '../fixtures/make-v1-tasks-index';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'v1-tasks-index.sqlite');

// The 30 columns of the v1 schema, written out here independently of v01-tasks.ts.
const SEED_COLUMNS = [
  'off_peak_task_id',
  'title',
  'prompt',
  'permission_mode',
  'model',
  'thought_level',
  'workspace_key',
  'workspace_path',
  'workspace_identity',
  'conversation_id',
  'session_id',
  'status',
  'queued_at',
  'started_at',
  'ended_at',
  'failure_reason',
  'files_changed',
  'server_ticket_id',
  'registered_at',
  'schedulable',
  'queue_position',
  'next_poll_at',
  'claim_running',
  'claimed_at',
  'attempt_count',
  'last_error',
  'settled_at',
  'history_deleted_at',
  'created_at',
  'updated_at',
];
const SEED_NOT_NULL = [
  'title',
  'prompt',
  'permission_mode',
  'workspace_key',
  'workspace_path',
  'status',
  'queued_at',
  'created_at',
  'updated_at',
];

async function rawDb(bytes?: Uint8Array): Promise<SqlDb> {
  const SQL = await loadSqlJs();
  return new SqlDb(new SQL.Database(bytes));
}

describe('store: schema and migrations', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-store-mig-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('v1 is the task aggregate with exactly its 30 columns, NOT NULLs and defaults', async () => {
    const db = await rawDb();
    db.exec(SCHEMA_V1_SQL);
    const cols = db.all('PRAGMA table_info(off_peak_tasks)');
    assert.deepEqual(
      cols.map((c) => c.name),
      SEED_COLUMNS,
    );
    assert.deepEqual([...TASK_COLUMNS], SEED_COLUMNS);
    assert.deepEqual(
      cols
        .filter((c) => c.notnull === 1)
        .map((c) => c.name)
        .sort(),
      [...SEED_NOT_NULL].sort(),
    );
    assert.deepEqual(
      cols.filter((c) => c.pk === 1).map((c) => c.name),
      ['off_peak_task_id'],
    );
    const defaults = Object.fromEntries(cols.filter((c) => c.dflt_value !== null).map((c) => [c.name, c.dflt_value]));
    assert.deepEqual(defaults, { schedulable: '0', claim_running: '0', attempt_count: '0' });
    for (const c of cols) {
      if (/_at$/.test(String(c.name))) assert.equal(c.type, 'INTEGER', `${c.name} is epoch ms`);
    }
    db.raw.close();
  });

  it('a fresh store is created at the latest version with the ledger (no cascade), the window/dispatch/runtime tables and no lease table', async () => {
    const store = await TaskStore.open({ directory: dir, watch: false });
    assert.deepEqual(store.migration, { fromVersion: 0, toVersion: LATEST_SCHEMA_VERSION, awaitingMigrated: 0, ticketsBackfilled: 0 });
    await store.close();
    const db = await rawDb(readFileSync(path.join(dir, 'tasks-index.sqlite')));
    assert.equal(db.scalar('PRAGMA user_version'), LATEST_SCHEMA_VERSION);
    const ticketCols = db.all('PRAGMA table_info(off_peak_tickets)').map((c) => c.name);
    for (const c of [
      'ticket_id',
      'task_id',
      'ordinal',
      'server_state',
      'taken_at',
      'ready_at',
      'active_at',
      'expires_at',
      'segment_started_at',
      'segment_ended_at',
      'end_reason',
      'last_error',
      'settle_state',
      'settle_attempts',
      'next_settle_at',
      'settled_at',
      'settle_reason',
    ]) {
      assert.ok(ticketCols.includes(c), `off_peak_tickets.${c}`);
    }
    assert.deepEqual(db.all('PRAGMA foreign_key_list(off_peak_tickets)'), [], 'no foreign key, so no cascade delete');
    assert.deepEqual(db.all('PRAGMA table_info(off_peak_leases)'), [], 'the lease lives in its own file');
    assert.deepEqual(
      db.all('PRAGMA table_info(off_peak_windows)').map((c) => c.name),
      ['window_id', 'workspace_keys', 'pid', 'host', 'registered_at'],
    );
    assert.deepEqual(
      db.all('PRAGMA table_info(off_peak_dispatch_requests)').map((c) => c.name),
      ['task_id', 'window_id', 'requested_at', 'result'],
    );
    assert.deepEqual(
      db.all('PRAGMA table_info(off_peak_dispatch_backoff)').map((c) => c.name),
      ['task_id', 'failures', 'next_dispatch_at', 'last_error', 'updated_at'],
    );
    assert.deepEqual(
      db.all('PRAGMA table_info(off_peak_task_runtime)').map((c) => c.name),
      ['task_id', 'agent', 'base_commit', 'created_at'],
    );
    db.raw.close();
  });

  it('upgrades the committed v1 fixture file in place: data kept, current tickets backfilled as legacy rows, awaiting -> running', async () => {
    const file = path.join(dir, 'tasks-index.sqlite');
    copyFileSync(FIXTURE, file);
    const v1 = await rawDb(readFileSync(file));
    assert.equal(v1.scalar('PRAGMA user_version'), 1, 'the fixture really is v1');
    assert.equal(v1.get("SELECT name FROM sqlite_master WHERE name = 'off_peak_tickets'"), undefined);
    v1.raw.close();

    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const store = await TaskStore.open({ directory: dir, clock, watch: false });
    assert.deepEqual(store.migration, { fromVersion: 1, toVersion: LATEST_SCHEMA_VERSION, awaitingMigrated: 1, ticketsBackfilled: 8 });

    const tasks = store.read((tx) => tx.tasks.list());
    assert.equal(tasks.length, V1_FIXTURE_ROWS.length);
    const byId = new Map(tasks.map((t) => [t.id, t]));
    for (const row of V1_FIXTURE_ROWS) {
      const t = byId.get(String(row.off_peak_task_id))!;
      assert.equal(t.prompt, row.prompt);
      assert.equal(t.serverTicketId, row.server_ticket_id);
      assert.equal(t.startedAt, row.started_at);
      assert.equal(t.status, row.status === 'awaiting' ? 'running' : row.status, `status of ${t.id}`);
    }
    const aw = byId.get('v1-awaiting')!;
    assert.deepEqual(
      [aw.status, aw.sessionId, aw.startedAt, aw.updatedAt],
      ['running', 'sess-aw', V1_FIXTURE_ROWS[3].started_at, clock.now()],
    );

    const tickets = store.read((tx) => tx.tickets.list());
    assert.deepEqual(tickets.map((t) => [t.ticketId, t.taskId, t.ordinal, t.origin, t.serverState, t.settleState]).sort(), [
      ['tk-awaiting', 'v1-awaiting', 0, 'legacy', 'active', 'none'],
      ['tk-completed', 'v1-completed', 0, 'legacy', 'settled', 'settled'],
      ['tk-failed', 'v1-failed', 0, 'legacy', 'active', 'pending'],
      ['tk-paused', 'v1-paused', 0, 'legacy', 'queued', 'none'],
      ['tk-queued', 'v1-queued', 0, 'legacy', 'queued', 'none'],
      ['tk-ready', 'v1-ready', 0, 'legacy', 'ready', 'none'],
      ['tk-remote', 'v1-remote', 0, 'legacy', 'queued', 'none'],
      ['tk-running', 'v1-running', 0, 'legacy', 'active', 'none'],
    ]);
    // the failed, never-acknowledged ticket is in the settle outbox right away
    assert.deepEqual(
      store.read((tx) => tx.tickets.pendingSettles().map((t) => t.ticketId)),
      ['tk-failed'],
    );
    const queued = store.read((tx) => tx.tickets.get('tk-queued'))!;
    assert.deepEqual(
      [queued.takenAt, queued.queuePosition, queued.nextPollAt],
      [V1_FIXTURE_ROWS[0].registered_at, 3, V1_FIXTURE_ROWS[0].next_poll_at],
    );
    // a new take after the upgrade gets ordinal 1, after the legacy row
    const { ticket } = await store.mutate((tx) =>
      tx.tickets.insert({ ticketId: 'tk-queued-2', taskId: 'v1-queued', serverState: 'queued' }),
    );
    assert.equal(ticket.ordinal, 1);
    await store.close();

    // in place: the same file is now at the latest version, and opening it again changes nothing
    const v3 = await rawDb(readFileSync(file));
    assert.equal(v3.scalar('PRAGMA user_version'), LATEST_SCHEMA_VERSION);
    v3.raw.close();
    const before = readFileSync(file);
    const again = await TaskStore.open({ directory: dir, clock, watch: false });
    assert.deepEqual(again.migration, {
      fromVersion: LATEST_SCHEMA_VERSION,
      toVersion: LATEST_SCHEMA_VERSION,
      awaitingMigrated: 0,
      ticketsBackfilled: 0,
    });
    assert.equal(again.stats.persists, 0, 'an up-to-date file is not rewritten');
    await again.close();
    assert.ok(readFileSync(file).equals(before));
  });

  it('a v1 file with nothing to backfill is still persisted at the latest version (schema-only changes count as writes)', async () => {
    const db = await rawDb();
    db.exec(SCHEMA_V1_SQL);
    db.exec('PRAGMA user_version = 1');
    const file = path.join(dir, 'tasks-index.sqlite');
    writeFileSync(file, db.raw.export());
    db.raw.close();
    const store = await TaskStore.open({ directory: dir, watch: false });
    assert.deepEqual(store.migration, { fromVersion: 1, toVersion: LATEST_SCHEMA_VERSION, awaitingMigrated: 0, ticketsBackfilled: 0 });
    // another window reading the file must find the latest tables
    const other = await TaskStore.open({ directory: dir, watch: false });
    assert.equal(other.migration!.fromVersion, LATEST_SCHEMA_VERSION);
    assert.deepEqual(
      other.read((tx) => [tx.tickets.list(), tx.windows.list()]),
      [[], []],
    );
    await store.close();
    await other.close();
    const onDisk = await rawDb(readFileSync(file));
    assert.equal(onDisk.scalar('PRAGMA user_version'), LATEST_SCHEMA_VERSION);
    onDisk.raw.close();
  });

  it('upgrades a v2 file in place: the tables other parts created lazily keep their rows, the lease table goes', async () => {
    const db = await rawDb();
    db.exec(SCHEMA_V1_SQL);
    db.exec(SCHEMA_V2_SQL);
    // exactly what v2 builds created on first use
    db.exec(`CREATE TABLE off_peak_windows (window_id TEXT PRIMARY KEY, workspace_keys TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, registered_at INTEGER NOT NULL);
      CREATE TABLE off_peak_dispatch_backoff (task_id TEXT PRIMARY KEY, failures INTEGER NOT NULL, next_dispatch_at INTEGER NOT NULL, last_error TEXT, updated_at INTEGER NOT NULL);
      CREATE TABLE off_peak_task_runtime (task_id TEXT PRIMARY KEY, agent TEXT NOT NULL, base_commit TEXT, created_at INTEGER NOT NULL);
      INSERT INTO off_peak_windows VALUES ('w1', '["/ws"]', 42, 'host-a', 10);
      INSERT INTO off_peak_dispatch_backoff VALUES ('t1', 2, 5000, 'no window', 11);
      INSERT INTO off_peak_task_runtime VALUES ('t1', 'reference', 'abc123', 12);
      INSERT INTO off_peak_leases VALUES ('leader', 'w1', 'tok', 1, 2, 3);
      PRAGMA user_version = 2;`);
    const file = path.join(dir, 'tasks-index.sqlite');
    writeFileSync(file, db.raw.export());
    db.raw.close();

    const store = await TaskStore.open({ directory: dir, watch: false });
    assert.deepEqual(store.migration, { fromVersion: 2, toVersion: LATEST_SCHEMA_VERSION, awaitingMigrated: 0, ticketsBackfilled: 0 });
    assert.deepEqual(
      store.read((tx) => [tx.windows.list(), tx.dispatch.get('t1'), tx.runtime.get('t1')]),
      [
        [{ windowId: 'w1', workspaceKeys: ['/ws'], pid: 42, host: 'host-a', registeredAt: 10 }],
        { taskId: 't1', failures: 2, nextDispatchAt: 5000, lastError: 'no window' },
        { taskId: 't1', agent: 'reference', baseCommit: 'abc123', createdAt: 12 },
      ],
    );
    await store.close();
    const onDisk = await rawDb(readFileSync(file));
    assert.equal(onDisk.scalar('PRAGMA user_version'), LATEST_SCHEMA_VERSION);
    assert.deepEqual(onDisk.all("SELECT name FROM sqlite_master WHERE name = 'off_peak_leases'"), []);
    onDisk.raw.close();

    // idempotent re-open: nothing to do, nothing written
    const before = readFileSync(file);
    const again = await TaskStore.open({ directory: dir, watch: false });
    assert.deepEqual(again.migration, {
      fromVersion: LATEST_SCHEMA_VERSION,
      toVersion: LATEST_SCHEMA_VERSION,
      awaitingMigrated: 0,
      ticketsBackfilled: 0,
    });
    assert.equal(again.stats.persists, 0);
    await again.close();
    assert.ok(readFileSync(file).equals(before), 'the file is byte for byte the same');
  });

  it('upgrades a v3 file through v4: results that finished before count as notified and seen; a result after the upgrade is neither', async () => {
    const db = await rawDb();
    for (const step of MIGRATIONS.filter((m) => m.version <= 3)) step.up(db, 100);
    db.exec('PRAGMA user_version = 3');
    const insert = (id: string, status: string) =>
      db.run(
        `INSERT INTO off_peak_tasks (off_peak_task_id, title, prompt, permission_mode, workspace_key, workspace_path, status, queued_at, ended_at, created_at, updated_at)
         VALUES (?, '', 'p', 'default', '/w', '/w', ?, 1, 2, 1, 2)`,
        [id, status],
      );
    insert('old-done', 'completed');
    insert('old-bad', 'failed');
    insert('old-stop', 'cancelled');
    insert('still-queued', 'queued');
    const file = path.join(dir, 'tasks-index.sqlite');
    writeFileSync(file, db.raw.export());
    db.raw.close();

    const clock = new ManualClock(50_000);
    const store = await TaskStore.open({ directory: dir, clock, watch: false });
    assert.deepEqual(store.migration, { fromVersion: 3, toVersion: LATEST_SCHEMA_VERSION, awaitingMigrated: 0, ticketsBackfilled: 0 });
    assert.deepEqual(
      store.read((tx) => [tx.outcomes.unnotified(), tx.outcomes.unseen(), tx.outcomes.notifiedBy('old-done')]),
      [[], [], 'before-v4'],
    );
    await store.mutate((tx) => {
      tx.tasks.claim('still-queued', {});
      return tx.tasks.fail('still-queued', { failureReason: 'agent missing' });
    });
    assert.deepEqual(
      store.read((tx) => [tx.outcomes.unnotified().map((o) => o.taskId), tx.outcomes.unseen()]),
      [['still-queued'], ['still-queued']],
    );
    await store.close();
    const onDisk = await rawDb(readFileSync(file));
    assert.equal(onDisk.scalar('PRAGMA user_version'), LATEST_SCHEMA_VERSION);
    assert.deepEqual(
      onDisk.all('PRAGMA table_info(off_peak_task_outcomes)').map((c) => c.name),
      ['task_id', 'outcome', 'notified_by', 'notified_at', 'seen_at'],
    );
    assert.deepEqual(
      onDisk.all('PRAGMA table_info(off_peak_pending_asks)').map((c) => c.name),
      ['ask_id', 'task_id', 'window_id', 'tool', 'summary', 'asked_at', 'deadline_at', 'answer', 'answered_at', 'input', 'answer_digest'],
    );
    assert.deepEqual(onDisk.all('SELECT task_id, notified_at, seen_at FROM off_peak_task_outcomes ORDER BY task_id'), [
      { task_id: 'old-bad', notified_at: 50_000, seen_at: 50_000 },
      { task_id: 'old-done', notified_at: 50_000, seen_at: 50_000 },
    ]);
    onDisk.raw.close();
  });

  it('upgrades a v4 file to v5: ledger rows keep their data and gain the gateway-outage and token usage columns', async () => {
    const db = await rawDb();
    for (const step of MIGRATIONS.filter((m) => m.version <= 4)) step.up(db, 100);
    db.exec('PRAGMA user_version = 4');
    db.run(
      `INSERT INTO off_peak_tickets (ticket_id, task_id, ordinal, server_state, taken_at, segment_started_at, settle_state, created_at, updated_at)
       VALUES ('tk-1', 't1', 1, 'active', 10, 20, 'none', 10, 20)`,
    );
    const file = path.join(dir, 'tasks-index.sqlite');
    writeFileSync(file, db.raw.export());
    db.raw.close();

    const store = await TaskStore.open({ directory: dir, watch: false });
    assert.equal(store.migration!.fromVersion, 4);
    const ticket = store.read((tx) => tx.tickets.get('tk-1'))!;
    assert.deepEqual(
      [ticket.serverState, ticket.segmentStartedAt, ticket.gatewayUnreachableSince, ticket.usage],
      ['active', 20, null, null],
    );
    assert.equal(await store.mutate((tx) => tx.tickets.markGatewayUnreachable('tk-1', 500)), true);
    assert.equal(await store.mutate((tx) => tx.tickets.markGatewayUnreachable('tk-1', 500)), false, 'the same mark writes nothing');
    assert.equal(store.read((tx) => tx.tickets.get('tk-1'))!.gatewayUnreachableSince, 500);
    await store.mutate((tx) => tx.tickets.endSegment('tk-1', 'completed'));
    assert.equal(store.read((tx) => tx.tickets.get('tk-1'))!.gatewayUnreachableSince, null, 'an ended segment is not waiting for anything');
    assert.equal(await store.mutate((tx) => tx.tickets.markGatewayUnreachable('tk-1', 600)), false, 'only an open segment is marked');

    // Token usage: added up per segment, models merged in the order first seen.
    const answer = (model: string, input: number) => ({
      model,
      inputTokens: input,
      outputTokens: 2,
      cacheReadTokens: 3,
      cacheWriteTokens: 4,
      requests: 1,
    });
    assert.equal(await store.mutate((tx) => tx.tickets.addUsage('tk-1', answer('model-a', 10))), true);
    await store.mutate((tx) => tx.tickets.addUsage('tk-1', answer('model-b', 20)));
    await store.mutate((tx) => tx.tickets.addUsage('tk-1', answer('model-a', 30)));
    assert.deepEqual(store.read((tx) => tx.tickets.get('tk-1'))!.usage, {
      model: 'model-a, model-b',
      inputTokens: 60,
      outputTokens: 6,
      cacheReadTokens: 9,
      cacheWriteTokens: 12,
      requests: 3,
    });
    assert.equal(await store.mutate((tx) => tx.tickets.addUsage('unknown', answer('m', 1))), false);
    await assert.rejects(
      store.mutate((tx) => tx.tickets.addUsage('tk-1', { ...answer('m', -1) })),
      (e: unknown) => e instanceof StoreError && e.code === 'INVALID_INPUT',
    );
    assert.equal(store.read((tx) => tx.tickets.get('tk-1'))!.usage!.inputTokens, 60, 'bad input loses nothing');
    await store.close();
  });

  it('an unversioned file (user_version 0) that has the aggregate is treated as v1', async () => {
    const db = await rawDb(readFileSync(FIXTURE));
    db.exec('PRAGMA user_version = 0');
    writeFileSync(path.join(dir, 'tasks-index.sqlite'), db.raw.export());
    db.raw.close();
    const store = await TaskStore.open({ directory: dir, watch: false });
    assert.equal(store.migration!.fromVersion, 1);
    assert.equal(store.migration!.ticketsBackfilled, 8);
    assert.equal(
      store.read((tx) => tx.tasks.count()),
      V1_FIXTURE_ROWS.length,
    );
    await store.close();
  });

  it('every migration step is idempotent (re-running after a crash before persist changes nothing)', async () => {
    const db = await rawDb(readFileSync(FIXTURE));
    const report = migrate(db, 1000);
    assert.equal(report.ticketsBackfilled, 8);
    const snapshot = () =>
      JSON.stringify([db.all('SELECT * FROM off_peak_tasks ORDER BY 1'), db.all('SELECT * FROM off_peak_tickets ORDER BY 1')]);
    const before = snapshot();
    for (const step of MIGRATIONS) step.up(db, 2000); // as if user_version had not been saved
    assert.equal(snapshot(), before);
    assert.deepEqual(migrate(db, 3000), {
      fromVersion: LATEST_SCHEMA_VERSION,
      toVersion: LATEST_SCHEMA_VERSION,
      awaitingMigrated: 0,
      ticketsBackfilled: 0,
    });
    assert.equal(snapshot(), before);
    db.raw.close();
  });

  it('a legacy awaiting row written by an old build after the upgrade is migrated at the next open', async () => {
    const store = await TaskStore.open({ directory: dir, watch: false });
    await store.mutate((tx) => tx.tasks.insert({ id: 'old', title: '', prompt: 'p', permissionMode: 'default', workspacePath: '/w' }));
    await store.close();
    await editDbFile(store.filePath, (db) =>
      db.run("UPDATE off_peak_tasks SET status = 'awaiting', started_at = 5 WHERE off_peak_task_id = 'old'"),
    );
    const reopened = await TaskStore.open({ directory: dir, watch: false });
    assert.equal(reopened.migration!.awaitingMigrated, 1);
    assert.equal(reopened.read((tx) => tx.tasks.get('old'))!.status, 'running');
    await reopened.close();
  });

  it('conversation_id holds the session id the Session entry opens: written when a task starts, filled at the upgrade for tasks that started before', async () => {
    const store = await TaskStore.open({ directory: dir, watch: false });
    await store.mutate((tx) => {
      for (const id of ['old', 'new'])
        tx.tasks.insert({
          id,
          title: id,
          prompt: 'p',
          permissionMode: 'default',
          workspacePath: '/w',
          serverTicketId: `tk-${id}`,
          schedulable: true,
        });
      tx.tasks.claim('old');
      tx.tasks.markRunning('old', { sessionId: 'session-old' });
    });
    await store.close();
    // as a build before v15 left it: the session id, no conversation id
    await editDbFile(store.filePath, (db) => {
      db.run("UPDATE off_peak_tasks SET conversation_id = NULL WHERE off_peak_task_id = 'old'");
      db.exec('PRAGMA user_version = 14');
    });
    const reopened = await TaskStore.open({ directory: dir, watch: false });
    assert.equal(reopened.read((tx) => tx.tasks.get('old'))!.conversationId, 'session-old', 'filled at the upgrade');
    await reopened.mutate((tx) => tx.tasks.claim('new') && tx.tasks.markRunning('new', { sessionId: 'session-new' }));
    assert.equal(reopened.read((tx) => tx.tasks.get('new'))!.conversationId, 'session-new', 'written when it starts');
    await reopened.close();
  });

  // A newer build writes the oldest schema version that still reads its file (docs/flows.md#task-database-versions).
  const markNewerBuild = (db: SqlDb, version: number, readableBy: number, release: string) => {
    db.exec(
      'CREATE TABLE IF NOT EXISTS off_peak_schema_mark (id INTEGER PRIMARY KEY CHECK (id = 1), readable_by INTEGER NOT NULL, readable_by_release TEXT NOT NULL)',
    );
    db.run('INSERT OR REPLACE INTO off_peak_schema_mark (id, readable_by, readable_by_release) VALUES (1, ?, ?)', [readableBy, release]);
    db.exec(`PRAGMA user_version = ${version}`);
  };

  it('an older build opens a newer task DB whose changes since are additive (readable by its version), works in it and leaves the newer schema as it was', async () => {
    const store = await TaskStore.open({ directory: dir, watch: false });
    await store.mutate((tx) =>
      tx.tasks.insert({ id: 'before', title: 'before', prompt: 'p', permissionMode: 'default', workspacePath: '/w' }),
    );
    await store.close();
    const newer = LATEST_SCHEMA_VERSION + 1;
    await editDbFile(store.filePath, (db) => {
      // what a newer build's additive step might do: a new column, a new table
      db.exec(
        'ALTER TABLE off_peak_tasks ADD COLUMN newer_note TEXT; CREATE TABLE off_peak_newer_things (task_id TEXT PRIMARY KEY, note TEXT);',
      );
      db.run("UPDATE off_peak_tasks SET newer_note = 'kept' WHERE off_peak_task_id = 'before'");
      markNewerBuild(db, newer, LATEST_SCHEMA_VERSION, '9.0.0');
    });
    const older = await TaskStore.open({ directory: dir, watch: false });
    assert.deepEqual(older.migration, { fromVersion: newer, toVersion: newer, awaitingMigrated: 0, ticketsBackfilled: 0 });
    assert.equal(older.read((tx) => tx.tasks.get('before'))?.title, 'before');
    await older.mutate((tx) => {
      tx.tasks.insert({ id: 'after', title: 'after', prompt: 'p', permissionMode: 'default', workspacePath: '/w' });
      tx.tasks.cancel('before');
    });
    assert.deepEqual(
      older.read((tx) => tx.tasks.list({})).map((t) => [t.id, t.status]),
      [
        ['before', 'cancelled'],
        ['after', 'queued'],
      ],
    );
    await older.close();
    const db = await rawDb(readFileSync(store.filePath));
    assert.equal(db.scalar('PRAGMA user_version'), newer, 'the newer version stays');
    assert.equal(db.scalar("SELECT newer_note FROM off_peak_tasks WHERE off_peak_task_id = 'before'"), 'kept');
    assert.equal(db.scalar('SELECT readable_by FROM off_peak_schema_mark'), LATEST_SCHEMA_VERSION, 'the mark stays');
    db.raw.close();
  });

  it('an older build refuses a newer task DB across a breaking change, saying which version it needs, and leaves it untouched', async () => {
    const store = await TaskStore.open({ directory: dir, watch: false });
    await store.close();
    await editDbFile(store.filePath, (db) => markNewerBuild(db, LATEST_SCHEMA_VERSION + 2, LATEST_SCHEMA_VERSION + 2, '9.1.0'));
    const bytes = readFileSync(store.filePath);
    await assert.rejects(
      TaskStore.open({ directory: dir, watch: false }),
      (e: unknown) => e instanceof StoreError && e.code === 'NEWER_SCHEMA' && /Off-Peak Tasks 9\.1\.0 or later/.test(e.message),
    );
    assert.ok(readFileSync(store.filePath).equals(bytes));
  });

  it('this build marks the DB it writes as readable by builds of its readable-by version', async () => {
    const store = await TaskStore.open({ directory: dir, watch: false });
    await store.close();
    const db = await rawDb(readFileSync(store.filePath));
    assert.deepEqual(db.get('SELECT readable_by, readable_by_release FROM off_peak_schema_mark'), {
      readable_by: READABLE_BY.version,
      readable_by_release: READABLE_BY.release,
    });
    assert.ok(READABLE_BY.version <= LATEST_SCHEMA_VERSION);
    db.raw.close();
  });

  it('refuses a file from a newer schema with a clear typed error and leaves it untouched', async () => {
    const db = await rawDb();
    db.exec(SCHEMA_V1_SQL);
    db.exec('PRAGMA user_version = 99');
    const bytes = db.raw.export();
    db.raw.close();
    const file = path.join(dir, 'tasks-index.sqlite');
    writeFileSync(file, bytes);
    await assert.rejects(
      TaskStore.open({ directory: dir, watch: false }),
      (e: unknown) => e instanceof StoreError && e.code === 'NEWER_SCHEMA' && /99/.test(e.message),
    );
    assert.ok(readFileSync(file).equals(Buffer.from(bytes)));
  });
  it('every migration step gives each change-topic table that exists after it its counting triggers', async () => {
    const db = await rawDb();
    const topicTables = Object.values(TOPIC_TABLES).flat();
    const missing: string[] = [];
    for (const step of MIGRATIONS) {
      step.up(db, 1_000);
      const tables = new Set(db.all("SELECT name FROM sqlite_master WHERE type = 'table'").map((r) => String(r.name)));
      const triggers = new Set(db.all("SELECT name FROM sqlite_master WHERE type = 'trigger'").map((r) => String(r.name)));
      if (step.version < 3) continue; // change counting starts at v3
      for (const table of topicTables.filter((t) => tables.has(t))) {
        for (const op of ['insert', 'update', 'delete'])
          if (!triggers.has(`${table}_${op}_counts`)) missing.push(`v${step.version}: ${table}_${op}_counts`);
      }
    }
    assert.deepEqual(missing, []);
  });
});
