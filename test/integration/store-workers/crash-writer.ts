/**
 * Child process of the crash test: writes random operations to its own tasks, one at a time,
 * until it is SIGKILLed. Before each mutation it prints an `intent` line, after the mutation
 * promise resolved an `ack` line: so at most one operation (the last intent) is in doubt.
 * usage: node --import tsx crash-writer.ts <dir> <run-id> <seed>
 * (the crash test runs an esbuild bundle of this file, with OFFPEAK_SQL_WASM naming the wasm)
 */
import { TaskStore } from '../../../src/store';
import { applyToModel, expectApplied, perform, randomOp, rng, type ModelTask } from './model';

async function main(): Promise<void> {
  const [dir, runId, seedArg] = process.argv.slice(2);
  const rand = rng(Number(seedArg));
  const out = (obj: unknown) => process.stdout.write(`${JSON.stringify(obj)}\n`);
  const store = await TaskStore.open({
    directory: dir,
    watch: false,
    wasmPath: process.env.OFFPEAK_SQL_WASM,
    lock: { acquireTimeoutMs: 60_000 },
  });
  out({ t: 'ready' });
  const model = new Map<string, ModelTask>();
  for (let seq = 0; seq < 100_000; seq++) {
    const ids = [...model.values()].filter((m) => !m.deleted).map((m) => m.id);
    const op = randomOp(rand, runId, seq, ids);
    const current = model.get(op.id);
    out({ t: 'intent', seq, op });
    const applied = await store.mutate((tx) => perform(tx, op, current));
    out({ t: 'ack', seq, applied, expected: expectApplied(current, op) });
    if (applied) model.set(op.id, applyToModel(current, op));
  }
}

main().catch((err: unknown) => {
  process.stdout.write(`${JSON.stringify({ t: 'error', message: (err as Error).stack ?? String(err) })}\n`);
  process.exitCode = 1;
});
