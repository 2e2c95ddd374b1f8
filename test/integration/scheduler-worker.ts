// One scheduler process for the two-process single-flight test (not a test file itself).
// Both workers act as lease holders ON PURPOSE: the claim transaction alone must keep a task from
// being dispatched twice. The dispatcher writes a line per dispatch BEFORE markRunning, so a
// double dispatch would show even if the guarded transition refused the second one.
//   node --import tsx test/integration/scheduler-worker.ts <dbDir> <dispatchLog> <name>
import fs from 'node:fs';
import { systemClock } from '../../src/core/clock';
import { Scheduler } from '../../src/scheduler/scheduler';
import { TaskStore } from '../../src/store';

async function main(): Promise<void> {
  const [dbDir, dispatchLog, name] = process.argv.slice(2);
  const store = await TaskStore.open({ directory: dbDir, clock: systemClock, durable: false, watch: false });
  let dispatched = 0;
  const scheduler = new Scheduler({
    store,
    clock: systemClock,
    isLeader: () => true,
    maxClaimsPerTick: 1,
    idleTickMs: 60_000,
    dispatcher: {
      async dispatch(task) {
        fs.appendFileSync(dispatchLog, `${task.id} ${name}\n`);
        dispatched++;
        const ok = await store.mutate((tx) => tx.tasks.markRunning(task.id, { sessionId: `s-${task.id}` }));
        return ok ? { status: 'started' } : { status: 'refused', reason: 'markRunning refused' };
      },
    },
  });
  scheduler.start();
  let rounds = 0;
  let claimRounds = 0;
  for (;;) {
    const report = await scheduler.tick();
    await scheduler.idle();
    rounds++;
    if (report.claimed.length > 0) claimRounds++;
    else if (store.read((tx) => tx.tasks.count('queued')) === 0) break;
  }
  await scheduler.stop();
  await store.close();
  process.stdout.write(JSON.stringify({ name, rounds, claimRounds, dispatched }) + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(String((err as Error).stack ?? err) + '\n');
  process.exit(1);
});
