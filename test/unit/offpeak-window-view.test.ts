// The panel's view of closed off-peak windows: the availability view carries the opening time,
// and the Queued section shows it with a countdown.
import assert from 'node:assert/strict';
import { availabilityView, withOffPeakWindow } from '../../src/panel/service-views';
import { AvailabilityViewSchema } from '../../src/protocol/webview';
import { offPeakOpeningText } from '../../webview/format';

describe('off-peak window in the panel', () => {
  const enabled = availabilityView({ status: 'enabled', canTakeNumber: 3, checkedAt: 0 }, undefined);

  it('the availability view carries the opening time only while the windows are closed', () => {
    const opensAt = Date.UTC(2026, 11, 1, 16, 0);
    const closed = withOffPeakWindow(enabled, { open: false, opensAt });
    assert.equal(AvailabilityViewSchema.parse(closed).offPeakOpensAt, opensAt);
    assert.equal(withOffPeakWindow(enabled, { open: false, opensAt: null }).offPeakOpensAt, null);
    assert.equal('offPeakOpensAt' in withOffPeakWindow(enabled, { open: true }), false);
    assert.equal('offPeakOpensAt' in withOffPeakWindow(enabled, undefined), false);
  });

  it('says when the windows open, counting down; or that no opening is scheduled', () => {
    const opensAt = Date.UTC(2026, 11, 1, 16, 0);
    const now = opensAt - (3 * 3_600_000 + 12 * 60_000);
    assert.match(offPeakOpeningText(opensAt, now), /^Off-peak opens at \S.* · in 3h 12m$/);
    assert.match(offPeakOpeningText(opensAt, opensAt), / · now$/);
    assert.equal(offPeakOpeningText(null, now), 'Off-peak windows are closed; no opening is scheduled.');
  });
});
