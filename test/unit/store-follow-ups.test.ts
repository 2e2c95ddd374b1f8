/** Schema v8: follow-up links (docs/flows.md#follow-up), on a real sql.js file. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { TaskStore, type StoreTx } from '../../src/store';
import { MIGRATIONS } from '../../src/store/migrations/migrate';
import { SqlDb } from '../../src/store/db/sql';
import { loadSqlJs } from '../../src/store/db/sqljs';

const SESSION = '0f7d2c1e-8b8a-4b8e-9a53-2f1a2b3c4d5e';

function insertTask(tx: StoreTx, id: string): void {
  tx.tasks.insert({ id, title: id, prompt: 'p', permissionMode: 'default', workspacePath: '/w' });
}

describe('store: follow-up links (schema v8)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-store-fu-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a v4 file upgrades to v8 in place, keeping its tasks, and gains the follow-up table', async () => {
    const SQL = await loadSqlJs();
    const db = new SqlDb(new SQL.Database());
    for (const step of MIGRATIONS.filter((m) => m.version <= 4)) step.up(db, 100);
    db.exec('PRAGMA user_version = 4');
    db.run(
      `INSERT INTO off_peak_tasks (off_peak_task_id, title, prompt, permission_mode, workspace_key, workspace_path, status, queued_at, created_at, updated_at)
       VALUES ('old', '', 'p', 'default', '/w', '/w', 'completed', 1, 1, 2)`,
    );
    writeFileSync(path.join(dir, 'tasks-index.sqlite'), db.raw.export());
    db.raw.close();

    const store = await TaskStore.open({ directory: dir, watch: false });
    assert.equal(store.migration!.fromVersion, 4);
    assert.ok(store.migration!.toVersion >= 8);
    assert.equal(store.read((tx) => tx.tasks.get('old'))?.status, 'completed');
    assert.equal(
      store.read((tx) => tx.followUps.get('old')),
      undefined,
    );
    await store.close();
    const onDisk = new SqlDb(new SQL.Database(readFileSync(path.join(dir, 'tasks-index.sqlite'))));
    assert.deepEqual(
      onDisk.all('PRAGMA table_info(off_peak_follow_ups)').map((c) => c.name),
      ['task_id', 'follow_up_of', 'of_title', 'session_id', 'agent', 'created_at'],
    );
    onDisk.raw.close();
  });

  it('a link is written with its task, counts as a tasks change, and goes when its task is deleted', async () => {
    const clock = new ManualClock(10_000);
    const store = await TaskStore.open({ directory: dir, clock, watch: false });
    const topics: string[][] = [];
    store.onDidChange((c) => topics.push([...c.topics]));
    await store.mutate((tx) => {
      insertTask(tx, 'first');
      tx.tasks.claim('first', {});
      tx.tasks.markRunning('first', { sessionId: SESSION });
      return tx.tasks.complete('first', { filesChanged: 1 });
    });
    topics.length = 0;
    await store.mutate((tx) => {
      insertTask(tx, 'second');
      return tx.followUps.insert({ taskId: 'second', followUpOf: 'first', ofTitle: 'first', sessionId: SESSION, agent: 'reference' });
    });
    assert.deepEqual(
      store.read((tx) => tx.followUps.get('second')),
      { taskId: 'second', followUpOf: 'first', ofTitle: 'first', sessionId: SESSION, agent: 'reference', createdAt: 10_000 },
    );
    assert.ok(topics.at(-1)!.includes('tasks'));
    // The queued follow-up uses the session; the finished first task does not count as live.
    assert.deepEqual(
      store.read((tx) => tx.followUps.liveUsersOfSession(SESSION)),
      ['second'],
    );
    assert.deepEqual(
      store.read((tx) => tx.followUps.liveUsersOfSession(SESSION, 'second')),
      [],
    );
    assert.equal(
      store.read((tx) => tx.followUps.sessionInUse(SESSION, 'first')),
      true,
      'the follow-up still needs the session',
    );

    await store.mutate((tx) => tx.tasks.cancel('second', { failureReason: 'x' }));
    await store.mutate((tx) => tx.tasks.delete('second'));
    assert.equal(
      store.read((tx) => tx.followUps.get('second')),
      undefined,
    );
    assert.equal(
      store.read((tx) => tx.followUps.sessionInUse(SESSION, 'first')),
      false,
    );
    await store.close();
  });
});
