import assert from 'node:assert/strict';
import { OffPeakWindows, parseDailyRange } from '../../src/gateway/authority/windows';

const shanghai = (h: number, m = 0) => Date.UTC(2026, 0, 5, h - 8, m); // Asia/Shanghai is UTC+8, no DST

describe('gateway off-peak windows (IANA zones via Intl)', () => {
  it('default shape: off-peak outside 14:00–18:00 Asia/Shanghai', () => {
    const w = new OffPeakWindows('Asia/Shanghai', { kind: 'outside', ranges: [parseDailyRange('14:00-18:00')] });
    assert.equal(w.isOpen(shanghai(13, 59)), true);
    assert.equal(w.isOpen(shanghai(14, 0)), false);
    assert.equal(w.isOpen(shanghai(17, 59)), false);
    assert.equal(w.isOpen(shanghai(18, 0)), true);
    assert.equal(w.nextOpenAt(shanghai(15, 30)), shanghai(18, 0));
    assert.equal(w.nextOpenAt(shanghai(9, 0)), shanghai(9, 0));
    assert.match(w.describe(), /14:00–18:00 \(Asia\/Shanghai\)/);
  });

  it('ranges that wrap past midnight, inside mode', () => {
    const w = new OffPeakWindows('Asia/Shanghai', { kind: 'inside', ranges: [parseDailyRange('22:00-06:00')] });
    assert.equal(w.isOpen(shanghai(23)), true);
    assert.equal(w.isOpen(shanghai(5, 59)), true);
    assert.equal(w.isOpen(shanghai(6)), false);
    assert.equal(w.nextOpenAt(shanghai(12)), shanghai(22));
  });

  it('follows DST in a zone that has it (Europe/Berlin, 2026-03-29)', () => {
    const w = new OffPeakWindows('Europe/Berlin', { kind: 'inside', ranges: [parseDailyRange('09:00-10:00')] });
    // 09:30 local on the first summer-time day is 07:30 UTC (UTC+2), the day before 08:30 UTC (UTC+1).
    assert.equal(w.isOpen(Date.UTC(2026, 2, 29, 7, 30)), true);
    assert.equal(w.isOpen(Date.UTC(2026, 2, 28, 8, 30)), true);
    assert.equal(w.isOpen(Date.UTC(2026, 2, 29, 8, 30)), false);
    assert.equal(w.nextOpenAt(Date.UTC(2026, 2, 28, 12, 0)), Date.UTC(2026, 2, 29, 7, 0));
  });

  it('opensAt: undefined while open; the next opening while closed, the same all through the closed stretch; null when never', () => {
    const w = new OffPeakWindows('Asia/Shanghai', { kind: 'outside', ranges: [parseDailyRange('14:00-18:00')] });
    assert.equal(w.opensAt(shanghai(13, 59)), undefined);
    assert.equal(w.opensAt(shanghai(14, 0)), shanghai(18, 0));
    assert.equal(w.opensAt(shanghai(17, 59)), shanghai(18, 0));
    assert.equal(w.opensAt(shanghai(18, 0)), undefined);
    // The next day's peak: a new stretch, a new opening (the remembered stretch does not leak into it).
    assert.equal(w.opensAt(shanghai(14, 0) + 24 * 3_600_000), shanghai(18, 0) + 24 * 3_600_000);
    // Back in time (a clock set back): still right.
    assert.equal(w.opensAt(shanghai(15, 0)), shanghai(18, 0));
    assert.equal(new OffPeakWindows('UTC', { kind: 'never' }).opensAt(0), null);
    assert.equal(new OffPeakWindows('UTC', { kind: 'always' }).opensAt(0), undefined);
  });

  it('always, never, and clear errors for bad input', () => {
    assert.equal(new OffPeakWindows('UTC', { kind: 'always' }).isOpen(0), true);
    const never = new OffPeakWindows('UTC', { kind: 'never' });
    assert.equal(never.isOpen(0), false);
    assert.equal(never.nextOpenAt(0), null);
    assert.throws(() => parseDailyRange('25:00-26:00'), /invalid time range/);
    assert.throws(() => parseDailyRange('10:00-10:00'), /start equals end/);
    assert.throws(() => parseDailyRange('ten to six'), /HH:MM-HH:MM/);
    assert.throws(() => new OffPeakWindows('Mars/Olympus', { kind: 'always' }), /unknown time zone/);
  });

  it('reads each side by the one HH:MM rule, with 24:00 allowed only as an end', () => {
    const range = (text: string) => {
      const r = parseDailyRange(text);
      return [r.startMinute, r.endMinute];
    };
    assert.deepEqual(range('14:00-18:00'), [840, 1080]);
    assert.deepEqual(range('7:05-9:30'), [425, 570]);
    assert.deepEqual(range(' 22:00 - 06:00 '), [1320, 360]);
    assert.deepEqual(range('\t22:00-\t06:00\n'), [1320, 360]);
    assert.deepEqual(range('00:00-24:00'), [0, 1440]);
    assert.deepEqual(range('23:59- 24:00 '), [1439, 1440]);
    assert.deepEqual(range('00:00-23:59'), [0, 1439]);
    for (const bad of ['24:00-06:00', '22:00-24:01', '22:00-25:00', '22:00-24:0', '22:00-024:00', '7:5-9:30', '07:60-08:00', '22:00 06:00'])
      assert.throws(() => parseDailyRange(bad), /invalid time range .*expected HH:MM-HH:MM/, bad);
    for (const bad of ['22:00--06:00', '-22:00-06:00', '22:00-06:00-', '22:00-06:00-08:00', '22:00', '', '22 :00-06:00', '22:00-06: 00'])
      assert.throws(() => parseDailyRange(bad), /expected HH:MM-HH:MM/, bad);
    assert.throws(() => parseDailyRange('0:00-00:00'), /start equals end/);
  });
});
