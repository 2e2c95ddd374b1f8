/**
 * Child process of the fault-injection store test: N random operations on its own tasks in a
 * shared tasks-index.sqlite, through a disk that fails reads, writes, renames and reloads at
 * random (test/fixtures/faulty-fs.ts). Prints one JSON line per operation: `ack` once the
 * mutation resolved, `failed` (with the error code) once it rejected. After each ack it reads the
 * task back; a read must show exactly the acknowledged state (reads keep serving the last good copy
 * while the disk fails).
 * usage: node --import tsx faulty-disk-worker.ts <dir> <prefix> <ops> <seed> <rate>
 */
import { StoreError, TaskStore } from '../../../src/store';
import { faultyFs } from '../../fixtures/faulty-fs';
import { applyToModel, comparable, comparableObserved, expectApplied, observe, perform, randomOp, rng, type ModelTask } from './model';

async function main(): Promise<void> {
  const [dir, prefix, opsArg, seedArg, rateArg] = process.argv.slice(2);
  const ops = Number(opsArg);
  const rand = rng(Number(seedArg));
  const disk = faultyFs({
    rate: Number(rateArg),
    codes: ['EBUSY', 'EIO', 'EMFILE', 'EPERM', 'ENOSPC'],
    random: rng(Number(seedArg) + 7919),
  });
  const out = (obj: unknown) => process.stdout.write(`${JSON.stringify(obj)}\n`);
  disk.enabled = false;
  // 4 attempts (not the default 6): at this fault rate a few operations exhaust them and must fail loudly.
  const store = await TaskStore.open({
    directory: dir,
    watch: false,
    fs: disk.fs,
    ioRetry: { attempts: 4, baseDelayMs: 5 },
    lock: { acquireTimeoutMs: 60_000 },
  });
  disk.enabled = true;
  const model = new Map<string, ModelTask>();
  for (let seq = 0; seq < ops; seq++) {
    const live = [...model.values()].filter((m) => !m.deleted).map((m) => m.id);
    const op = randomOp(rand, prefix, seq, live);
    const current = model.get(op.id);
    let applied: boolean;
    try {
      applied = await store.mutate((tx) => perform(tx, op, current));
    } catch (err) {
      out({ t: 'failed', seq, op, code: err instanceof StoreError ? err.code : String(err) });
      continue;
    }
    out({ t: 'ack', seq, op, applied, expected: expectApplied(current, op) });
    if (applied) model.set(op.id, applyToModel(current, op));
    const seen = comparableObserved(store.read((tx) => observe(tx, op.id)));
    const want = model.has(op.id) ? comparable(model.get(op.id)!) : undefined;
    if (JSON.stringify(seen) !== JSON.stringify(want)) out({ t: 'lost', seq, op, seen, want });
  }
  disk.enabled = false;
  await store.close();
  out({ t: 'done', stats: store.stats, injected: disk.injected, notices: store.notices.map((n) => n.kind) });
}

main().catch((err: unknown) => {
  process.stdout.write(`${JSON.stringify({ t: 'error', message: (err as Error).stack ?? String(err) })}\n`);
  process.exitCode = 1;
});
