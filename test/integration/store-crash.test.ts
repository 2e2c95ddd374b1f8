/**
 * Crash test: writer processes are SIGKILLed at random moments (during start-up, while waiting
 * for the lock, mid-transaction, mid-persist...) 50 times (12 in the Windows lane). After every kill the DB must
 * open, and hold every acknowledged operation of every run so far: each task must be exactly in
 * the state its acknowledged operations give, or that plus the one operation that was in flight.
 *
 * The writer is bundled once with esbuild (the project's bundler) and run with plain node: 50+
 * tsx start-ups cost seconds each on a loaded 2-core machine, a bundle starts in a fraction.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as esbuild from 'esbuild';
import { TaskStore } from '../../src/store';
import { defaultWasmPath } from '../../src/store/db/sqljs';
import { applyToModel, comparable, comparableObserved, observe, rng, type ModelTask, type Op } from './store-workers/model';

const WRITER = path.join(__dirname, 'store-workers', 'crash-writer.ts');
// Fewer in the Windows lane (.ci/windows-lane.sh, its time budget): a process starts there in seconds.
const KILLS = process.env.OFFPEAK_WINDOWS_LANE === '1' ? 12 : 50;
const PARALLEL = 3;

interface Run {
  id: string;
  acked: Array<{ seq: number; op: Op; applied: boolean; expected: boolean }>;
  inFlight: Op | undefined;
  beforeReady: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Spawns a writer and SIGKILLs it at a random moment: 1 in 5 during start-up (opening, maybe
 * migrating or repairing), the others after a random number of acknowledged operations plus a
 * random sub-operation delay, so the kill lands anywhere in lock / transaction / persist.
 */
function runAndKill(bundle: string, dir: string, id: string, seed: number, rand: () => number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundle, dir, id, String(seed)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, OFFPEAK_SQL_WASM: defaultWasmPath() },
    });
    let buf = '';
    let ready = false;
    let killed = false;
    let acks = 0;
    const killDuringStartup = rand() < 0.2;
    const killAfterAcks = Math.floor(rand() * 12);
    const kill = () => {
      if (!killed) {
        killed = true;
        child.kill('SIGKILL');
      }
    };
    if (killDuringStartup) setTimeout(kill, rand() * 400);
    child.stdout.on('data', (d: Buffer) => {
      const text = d.toString();
      buf += text;
      if (!ready && buf.includes('"t":"ready"')) ready = true;
      acks += text.split('"t":"ack"').length - 1;
      if (!killDuringStartup && ready && acks >= killAfterAcks && !killed) setTimeout(kill, rand() * 15);
    });
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      if (signal !== 'SIGKILL') return reject(new Error(`writer ${id} ended by itself (${signal}): ${buf.slice(-500)}`));
      const run: Run = { id, acked: [], inFlight: undefined, beforeReady: !ready };
      const lines = buf.split('\n');
      lines.pop(); // possibly cut by the kill
      for (const line of lines) {
        const l = JSON.parse(line) as { t: string; seq: number; op: Op; applied: boolean; expected: boolean; message?: string };
        if (l.t === 'error') return reject(new Error(`writer ${id}: ${l.message}`));
        if (l.t === 'intent') run.inFlight = l.op;
        if (l.t === 'ack') {
          run.acked.push({ seq: l.seq, op: run.inFlight!, applied: l.applied, expected: l.expected });
          run.inFlight = undefined;
        }
      }
      resolve(run);
    });
  });
}

/** Checks that the DB opens and holds every acknowledged operation of `runs`. */
async function verify(dir: string, runs: Run[], seed: number): Promise<void> {
  const store = await TaskStore.open({ directory: dir, watch: false });
  try {
    for (const run of runs) {
      const model = new Map<string, ModelTask>();
      for (const a of run.acked) {
        assert.equal(a.applied, a.expected, `run ${run.id} seq ${a.seq} (STORE_CRASH_SEED=${seed}): applied as the state machine says`);
        if (a.applied) model.set(a.op.id, applyToModel(model.get(a.op.id), a.op));
      }
      const doubt = run.inFlight;
      for (const [id, m] of model) {
        const seen = comparableObserved(store.read((tx) => observe(tx, id)));
        const allowed = [comparable(m)];
        if (doubt && doubt.id === id) allowed.push(comparable(applyToModel(m, doubt)));
        assert.ok(
          allowed.some((a) => JSON.stringify(a) === JSON.stringify(seen)),
          `run ${run.id} (STORE_CRASH_SEED=${seed}): task ${id} lost an acknowledged operation\n seen ${JSON.stringify(seen)}\n want ${allowed.map((a) => JSON.stringify(a)).join('\n   or ')}`,
        );
      }
      if (doubt?.kind === 'create' && !model.has(doubt.id)) {
        const seen = store.read((tx) => observe(tx, doubt.id));
        if (seen)
          assert.deepEqual(comparableObserved(seen), comparable(applyToModel(undefined, doubt)), 'an in-flight create is all or nothing');
      }
    }
  } finally {
    await store.close();
  }
}

describe('store crash safety', function () {
  this.timeout(300_000);
  let dir: string;
  let bundle: string;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-store-crash-'));
    bundle = path.join(dir, 'crash-writer.cjs');
    await esbuild.build({
      entryPoints: [WRITER],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      outfile: bundle,
      logLevel: 'warning',
    });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`SIGKILL at random moments ${KILLS} times: the DB always opens and holds every acknowledged operation`, async () => {
    const seed = Number(process.env.STORE_CRASH_SEED ?? Date.now() % 100_000);
    const rand = rng(seed);
    const runs: Run[] = [];
    let started = 0;
    const slot = async () => {
      while (started < KILLS) {
        const n = started++;
        const run = await runAndKill(bundle, dir, `r${n}`, seed * 100 + n, rand);
        runs.push(run);
        await verify(dir, [run], seed);
        await sleep(rand() * 50);
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, () => slot()));
    assert.equal(runs.length, KILLS);
    // Later runs and crash recovery never clobbered an earlier run's acknowledged work.
    await verify(dir, runs, seed);
    const acked = runs.reduce((n, r) => n + r.acked.length, 0);
    const inDoubt = runs.filter((r) => r.inFlight).length;
    assert.ok(acked > KILLS, `writers got work done between kills (${acked} acknowledged operations, seed ${seed})`);
    assert.ok(inDoubt > KILLS / 4, `kills landed mid-operation (${inDoubt} of ${KILLS})`);
    const corrupt = readdirSync(dir).filter((f) => f.includes('.corrupt-'));
    assert.deepEqual(corrupt, [], 'no kill ever produced a corrupt file');
  });
});
