// The one HH:MM rule (src/core/zoned-time.ts parseMinuteOfDay) that the create form's time field
// and the palette's time prompt both read, and its round trip with formatMinuteOfDay.
import assert from 'node:assert/strict';
import { formatMinuteOfDay, parseMinuteOfDay } from '../../src/core/zoned-time';

describe('parseMinuteOfDay: a typed time of day as the minute of the day', () => {
  it('reads one or two hour digits and two minute digits, 00:00 to 23:59', () => {
    assert.equal(parseMinuteOfDay('00:00'), 0);
    assert.equal(parseMinuteOfDay('02:00'), 120);
    assert.equal(parseMinuteOfDay('2:00'), 120);
    assert.equal(parseMinuteOfDay('9:05'), 545);
    assert.equal(parseMinuteOfDay('23:59'), 1439);
  });

  it('allows white space around the time, none inside it', () => {
    assert.equal(parseMinuteOfDay(' 2:30 '), 150);
    assert.equal(parseMinuteOfDay('\t07:30\n'), 450);
    assert.equal(parseMinuteOfDay('07 :30'), undefined);
    assert.equal(parseMinuteOfDay('07: 30'), undefined);
  });

  it('refuses out-of-range hours and minutes: 24:00 and 07:60 are no times', () => {
    assert.equal(parseMinuteOfDay('24:00'), undefined);
    assert.equal(parseMinuteOfDay('07:60'), undefined);
    assert.equal(parseMinuteOfDay('99:99'), undefined);
  });

  it('refuses a short minute, three-digit parts, seconds, suffixes and empty text', () => {
    for (const bad of ['7:5', '007:00', '07:005', '02:00:00', '2pm', '2:00pm', '02:00x', ':30', '0230', '-1:00', '', '   '])
      assert.equal(parseMinuteOfDay(bad), undefined, JSON.stringify(bad));
  });

  it('reads back every minute formatMinuteOfDay writes', () => {
    for (let minute = 0; minute < 24 * 60; minute++) assert.equal(parseMinuteOfDay(formatMinuteOfDay(minute)), minute);
  });
});
