/**
 * Child process of the multi-process store test: performs N random operations on its own tasks in
 * a shared tasks-index.sqlite and prints one JSON line per acknowledged operation (after the
 * mutation promise resolved). It also reads the whole table now and then and reports any task it
 * once saw terminal and later saw non-terminal.
 * Besides its own tasks it races the other workers on SHARED tasks the parent created: running
 * ones (complete / fail / cancel: exactly one may win each) and ready ones (claim + markRunning:
 * exactly one may start each). Those acks carry `shared: true` and no prediction.
 * usage: node --import tsx random-ops-worker.ts <dir> <prefix> <ops> <seed> <shared-count>
 */
import { TaskStore } from '../../../src/store';
import { applyToModel, comparable, comparableObserved, expectApplied, observe, perform, randomOp, rng, type ModelTask } from './model';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

async function main(): Promise<void> {
  const [dir, prefix, opsArg, seedArg, sharedArg] = process.argv.slice(2);
  const shared = Number(sharedArg ?? 0);
  const ops = Number(opsArg);
  const rand = rng(Number(seedArg));
  const out = (obj: unknown) => process.stdout.write(`${JSON.stringify(obj)}\n`);
  const store = await TaskStore.open({ directory: dir, watch: false, lock: { acquireTimeoutMs: 60_000 } });
  const model = new Map<string, ModelTask>();
  const seenTerminal = new Map<string, string>();
  out({ t: 'ready', pid: process.pid });
  for (let seq = 0; seq < ops; seq++) {
    if (shared > 0 && rand() < 0.08) {
      const n = Math.floor(rand() * shared);
      const race = rand() < 0.5 ? 'terminal' : 'start';
      const id = race === 'terminal' ? `shared-running-${n}` : `shared-ready-${n}`;
      const kind = race === 'start' ? 'start' : (['complete', 'fail', 'cancel'] as const)[Math.floor(rand() * 3)];
      const applied = await store.mutate((tx) => {
        if (kind === 'start') return tx.tasks.claim(id) && tx.tasks.markRunning(id, { sessionId: `session-${prefix}` });
        if (kind === 'complete') return tx.tasks.complete(id);
        if (kind === 'fail') return tx.tasks.fail(id, { failureReason: prefix });
        return tx.tasks.cancel(id, { failureReason: prefix });
      });
      out({ t: 'ack', seq, shared: true, op: { kind, id }, applied });
      continue;
    }
    const live = [...model.values()].filter((m) => !m.deleted || rand() < 0.05).map((m) => m.id);
    const op = randomOp(rand, prefix, seq, live);
    const current = model.get(op.id);
    const expected = expectApplied(current, op);
    const applied = await store.mutate((tx) => perform(tx, op, current));
    out({ t: 'ack', seq, op, applied, expected });
    if (applied) model.set(op.id, applyToModel(current, op));
    // Only this worker writes its tasks: the store must show exactly the model, right now.
    const seen = comparableObserved(store.read((tx) => observe(tx, op.id)));
    const want = model.has(op.id) ? comparable(model.get(op.id)!) : undefined;
    if (JSON.stringify(seen) !== JSON.stringify(want)) out({ t: 'lost', seq, op, seen, want });
    if (seq % 10 === 0) {
      const rows = store.read((tx) => tx.tasks.list().map((r) => [r.id, r.status] as const));
      for (const [id, status] of rows) {
        const before = seenTerminal.get(id);
        if (before && before !== status) out({ t: 'regressed', id, before, after: status });
        if (TERMINAL.has(status)) seenTerminal.set(id, status);
      }
    }
  }
  await store.close();
  out({ t: 'done', stats: store.stats, notices: store.notices.map((n) => n.kind) });
}

main().catch((err: unknown) => {
  process.stdout.write(`${JSON.stringify({ t: 'error', message: (err as Error).stack ?? String(err) })}\n`);
  process.exitCode = 1;
});
