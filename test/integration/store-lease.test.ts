/**
 * Leader lease across real processes: two contend (renewing, sometimes releasing); each reports
 * its holdings with the lease's own timestamps; no two holdings may overlap. Then the holder is
 * SIGKILLed and the other takes over as soon as it sees the holder's process gone, never before.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TaskStore } from '../../src/store';

const WORKER = path.join(__dirname, 'store-workers', 'lease-worker.ts');
const TTL = 700;
const TICK = 120;

interface Holding {
  holder: string;
  token: string;
  start: number;
  end: number;
  released: boolean;
}
interface Worker {
  name: string;
  child: ChildProcess;
  lines: Array<Record<string, unknown>>;
  exited: Promise<void>;
}

function startWorker(dir: string, name: string, durationMs: number, releaseChance: number): Worker {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', WORKER, dir, name, String(TTL), String(TICK), String(durationMs), String(releaseChance)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const w: Worker = { name, child, lines: [], exited: new Promise((r) => child.on('close', () => r())) };
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      w.lines.push({ ...(JSON.parse(buf.slice(0, nl)) as Record<string, unknown>), holder: name });
      buf = buf.slice(nl + 1);
    }
  });
  return w;
}

function holdings(workers: Worker[]): Holding[] {
  const byToken = new Map<string, Holding>();
  for (const w of workers) {
    for (const l of w.lines) {
      const token = l.token as string;
      if (l.t === 'hold') {
        const h = byToken.get(token) ?? { holder: w.name, token, start: l.start as number, end: l.end as number, released: false };
        assert.equal(h.start, l.start, 'a holding keeps its acquired_at while renewed');
        if (!h.released) h.end = Math.max(h.end, l.end as number);
        byToken.set(token, h);
      }
      if (l.t === 'release') {
        const h = byToken.get(token)!;
        h.end = Math.min(h.end, l.end as number);
        h.released = true;
      }
    }
  }
  return [...byToken.values()].sort((a, b) => a.start - b.start);
}

function assertNoOverlap(hs: Holding[]): void {
  for (let i = 1; i < hs.length; i++) {
    assert.ok(hs[i].start >= hs[i - 1].end, `holdings overlap: ${JSON.stringify(hs[i - 1])} and ${JSON.stringify(hs[i])}`);
  }
}

const until = async (cond: () => boolean, what: string, timeoutMs = 60_000) => {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('leader lease across processes', function () {
  this.timeout(180_000);
  let dir: string;
  const workers: Worker[] = [];
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-store-lease-'));
  });
  after(async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    rmSync(dir, { recursive: true, force: true });
  });

  it('two processes contend: exactly one holds at any time; killing the holder hands the lease over once its process is gone, never before', async () => {
    // create the DB first so both workers start on equal terms
    await (await TaskStore.open({ directory: dir, watch: false })).close();
    const a = startWorker(dir, 'A', 60_000, 0.2);
    const b = startWorker(dir, 'B', 60_000, 0.2);
    workers.push(a, b);
    // contend until the lease changed hands a few times
    await until(
      () => new Set(holdings(workers).map((h) => h.holder)).size === 2 && holdings(workers).length >= 6,
      'the lease to change hands',
    );
    const before = holdings(workers);
    assertNoOverlap(before);

    // SIGKILL whoever holds it now (its latest holding is not released)
    const latest = before[before.length - 1];
    assert.equal(latest.released, false);
    const victim = latest.holder === 'A' ? a : b;
    const survivor = victim === a ? b : a;
    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    await victim.exited;
    const dead = holdings([victim])
      .filter((h) => h.holder === victim.name)
      .pop()!;
    await until(() => holdings([survivor]).some((h) => h.start >= dead.start && h.token !== dead.token), 'the survivor to take over');
    const takeover = holdings([survivor]).find((h) => h.start >= dead.start && h.token !== dead.token)!;
    assert.ok(takeover.start >= killedAt, `takeover at ${takeover.start} only after the holder was killed at ${killedAt}`);
    survivor.child.kill('SIGTERM');
    await survivor.exited;

    const all = holdings(workers);
    // the killed holder held until it died (its process gone, its lease may be taken before expiry)
    assertNoOverlap(all.map((h) => (h.token === dead.token ? { ...h, end: Math.min(h.end, killedAt) } : h)));
    for (const w of workers)
      assert.deepEqual(
        w.lines.filter((l) => l.t === 'error'),
        [],
        `${w.name} had no errors`,
      );
    const store = await TaskStore.open({ directory: dir, watch: false });
    try {
      const row = store.readLease('leader');
      assert.ok(row, 'the lease row exists');
      assert.ok(
        all.some((h) => h.token === row.token),
        'the row is one of the reported holdings',
      );
    } finally {
      await store.close();
    }
  });
});
