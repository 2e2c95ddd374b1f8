import assert from 'node:assert/strict';
import { SerialRestarts } from '../../src/core/serial-restarts';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Starts and stops that take a few event-loop turns, counting how many run at once. */
function engines() {
  let made = 0;
  const state = { running: new Set<number>(), most: 0, starts: 0, stops: [] as (number | undefined)[], failNext: false };
  const start = async (): Promise<number | undefined> => {
    state.starts++;
    await tick();
    await tick();
    if (state.failNext) {
      state.failNext = false;
      return undefined;
    }
    const id = ++made;
    state.running.add(id);
    state.most = Math.max(state.most, state.running.size);
    return id;
  };
  const stop = async (id: number | undefined): Promise<void> => {
    state.stops.push(id);
    await tick();
    if (id !== undefined) state.running.delete(id);
  };
  return { state, start, stop };
}

describe('SerialRestarts (the window engine across setting changes; docs/architecture.md#personal-mode)', () => {
  it('restarts asked for while one runs become one more restart, and two never run at once', async () => {
    const { state, start, stop } = engines();
    const errors: unknown[] = [];
    const restarts = new SerialRestarts(start, stop, (e) => errors.push(e));
    assert.equal(await restarts.whenStarted(), 1);
    // A burst: the second and third come while the first restart stops engine 1.
    restarts.restart();
    await tick();
    restarts.restart();
    restarts.restart();
    const last = await restarts.whenStarted();
    assert.equal(state.starts, 3, 'the first start, the restart, and one more for the two asked for meanwhile');
    assert.equal(last, 3);
    assert.deepEqual([...state.running], [3], 'only the last one runs');
    assert.equal(state.most, 1, 'never two at once');
    assert.equal(restarts.liveCount, 1);
    assert.deepEqual(state.stops, [1, 2]);
    assert.deepEqual(errors, []);
  });

  it('while a restart runs, whenStarted gives the one it starts, not the one it stops', async () => {
    const { start, stop } = engines();
    const restarts = new SerialRestarts(start, stop, () => undefined);
    assert.equal(await restarts.whenStarted(), 1);
    restarts.restart();
    assert.equal(await restarts.whenStarted(), 2);
  });

  it('stopAll waits for the restart under way (which then starts nothing), and nothing starts after it', async () => {
    const { state, start, stop } = engines();
    const restarts = new SerialRestarts(start, stop, () => undefined);
    restarts.restart(); // asked for before the first start has finished
    const stopped = restarts.stopAll();
    restarts.restart(); // after stop: ignored
    await stopped;
    await tick();
    assert.deepEqual([...state.running], [], 'nothing runs');
    assert.equal(restarts.liveCount, 0);
    assert.equal(state.starts, 1, 'only the first start: the restart under way stopped it and started none');
    assert.deepEqual(
      state.stops.filter((id) => id !== undefined),
      [1],
    );
  });

  it('a start that failed is not counted as running, is still stopped (it may have half started), and the next restart starts again', async () => {
    const { state, start, stop } = engines();
    state.failNext = true;
    const restarts = new SerialRestarts(start, stop, () => undefined);
    assert.equal(await restarts.whenStarted(), undefined);
    assert.equal(restarts.liveCount, 0);
    restarts.restart();
    assert.equal(await restarts.whenStarted(), 1);
    assert.deepEqual(state.stops, [undefined], 'the failed start was stopped');
    assert.equal(restarts.liveCount, 1);
  });
});
