/** Every transition and guard of the task repository, on a real sql.js store file. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { TASK_STATUSES, type OffPeakTask, type TaskStatus } from '../../src/core/types';
import { StoreError, TaskStore, type NewTaskInput, type StoreTx } from '../../src/store';
import { editDbFile } from '../fixtures/edit-db-file';

type Op = 'pause' | 'continue' | 'markRunning' | 'requeue' | 'complete' | 'fail' | 'cancel' | 'park' | 'answerParked';

// Written out independently of the implementation: where each operation must apply.
const APPLIES_FROM: Record<Op, TaskStatus[]> = {
  pause: ['queued'],
  continue: ['paused'],
  markRunning: ['queued'],
  requeue: ['running', 'awaiting'],
  complete: ['running', 'awaiting'],
  fail: ['queued', 'running', 'awaiting'],
  cancel: ['queued', 'paused', 'running', 'awaiting', 'needs_input'],
  park: ['running', 'awaiting'],
  answerParked: ['needs_input'],
};
const TARGET: Record<Op, TaskStatus> = {
  pause: 'paused',
  continue: 'queued',
  markRunning: 'running',
  requeue: 'queued',
  complete: 'completed',
  fail: 'failed',
  cancel: 'cancelled',
  park: 'needs_input',
  answerParked: 'queued',
};

function apply(tx: StoreTx, op: Op, id: string): boolean {
  switch (op) {
    case 'pause':
      return tx.tasks.pause(id);
    case 'continue':
      return tx.tasks.continue(id);
    case 'markRunning':
      return tx.tasks.markRunning(id, { sessionId: 'sess-new', conversationId: 'conv-new' });
    case 'requeue':
      return tx.tasks.requeue(id);
    case 'complete':
      return tx.tasks.complete(id, { filesChanged: 2 });
    case 'fail':
      return tx.tasks.fail(id, { failureReason: 'boom' });
    case 'cancel':
      return tx.tasks.cancel(id);
    case 'park':
      return tx.tasks.park(id);
    case 'answerParked':
      return tx.tasks.answerParked(id);
  }
}

const input = (over: Partial<NewTaskInput> = {}): NewTaskInput => ({
  title: 'Refactor',
  prompt: 'Refactor the parser',
  permissionMode: 'acceptEdits',
  workspacePath: '/repo',
  ...over,
});

/** Forces rows into states (the way another process or an old build could have left them). */
async function force(store: TaskStore, rows: Array<{ id: string; status: TaskStatus; claimed: boolean }>, now: number): Promise<void> {
  await editDbFile(store.filePath, (db) => {
    for (const { id, status, claimed } of rows) {
      db.run('UPDATE off_peak_tasks SET status = ?, claim_running = ?, claimed_at = ?, schedulable = 1 WHERE off_peak_task_id = ?', [
        status,
        claimed ? 1 : 0,
        claimed ? now : null,
        id,
      ]);
    }
  });
}

