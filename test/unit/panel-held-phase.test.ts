// A card whose segment the account's usage limit holds says so (docs/flows.md#usage-limits), not "Running".
import assert from 'node:assert/strict';
import { phaseLabel } from '../../webview/format';

describe('card phase during a usage-limit hold', () => {
  const now = Date.UTC(2026, 11, 1, 12, 0);

  it('a running (or not yet admitted) segment held until a reset ahead reads "Held: usage limit"', () => {
    assert.equal(phaseLabel({ phase: 'running', queuePosition: null, usageLimitResetAt: now + 60_000 }, now), 'Held: usage limit');
    assert.equal(
      phaseLabel({ phase: 'waiting_for_admission', queuePosition: null, usageLimitResetAt: now + 60_000 }, now),
      'Held: usage limit',
    );
  });

  it('after the reset, or without one, it is Running again; a queued card keeps its own label', () => {
    assert.equal(phaseLabel({ phase: 'running', queuePosition: null, usageLimitResetAt: now - 1 }, now), 'Running');
    assert.equal(phaseLabel({ phase: 'running', queuePosition: null, usageLimitResetAt: null }, now), 'Running');
    assert.equal(phaseLabel({ phase: 'in_queue', queuePosition: 2, usageLimitResetAt: now + 60_000 }, now), 'In queue · #2');
  });
});
