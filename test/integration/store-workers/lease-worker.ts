/**
 * Child process of the lease test: contends for the leader lease for `durationMs`, renewing every
 * `tickMs`, sometimes releasing it. Prints the lease's own timestamps of each holding it was
 * granted (`hold`: start = acquired_at, end = confirmed expires_at) and, on a voluntary release,
 * the moment it stopped acting as leader BEFORE the release was written (`release`).
 * usage: node --import tsx lease-worker.ts <dir> <holder> <ttlMs> <tickMs> <durationMs> <releaseChance>
 */
import { TaskStore } from '../../../src/store';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const [dir, holder, ttlArg, tickArg, durationArg, releaseArg] = process.argv.slice(2);
  const ttl = Number(ttlArg);
  const tick = Number(tickArg);
  const releaseChance = Number(releaseArg);
  const out = (obj: unknown) => process.stdout.write(`${JSON.stringify(obj)}\n`);
  const store = await TaskStore.open({ directory: dir, watch: false });
  out({ t: 'ready' });
  const stopAt = Date.now() + Number(durationArg);
  let token: string | undefined;
  while (Date.now() < stopAt) {
    if (token && Math.random() < releaseChance) {
      out({ t: 'release', token, end: Date.now() });
      await store.releaseLease('leader', token);
      token = undefined;
    } else if (token) {
      const r = await store.renewLease('leader', token, ttl);
      if (r.held) out({ t: 'hold', token, start: r.lease.acquiredAt, end: r.lease.expiresAt });
      else {
        out({ t: 'lost', token });
        token = undefined;
      }
    } else {
      const r = await store.acquireLease('leader', holder, ttl);
      if (r.held) {
        token = r.lease.token;
        out({ t: 'hold', token, start: r.lease.acquiredAt, end: r.lease.expiresAt, acquired: r.acquired });
      }
    }
    await sleep(tick * (0.5 + Math.random()));
  }
  await store.close();
  out({ t: 'done' });
}

main().catch((err: unknown) => {
  process.stdout.write(`${JSON.stringify({ t: 'error', message: (err as Error).stack ?? String(err) })}\n`);
  process.exitCode = 1;
});