describe('store: task transitions and guards', () => {
  let dir: string;
  let clock: ManualClock;
  let store: TaskStore;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-store-tr-'));
    clock = new ManualClock(1_700_000_000_000);
    store = await TaskStore.open({ directory: dir, clock, watch: false });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const op of Object.keys(APPLIES_FROM) as Op[]) {
    it(`${op}: applies exactly from ${APPLIES_FROM[op].join('/')}, refused elsewhere with the row untouched`, async () => {
      const cases: Array<{ status: TaskStatus; claimed: boolean; id: string }> = [];
      await store.mutate((tx) => {
        for (const status of TASK_STATUSES) {
          for (const claimed of [false, true]) {
            const id = tx.tasks.insert(input({ id: `${op}-${status}-${claimed}`, serverTicketId: 'tk' })).id;
            cases.push({ status, claimed, id });
          }
        }
      });
      await force(store, cases, clock.now());
      clock.advance(1000);
      for (const c of cases) {
        const before = store.read((tx) => tx.tasks.get(c.id))!;
        const applied = await store.mutate((tx) => apply(tx, op, c.id));
        let expected = APPLIES_FROM[op].includes(c.status);
        if (op === 'pause' && c.claimed) expected = false;
        if (op === 'markRunning' && !c.claimed) expected = false;
        assert.equal(applied, expected, `${op} from ${c.status} claimed=${c.claimed}`);
        const after = store.read((tx) => tx.tasks.get(c.id))!;
        if (applied) {
          assert.equal(after.status, TARGET[op]);
          assert.equal(after.updatedAt, clock.now());
        } else {
          assert.deepEqual(after, before, `refused ${op} from ${c.status} must not touch the row`);
        }
      }
    });
  }

  it('terminal states are irreversible: no operation moves a task out of completed/failed/cancelled', async () => {
    const statuses = ['completed', 'failed', 'cancelled'] as const;
    const ids = await store.mutate((tx) => statuses.map((status) => tx.tasks.insert(input({ id: `term-${status}` })).id));
    await force(
      store,
      ids.map((id, i) => ({ id, status: statuses[i], claimed: false })),
      clock.now(),
    );
    for (const id of ids) {
      const before = store.read((tx) => tx.tasks.get(id))!;
      const results = await store.mutate((tx) => [
        ...(Object.keys(APPLIES_FROM) as Op[]).map((op) => apply(tx, op, id)),
        tx.tasks.edit(id, { prompt: 'late edit' }),
        tx.tasks.setTicket(id, 'tk-late'),
        tx.tasks.applySnapshot(id, 'tk', { schedulable: true }),
        tx.tasks.claim(id),
      ]);
      assert.deepEqual(
        results,
        results.map(() => false),
      );
      assert.deepEqual(
        store.read((tx) => tx.tasks.get(id)),
        before,
      );
    }
  });

  it('a late agent result cannot overwrite a cancel (cancel wins)', async () => {
    const t = await store.mutate((tx) => tx.tasks.insert(input({ serverTicketId: 'tk', schedulable: true })));
    assert.equal(await store.mutate((tx) => tx.tasks.claim(t.id)), true);
    assert.equal(await store.mutate((tx) => tx.tasks.markRunning(t.id)), true);
    assert.equal(await store.mutate((tx) => tx.tasks.cancel(t.id)), true);
    assert.equal(await store.mutate((tx) => tx.tasks.complete(t.id)), false);
    assert.equal(await store.mutate((tx) => tx.tasks.fail(t.id, { failureReason: 'late' })), false);
    const row = store.read((tx) => tx.tasks.get(t.id))!;
    assert.equal(row.status, 'cancelled');
    assert.equal(row.failureReason, null);
  });

  it('markRunning is refused when the task was paused or cancelled during dispatch', async () => {
    const t = await store.mutate((tx) => tx.tasks.insert(input({ serverTicketId: 'tk', schedulable: true })));
    assert.equal(await store.mutate((tx) => tx.tasks.pause(t.id)), true);
    assert.equal(await store.mutate((tx) => tx.tasks.claim(t.id)), false, 'a paused task cannot be claimed');
    assert.equal(await store.mutate((tx) => tx.tasks.markRunning(t.id)), false);
    assert.equal(await store.mutate((tx) => tx.tasks.continue(t.id)), true);
    assert.equal(await store.mutate((tx) => tx.tasks.claim(t.id)), true);
    assert.equal(await store.mutate((tx) => tx.tasks.pause(t.id)), false, 'a claimed task cannot be paused');
    assert.equal(await store.mutate((tx) => tx.tasks.cancel(t.id)), true);
    assert.equal(await store.mutate((tx) => tx.tasks.markRunning(t.id)), false);
  });

  it('markRunning binds the session and keeps the first started_at; requeue keeps session, started_at and queued_at', async () => {
    const t = await store.mutate((tx) => tx.tasks.insert(input({ serverTicketId: 'tk1', schedulable: true })));
    const queuedAt = t.queuedAt;
    clock.advance(5000);
    await store.mutate((tx) => tx.tasks.claim(t.id));
    await store.mutate((tx) => tx.tasks.releaseClaim(t.id, { error: 'no host' }));
    await store.mutate((tx) => tx.tasks.claim(t.id));
    assert.equal(await store.mutate((tx) => tx.tasks.markRunning(t.id, { conversationId: 'conv-1', sessionId: 'sess-1' })), true);
    const firstStart = clock.now();
    let row = store.read((tx) => tx.tasks.get(t.id))!;
    assert.deepEqual(
      [row.status, row.startedAt, row.sessionId, row.conversationId, row.claimRunning, row.claimedAt, row.lastError, row.attemptCount],
      ['running', firstStart, 'sess-1', 'conv-1', false, null, null, 1],
    );
    clock.advance(3 * 3600_000);
    assert.equal(await store.mutate((tx) => tx.tasks.requeue(t.id)), true);
    row = store.read((tx) => tx.tasks.get(t.id))!;
    assert.deepEqual(
      [row.status, row.startedAt, row.sessionId, row.queuedAt, row.schedulable],
      ['queued', firstStart, 'sess-1', queuedAt, false],
    );
    // retake, ready again, second segment: same session, first started_at kept
    await store.mutate((tx) => tx.tasks.setTicket(t.id, 'tk2', { schedulable: true }));
    await store.mutate((tx) => tx.tasks.claim(t.id));
    clock.advance(1000);
    assert.equal(await store.mutate((tx) => tx.tasks.markRunning(t.id, {})), true);
    row = store.read((tx) => tx.tasks.get(t.id))!;
    assert.deepEqual([row.status, row.startedAt, row.sessionId, row.serverTicketId], ['running', firstStart, 'sess-1', 'tk2']);
  });

  it('terminal writes record ended_at, reason and files changed, and clear claim and schedulable', async () => {
    const t = await store.mutate((tx) => tx.tasks.insert(input({ serverTicketId: 'tk', schedulable: true })));
    await store.mutate((tx) => tx.tasks.claim(t.id) && tx.tasks.markRunning(t.id));
    clock.advance(777);
    assert.equal(await store.mutate((tx) => tx.tasks.fail(t.id, { failureReason: 'exit 2', filesChanged: 5 })), true);
    const row = store.read((tx) => tx.tasks.get(t.id))!;
    assert.deepEqual(
      [row.status, row.endedAt, row.failureReason, row.filesChanged, row.claimRunning, row.schedulable],
      ['failed', clock.now(), 'exit 2', 5, false, false],
    );
  });

  it('claim: queued + schedulable + unclaimed, or a zombie claim older than 10 minutes', async () => {
    const t = await store.mutate((tx) => tx.tasks.insert(input({ serverTicketId: 'tk' })));
    assert.equal(await store.mutate((tx) => tx.tasks.claim(t.id)), false, 'not schedulable yet');
    assert.equal(await store.mutate((tx) => tx.tasks.applySnapshot(t.id, 'tk', { schedulable: true })), true);
    assert.equal(await store.mutate((tx) => tx.tasks.claim(t.id)), true);
    assert.equal(await store.mutate((tx) => tx.tasks.claim(t.id)), false, 'single-flight');
    clock.advance(10 * 60_000 - 1);
    assert.equal(await store.mutate((tx) => tx.tasks.claim(t.id)), false, 'not a zombie yet');
    clock.advance(2);
    assert.equal(await store.mutate((tx) => tx.tasks.claim(t.id)), true, 'zombie claim reclaimed');
    assert.equal(await store.mutate((tx) => tx.tasks.releaseClaim(t.id)), true);
    assert.equal(await store.mutate((tx) => tx.tasks.releaseClaim(t.id)), false, 'nothing to release');
    assert.equal(store.read((tx) => tx.tasks.get(t.id))!.attemptCount, 0);
  });

  it('edit: only queued or paused; workspace immutable; bad input refused with nothing lost', async () => {
    const t = await store.mutate((tx) => tx.tasks.insert(input({ model: 'm1' })));
    assert.equal(
      await store.mutate((tx) =>
        tx.tasks.edit(t.id, { title: 'New', prompt: 'New prompt', model: null, thoughtLevel: 'high', permissionMode: 'plan' }),
      ),
      true,
    );
    let row = store.read((tx) => tx.tasks.get(t.id))!;
    assert.deepEqual([row.title, row.prompt, row.model, row.thoughtLevel, row.permissionMode], ['New', 'New prompt', null, 'high', 'plan']);
    await store.mutate((tx) => tx.tasks.pause(t.id));
    assert.equal(await store.mutate((tx) => tx.tasks.edit(t.id, { prompt: 'Paused edit' })), true);
    await assert.rejects(
      store.mutate((tx) => tx.tasks.edit(t.id, { workspacePath: '/elsewhere' } as never)),
      (e: unknown) => e instanceof StoreError && e.code === 'INVALID_INPUT' && /immutable/.test(e.message),
    );
    await assert.rejects(
      store.mutate((tx) => tx.tasks.edit(t.id, { prompt: '   ' })),
      (e: unknown) => e instanceof StoreError && e.code === 'INVALID_INPUT',
    );
    await assert.rejects(
      store.mutate((tx) => tx.tasks.edit(t.id, { permissionMode: 'yolo' as never })),
      /permission mode/,
    );
    row = store.read((tx) => tx.tasks.get(t.id))!;
    assert.deepEqual([row.prompt, row.workspacePath], ['Paused edit', '/repo']);
    await store.mutate((tx) => tx.tasks.cancel(t.id));
    assert.equal(await store.mutate((tx) => tx.tasks.edit(t.id, { prompt: 'too late' })), false);
  });

  it('insert: validates input, derives workspace_key, refuses a duplicate id without touching the first', async () => {
    const t = await store.mutate((tx) =>
      tx.tasks.insert(input({ id: 'dup', workspaceIdentity: ' ssh-remote+box ', serverTicketId: 'tk', queuePosition: 4 })),
    );
    assert.deepEqual(
      [t.status, t.workspaceKey, t.serverTicketId, t.registeredAt, t.queuePosition, t.queuedAt, t.createdAt],
      ['queued', 'ssh-remote+box', 'tk', clock.now(), 4, clock.now(), clock.now()],
    );
    await assert.rejects(
      store.mutate((tx) => tx.tasks.insert(input({ id: 'dup', prompt: 'other' }))),
      /already exists/,
    );
    await assert.rejects(
      store.mutate((tx) => tx.tasks.insert(input({ prompt: '' }))),
      /prompt must not be empty/,
    );
    await assert.rejects(
      store.mutate((tx) => tx.tasks.insert(input({ workspacePath: '' }))),
      /workspace path/,
    );
    await assert.rejects(
      store.mutate((tx) => tx.tasks.insert(input({ permissionMode: 'all' as never }))),
      /permission mode/,
    );
    assert.equal(
      store.read((tx) => tx.tasks.count()),
      1,
    );
    assert.equal(store.read((tx) => tx.tasks.get('dup'))!.prompt, 'Refactor the parser');
  });

  it('a mutation that throws is rolled back entirely and persists nothing', async () => {
    const persists = store.stats.persists;
    await assert.rejects(
      store.mutate((tx) => {
        tx.tasks.insert(input({ id: 'a' }));
        tx.tasks.insert(input({ id: 'b' }));
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    assert.equal(
      store.read((tx) => tx.tasks.count()),
      0,
    );
    assert.equal(store.stats.persists, persists);
    await assert.rejects(
      store.mutate(async () => 1),
      (e: unknown) => e instanceof StoreError && e.code === 'ASYNC_MUTATION',
    );
  });

  it('delete: only terminal tasks; keeps the ledger rows', async () => {
    const t = await store.mutate((tx) => {
      tx.tickets.insert({ ticketId: 'tk-del', taskId: 'del', serverState: 'queued' });
      return tx.tasks.insert(input({ id: 'del', serverTicketId: 'tk-del' }));
    });
    assert.equal(await store.mutate((tx) => tx.tasks.delete(t.id)), false, 'live task is not deleted');
    // docs/flows.md#cancel-delete-history: delete of a live task = cancel then delete, in one mutation
    assert.deepEqual(
      await store.mutate((tx) => [tx.tasks.cancel(t.id), tx.tickets.requestSettle('tk-del', 'deleted'), tx.tasks.delete(t.id)]),
      [true, true, true],
    );
    assert.equal(
      store.read((tx) => tx.tasks.get(t.id)),
      undefined,
    );
    const ticket = store.read((tx) => tx.tickets.get('tk-del'))!;
    assert.deepEqual([ticket.taskId, ticket.settleState], ['del', 'pending']);
  });

  it('delete history: started tasks only, idempotent, keeps the first time', async () => {
    const t = await store.mutate((tx) => tx.tasks.insert(input({ serverTicketId: 'tk', schedulable: true })));
    assert.equal(await store.mutate((tx) => tx.tasks.deleteHistory(t.id)), false, 'never started: no tombstone');
    await store.mutate((tx) => tx.tasks.claim(t.id) && tx.tasks.markRunning(t.id));
    await store.mutate((tx) => tx.tasks.complete(t.id));
    clock.advance(10);
    assert.equal(await store.mutate((tx) => tx.tasks.deleteHistory(t.id)), true);
    const first = clock.now();
    clock.advance(10);
    assert.equal(await store.mutate((tx) => tx.tasks.deleteHistory(t.id)), false);
    assert.equal(store.read((tx) => tx.tasks.get(t.id))!.historyDeletedAt, first);
    assert.equal(store.read((tx) => tx.tasks.list({ historyVisible: true })).length, 0);
  });

  it('ticket snapshot writes apply only to the current ticket of a live task', async () => {
    const t = await store.mutate((tx) => tx.tasks.insert(input({ serverTicketId: 'tk1', queuePosition: 9 })));
    assert.equal(await store.mutate((tx) => tx.tasks.applySnapshot(t.id, 'tk1', { queuePosition: 2, nextPollAt: 123 })), true);
    assert.equal(await store.mutate((tx) => tx.tasks.setTicket(t.id, 'tk2', { queuePosition: 7 })), true);
    assert.equal(
      await store.mutate((tx) => tx.tasks.applySnapshot(t.id, 'tk1', { schedulable: true })),
      false,
      'late answer for the old ticket',
    );
    assert.equal(await store.mutate((tx) => tx.tasks.clearTicket(t.id, 'tk1')), false);
    let row = store.read((tx) => tx.tasks.get(t.id))!;
    assert.deepEqual([row.serverTicketId, row.queuePosition, row.schedulable, row.registeredAt], ['tk2', 7, false, clock.now()]);
    assert.equal(await store.mutate((tx) => tx.tasks.clearTicket(t.id, 'tk2')), true);
    row = store.read((tx) => tx.tasks.get(t.id))!;
    assert.deepEqual([row.serverTicketId, row.schedulable, row.queuePosition], [null, false, null]);
  });

  it('markSettled (aggregate outbox): terminal rows only, once', async () => {
    const t = await store.mutate((tx) => tx.tasks.insert(input({ serverTicketId: 'tk' })));
    assert.equal(await store.mutate((tx) => tx.tasks.markSettled(t.id)), false);
    await store.mutate((tx) => tx.tasks.cancel(t.id));
    assert.deepEqual(
      store.read((tx) => tx.tasks.list({ unsettledTerminal: true }).map((r) => r.id)),
      [t.id],
    );
    assert.equal(await store.mutate((tx) => tx.tasks.markSettled(t.id)), true);
    assert.equal(await store.mutate((tx) => tx.tasks.markSettled(t.id)), false);
    assert.deepEqual(
      store.read((tx) => tx.tasks.list({ unsettledTerminal: true })),
      [],
    );
  });

  it('requeueInterrupted puts every running task back in the queue with its session (crash recovery)', async () => {
    await store.mutate((tx) => {
      for (const id of ['r1', 'r2', 'q1']) tx.tasks.insert(input({ id, serverTicketId: `tk-${id}`, schedulable: true }));
      for (const id of ['r1', 'r2']) assert.ok(tx.tasks.claim(id) && tx.tasks.markRunning(id, { sessionId: `s-${id}` }));
    });
    assert.deepEqual((await store.mutate((tx) => tx.tasks.requeueInterrupted())).sort(), ['r1', 'r2']);
    const rows = store.read((tx) => tx.tasks.list());
    assert.deepEqual(
      rows.map((r: OffPeakTask) => [r.id, r.status, r.sessionId]),
      [
        ['q1', 'queued', null],
        ['r1', 'queued', 's-r1'],
        ['r2', 'queued', 's-r2'],
      ],
    );
  });

  it('list filters by status, workspace, ids and ticket presence, in queue order', async () => {
    await store.mutate((tx) => {
      tx.tasks.insert(input({ id: 'a', workspacePath: '/one', serverTicketId: 'tk-a' }));
      clock.advance(1);
      tx.tasks.insert(input({ id: 'b', workspacePath: '/two' }));
    });
    clock.advance(1);
    await store.mutate((tx) => tx.tasks.insert(input({ id: 'c', workspacePath: '/one' })));
    await store.mutate((tx) => tx.tasks.pause('c'));
    const ids = (f: Parameters<StoreTx['tasks']['list']>[0]) => store.read((tx) => tx.tasks.list(f).map((t) => t.id));
    assert.deepEqual(ids({}), ['a', 'b', 'c']);
    assert.deepEqual(ids({ status: 'paused' }), ['c']);
    assert.deepEqual(ids({ status: ['queued', 'paused'], workspaceKey: '/one' }), ['a', 'c']);
    assert.deepEqual(ids({ ids: ['c', 'a'] }), ['a', 'c']);
    assert.deepEqual(ids({ hasTicket: true }), ['a']);
    assert.deepEqual(ids({ hasTicket: false, limit: 1 }), ['b']);
    assert.deepEqual(ids({ status: [] }), []);
    assert.throws(() => ids({ status: 'done' as never }), /unknown status/);
    assert.equal(
      store.read((tx) => tx.tasks.count(['queued'])),
      2,
    );
  });
});

describe('store: random operation sequences agree with an independent model (fast-check)', () => {
  it('applied/refused and the resulting rows match the model for any sequence', async () => {
    const fc = await import('fast-check');
    const { applyToModel, comparable, comparableObserved, expectApplied, observe, perform } =
      await import('../integration/store-workers/model');
    type ModelTask = import('../integration/store-workers/model').ModelTask;
    type Op = import('../integration/store-workers/model').Op;
    const dir = mkdtempSync(path.join(tmpdir(), 'offpeak-store-fc-'));
    const store = await TaskStore.open({ directory: dir, watch: false, durable: false });
    let run = 0;
    const kinds = [
      'pause',
      'continue',
      'start',
      'requeue',
      'complete',
      'fail',
      'cancel',
      'ready',
      'retake',
      'delete',
      'settle',
      'ackSettle',
      'poll',
      'edit',
      'create',
    ] as const;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...kinds), fc.nat(3)), { minLength: 1, maxLength: 30 }), async (steps) => {
          run += 1;
          const ids = [0, 1, 2, 3].map((n) => `fc${run}-${n}`);
          const model = new Map<string, ModelTask>();
          const mismatches = await store.mutate((tx) => {
            const bad: string[] = [];
            steps.forEach(([kind, n], i) => {
              const id = ids[n];
              const op: Op = kind === 'edit' ? { kind, id, title: `t${i}`, prompt: `p${i}` } : ({ kind, id } as Op);
              const current = model.get(id);
              const expected = expectApplied(current, op);
              const applied = perform(tx, op, current);
              if (applied !== expected) bad.push(`${kind} ${id}: applied=${applied}, expected ${expected}`);
              if (applied) model.set(id, applyToModel(current, op));
              const seen = comparableObserved(observe(tx, id));
              const want = model.has(id) ? comparable(model.get(id)!) : undefined;
              if (JSON.stringify(seen) !== JSON.stringify(want))
                bad.push(`${kind} ${id}: row ${JSON.stringify(seen)} != model ${JSON.stringify(want)}`);
            });
            return bad;
          });
          assert.deepEqual(mismatches, []);
        }),
        { numRuns: 60 },
      );
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
