/**
 * 4 real Node processes x 500 random operations on ONE tasks-index.sqlite. Each worker owns its
 * tasks, so replaying its acknowledged operations with the model gives the exact state every task
 * must have at the end: any lost or torn write shows up as a difference. Every worker also checks
 * its task right after each ack, and watches all tasks for a terminal state going back.
 * The workers also race each other on shared rows: exactly one terminal transition may win each
 * shared running task, exactly one worker may start each shared ready task.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TaskStore } from '../../src/store';
import { runJsonLinesWorker, type WorkerRun } from './store-workers/run-worker';
import { applyToModel, comparable, comparableObserved, observe, type ModelTask, type Op } from './store-workers/model';

const WORKER = path.join(__dirname, 'store-workers', 'random-ops-worker.ts');
const WORKERS = 4;
const OPS = 500;
const SHARED = 15;

interface Line {
  t: string;
  seq?: number;
  op?: Op;
  applied?: boolean;
  expected?: boolean;
  [k: string]: unknown;
}

function runWorker(dir: string, prefix: string, seed: number): Promise<WorkerRun<Line>> {
  return runJsonLinesWorker<Line>(WORKER, [dir, prefix, String(OPS), String(seed), String(SHARED)]);
}

describe('store across processes', function () {
  this.timeout(240_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-store-mp-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`${WORKERS} processes x ${OPS} random operations: every acknowledged operation is present, none lost, no terminal state regressed`, async () => {
    const seedBase = Number(process.env.STORE_MP_SEED ?? Date.now() % 100_000);
    const prefixes = Array.from({ length: WORKERS }, (_, i) => `w${i}`);
    const setup = await TaskStore.open({ directory: dir, watch: false });
    await setup.mutate((tx) => {
      for (let n = 0; n < SHARED; n++) {
        for (const kind of ['running', 'ready']) {
          const id = `shared-${kind}-${n}`;
          tx.tasks.insert({
            id,
            title: id,
            prompt: `shared ${id}`,
            permissionMode: 'default',
            workspacePath: '/shared',
            serverTicketId: `${id}#1`,
            schedulable: true,
          });
          if (kind === 'running') assert.ok(tx.tasks.claim(id) && tx.tasks.markRunning(id, { sessionId: 'setup' }));
        }
      }
    });
    await setup.close();
    const results = await Promise.all(prefixes.map((p, i) => runWorker(dir, p, seedBase + i)));
    const store = await TaskStore.open({ directory: dir, watch: false });
    try {
      let totalAcks = 0;
      const sharedAcks: Line[] = [];
      let appliedCount = 0;
      const kinds = new Set<string>();
      for (const [i, r] of results.entries()) {
        const ctx = `worker ${prefixes[i]} (STORE_MP_SEED=${seedBase})`;
        assert.equal(
          r.code,
          0,
          `${ctx} exited ${r.code}: ${r.stderr.slice(-2000)} ${JSON.stringify(r.lines.filter((l) => l.t === 'error'))}`,
        );
        const problems = r.lines.filter((l) => l.t === 'lost' || l.t === 'regressed' || l.t === 'error');
        assert.deepEqual(problems, [], `${ctx} saw lost writes or regressions`);
        const allAcks = r.lines.filter((l) => l.t === 'ack');
        assert.equal(allAcks.length, OPS, `${ctx} acknowledged every operation`);
        assert.deepEqual(
          allAcks.map((a) => a.seq),
          Array.from({ length: OPS }, (_, k) => k),
        );
        sharedAcks.push(...allAcks.filter((a) => a.shared).map((a) => ({ ...a, worker: prefixes[i] })));
        const acks = allAcks.filter((a) => !a.shared);
        const mismatched = acks.filter((a) => a.applied !== a.expected);
        assert.deepEqual(mismatched, [], `${ctx}: the store applied/refused exactly as the state machine says`);
        // Replay the acknowledged operations: the exact expected final state of this worker's tasks.
        const model = new Map<string, ModelTask>();
        const terminalAcked = new Map<string, string>();
        for (const a of acks) {
          totalAcks += 1;
          kinds.add(a.op!.kind);
          if (!a.applied) continue;
          appliedCount += 1;
          const next = applyToModel(model.get(a.op!.id), a.op!);
          if (['complete', 'fail', 'cancel'].includes(a.op!.kind)) terminalAcked.set(a.op!.id, next.status);
          model.set(a.op!.id, next);
        }
        for (const [id, m] of model) {
          const seen = store.read((tx) => observe(tx, id));
          assert.deepEqual(comparableObserved(seen), comparable(m), `${ctx}: final state of ${id}`);
          const terminal = terminalAcked.get(id);
          if (terminal && !m.deleted) assert.equal(seen?.status, terminal, `${ctx}: acknowledged terminal state of ${id} kept`);
        }
        const own = store.read((tx) => tx.tasks.list().filter((t) => t.id.startsWith(`${prefixes[i]}-`)));
        assert.equal(own.length, [...model.values()].filter((m) => !m.deleted).length, `${ctx}: no extra or missing rows`);
      }
      // Row-level races across processes: at most one winner per shared task, and it is what the row shows.
      for (let n = 0; n < SHARED; n++) {
        for (const kind of ['running', 'ready']) {
          const id = `shared-${kind}-${n}`;
          const winners = sharedAcks.filter((a) => a.op!.id === id && a.applied);
          const attempts = sharedAcks.filter((a) => a.op!.id === id);
          assert.ok(winners.length <= 1, `${id}: ${winners.length} winners ${JSON.stringify(winners)}`);
          if (attempts.length > 0) assert.equal(winners.length, 1, `${id}: the first attempt always wins`);
          const row = store.read((tx) => tx.tasks.get(id))!;
          const want =
            winners.length === 0
              ? kind === 'running'
                ? 'running'
                : 'queued'
              : ({ complete: 'completed', fail: 'failed', cancel: 'cancelled', start: 'running' } as Record<string, string>)[
                  winners[0].op!.kind
                ];
          assert.equal(row.status, want, `${id} shows the winner's transition`);
          if (kind === 'ready' && winners.length === 1) assert.equal(row.sessionId, `session-${winners[0].worker}`);
        }
      }
      totalAcks += sharedAcks.length;
      assert.ok(sharedAcks.length > 0, 'the shared races happened');
      assert.equal(totalAcks, WORKERS * OPS);
      assert.ok(appliedCount > WORKERS * OPS * 0.3, `a meaningful share of operations applied (${appliedCount})`);
      assert.ok(
        ['create', 'edit', 'delete', 'retake', 'settle', 'start', 'complete', 'cancel'].every((k) => kinds.has(k)),
        'all operation kinds exercised',
      );
    } finally {
      await store.close();
    }
  });
});
