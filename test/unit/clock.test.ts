import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock';

describe('ManualClock', () => {
  it('moves only when advanced', () => {
    const clock = new ManualClock(1000);
    assert.equal(clock.now(), 1000);
    assert.equal(clock.advance(500), 1500);
    assert.equal(clock.now(), 1500);
  });
});
