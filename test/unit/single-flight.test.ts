import assert from 'node:assert/strict';
import { CoalescingRun, SingleFlight } from '../../src/core/single-flight';

describe('SingleFlight', () => {
  it('a call while one is in flight shares it; the next call after it settles starts a new run', async () => {
    const flight = new SingleFlight<number>();
    let starts = 0;
    let finish!: (n: number) => void;
    const start = () => {
      starts += 1;
      return new Promise<number>((resolve) => (finish = resolve));
    };
    const a = flight.run(start);
    const b = flight.run(start);
    assert.equal(a, b);
    finish(7);
    assert.deepEqual(await Promise.all([a, b]), [7, 7]);
    assert.equal(starts, 1);
    const c = flight.run(start);
    finish(8);
    assert.equal(await c, 8);
    assert.equal(starts, 2);
  });

  it('idle() waits for the run in flight and does not throw when it failed', async () => {
    const flight = new SingleFlight<void>();
    let fail!: (e: Error) => void;
    const run = flight.run(() => new Promise<void>((_, reject) => (fail = reject)));
    let idled = false;
    const idle = flight.idle().then(() => (idled = true));
    await Promise.resolve();
    assert.equal(idled, false);
    fail(new Error('check failed'));
    await assert.rejects(run, /check failed/);
    await idle;
    assert.equal(idled, true);
    await flight.idle(); // nothing in flight: resolves at once
  });
});

describe('CoalescingRun', () => {
  it('requests during a run coalesce into exactly one more run after it; a failed run is reported and does not stop the next', async () => {
    const finishers: ((error?: Error) => void)[] = [];
    const errors: unknown[] = [];
    const run = new CoalescingRun(
      () => new Promise<void>((resolve, reject) => finishers.push((error) => (error ? reject(error) : resolve()))),
      (e) => errors.push(e),
    );
    run.request();
    run.request();
    run.request();
    assert.equal(finishers.length, 1, 'one run at a time');
    finishers[0](new Error('disk busy'));
    await new Promise((r) => setImmediate(r));
    assert.equal(finishers.length, 2, 'the two requests made meanwhile became one more run');
    assert.deepEqual(
      errors.map((e) => (e as Error).message),
      ['disk busy'],
    );
    let idled = false;
    const idle = run.idle().then(() => (idled = true));
    await Promise.resolve();
    assert.equal(idled, false, 'idle waits for the run in flight');
    finishers[1]();
    await idle;
    assert.equal(finishers.length, 2, 'nothing was asked for during the second run');
  });
});
