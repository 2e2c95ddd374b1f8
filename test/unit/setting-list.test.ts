// The comma-separated settings' items (src/core/setting-list.ts): split, trimmed, checked, and a bad
// item's error worded by the setting.
import assert from 'node:assert/strict';
import { checkedListItems } from '../../src/core/setting-list';

const digits = (item: string) => {
  if (!/^\d+$/.test(item)) throw new Error(`"${item}" is not a number`);
};

describe('checkedListItems: a setting that lists items', () => {
  it('splits on commas and semicolons, trims, drops empty items', () => {
    assert.deepEqual(
      checkedListItems(' 1, 2;3 ,, ', digits, (m) => new Error(m)),
      ['1', '2', '3'],
    );
    assert.deepEqual(
      checkedListItems('', digits, (m) => new Error(m)),
      [],
    );
  });

  it("throws the setting's own error around the first bad item's message", () => {
    class SettingError extends Error {}
    assert.throws(
      () => checkedListItems('1, x, y', digits, (m) => new SettingError(`mySetting: ${m}`)),
      (e: unknown) => e instanceof SettingError && e.message === 'mySetting: "x" is not a number',
    );
  });
});
