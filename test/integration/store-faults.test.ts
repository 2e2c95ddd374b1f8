/**
 * I/O errors are not corruption: 3 real Node processes x 500 random operations (100 in the Windows lane) on ONE
 * tasks-index.sqlite, each through a disk that throws EBUSY / EIO / EMFILE / EPERM / ENOSPC at
 * random points of its reads, writes, renames and reloads (test/fixtures/faulty-fs.ts). Replaying
 * each worker's acknowledged operations must give exactly the final file; every failed operation
 * was reported as a failed mutation; nothing was ever moved aside as corrupt.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TaskStore } from '../../src/store';
import { runJsonLinesWorker, type WorkerRun } from './store-workers/run-worker';
import { applyToModel, comparable, comparableObserved, observe, type ModelTask, type Op } from './store-workers/model';

const WORKER = path.join(__dirname, 'store-workers', 'faulty-disk-worker.ts');
const WORKERS = 3;
// Fewer in the Windows lane (.ci/windows-lane.sh, its time budget).
const OPS = process.env.OFFPEAK_WINDOWS_LANE === '1' ? 100 : 500;
/** Per faultable call: about a third of all attempts meet a fault, a few operations fail every retry. */
const FAULT_RATE = 0.08;

interface Line {
  t: string;
  seq?: number;
  op?: Op;
  applied?: boolean;
  expected?: boolean;
  code?: string;
  stats?: Record<string, number>;
  injected?: Record<string, number>;
  notices?: string[];
}

function runWorker(dir: string, prefix: string, seed: number): Promise<WorkerRun<Line>> {
  return runJsonLinesWorker<Line>(WORKER, [dir, prefix, String(OPS), String(seed), String(FAULT_RATE)]);
}

describe('store on a failing disk', function () {
  this.timeout(300_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-store-faults-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`${WORKERS} processes x ${OPS} operations with EBUSY/EIO/EMFILE injected: every acknowledged operation present, every failed one reported failed and absent, nothing moved aside`, async () => {
    const seedBase = Number(process.env.STORE_FAULT_SEED ?? Date.now() % 100_000);
    const prefixes = Array.from({ length: WORKERS }, (_, i) => `f${i}`);
    const results = await Promise.all(prefixes.map((p, i) => runWorker(dir, p, seedBase + i * 101)));
    const store = await TaskStore.open({ directory: dir, watch: false });
    try {
      let failedTotal = 0;
      let ackedTotal = 0;
      const injected: Record<string, number> = {};
      for (const [i, r] of results.entries()) {
        const ctx = `worker ${prefixes[i]} (STORE_FAULT_SEED=${seedBase})`;
        assert.equal(
          r.code,
          0,
          `${ctx} exited ${r.code}: ${r.stderr.slice(-2000)} ${JSON.stringify(r.lines.filter((l) => l.t === 'error'))}`,
        );
        assert.deepEqual(
          r.lines.filter((l) => l.t === 'lost' || l.t === 'error'),
          [],
          `${ctx}: a read right after an ack showed the acknowledged state`,
        );
        const outcomes = r.lines.filter((l) => l.t === 'ack' || l.t === 'failed');
        assert.deepEqual(
          outcomes.map((l) => l.seq),
          Array.from({ length: OPS }, (_, k) => k),
          `${ctx}: every operation was answered exactly once`,
        );
        const failed = outcomes.filter((l) => l.t === 'failed');
        assert.deepEqual(
          [...new Set(failed.map((l) => l.code))].filter((c) => c !== 'IO'),
          [],
          `${ctx}: failures are reported as store I/O errors`,
        );
        const acks = outcomes.filter((l) => l.t === 'ack');
        assert.deepEqual(
          acks.filter((a) => a.applied !== a.expected),
          [],
          `${ctx}: applied/refused as the state machine says`,
        );
        failedTotal += failed.length;
        ackedTotal += acks.length;
        const done = r.lines.find((l) => l.t === 'done')!;
        for (const [call, n] of Object.entries(done.injected ?? {})) injected[call] = (injected[call] ?? 0) + n;
        assert.ok(!done.notices!.includes('corrupt-moved-aside'), `${ctx}: never took a failing disk for a corrupt file`);

        // Replay only the acknowledged operations: the exact final state of this worker's tasks.
        const model = new Map<string, ModelTask>();
        for (const a of acks) if (a.applied) model.set(a.op!.id, applyToModel(model.get(a.op!.id), a.op!));
        for (const [id, m] of model) {
          assert.deepEqual(comparableObserved(store.read((tx) => observe(tx, id))), comparable(m), `${ctx}: final state of ${id}`);
        }
        const own = store.read((tx) => tx.tasks.list().filter((t) => t.id.startsWith(`${prefixes[i]}-`)));
        assert.equal(own.length, [...model.values()].filter((m) => !m.deleted).length, `${ctx}: no row of a failed create, none missing`);
      }
      assert.deepEqual(
        readdirSync(dir).filter((name) => name.includes('.corrupt-')),
        [],
        'no file was moved aside',
      );
      for (const call of ['read', 'write', 'rename', 'open'])
        assert.ok((injected[call] ?? 0) > 0, `faults were injected into ${call} (${JSON.stringify(injected)})`);
      assert.ok(failedTotal > 0, 'some operations met faults on every retry and were reported failed');
      assert.ok(ackedTotal > WORKERS * OPS * 0.8, `most operations got through their retries (${ackedTotal})`);
    } finally {
      await store.close();
    }
  });
});
