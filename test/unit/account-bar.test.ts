// The account at a glance (docs/flows.md#capacity-and-cost): the panel header's bar and the status
// bar's short form, from the last answer's reading, its age, the reserve and why the queue waits.
import assert from 'node:assert/strict';
import { accountBar, latestAccountReading } from '../../src/core/account-bar';
import type { AccountReading } from '../../src/core/types';
import { statusBarView } from '../../src/panel/task-summary';

// Monday 5 January 2026, 12:00 local time.
const NOW = new Date(2026, 0, 5, 12, 0).getTime();
const reading: AccountReading = {
  at: NOW - 3 * 60_000,
  utilization5h: 0.42,
  utilization7d: 0.71,
  reset5hAt: new Date(2026, 0, 5, 15, 0).getTime(),
  reset7dAt: new Date(2026, 0, 6, 9, 0).getTime(),
};

describe('capacity and cost: the account at a glance', () => {
  it("item 2: the header bar: each window with its utilization and reset, the reading's age, the reserve as a mark on both bars", () => {
    const bar = accountBar(reading, 0.7, NOW)!;
    assert.deepEqual(
      bar.windows.map((w) => [w.label, w.percent, w.resetText, w.overReserve]),
      [
        ['5 h', 42, 'resets 15:00', false],
        ['week', 71, 'resets Tue 09:00', true],
      ],
    );
    assert.equal(bar.reservePercent, 70);
    assert.equal(bar.ageText, 'as of 3 min ago');
    assert.equal(bar.holdingText, 'holding: weekly 71 % ≥ your 70 % reserve · resets Tue 09:00');
    assert.equal(bar.shortText, '5 h 42 % · week 71 %');
  });

  it('item 2: no reserve set: no mark and nothing holds; a window whose reset passed reads 0 %, a reading from before it says so', () => {
    const bar = accountBar(reading, null, NOW)!;
    assert.equal(bar.reservePercent, null);
    assert.equal(bar.holdingText, null);
    const later = accountBar(reading, 0.7, new Date(2026, 0, 5, 16, 0).getTime())!;
    assert.deepEqual([later.windows[0].percent, later.windows[0].resetText], [0, 'reset at 15:00']);
    assert.equal(later.ageText, 'as of 4 h 3 min ago');
    assert.equal(accountBar(null, 0.7, NOW), null, 'no answer read yet: no bar');
  });

  it("item 2: the latest reading over the ledger's rows is the account's; the status bar carries the short form and the hold", () => {
    const older = { ...reading, at: reading.at - 60_000, utilization5h: 0.1 };
    assert.deepEqual(latestAccountReading([{ usage: null }, { usage: { account: older } }, { usage: { account: reading } }]), reading);
    const view = statusBarView({ needsInput: 0, running: 0, queued: 1 }, undefined, 0, null, accountBar(reading, 0.7, NOW));
    assert.equal(view.text, '$(watch) Off-Peak: holding: week 71 %, 1 queued');
    assert.ok(view.tooltip.includes('Account: 5 h 42 % · week 71 % (as of 3 min ago)'), view.tooltip);
    assert.ok(view.tooltip.includes('holding: weekly 71 % ≥ your 70 % reserve · resets Tue 09:00'), view.tooltip);
  });
});
