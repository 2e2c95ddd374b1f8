// `offPeak.notify.quietHours` (docs/flows.md#away-notifications): daily ranges in this machine's
// time zone, e.g. `22:00-07:00` (a range may wrap midnight; several comma-separated), during which
// no away notification is sent; what comes then is held until they end. The same range rules and
// wall-clock math as `offPeak.personal.hours` (src/gateway/authority/windows.ts).
import { checkedListItems } from '../core/setting-list';
import { OffPeakWindows, parseDailyRange } from '../gateway/authority/windows';

export class QuietHoursError extends Error {}

/** The ranges of the setting ('' or `none`: never quiet). Throws QuietHoursError with a message fit for the user. */
export function parseQuietHours(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed === '' || /^none$/i.test(trimmed)) return [];
  return checkedListItems(
    trimmed,
    parseDailyRange,
    (message) => new QuietHoursError(`offPeak.notify.quietHours: ${message} (or empty for none)`),
  );
}

/** When the quiet hours around `now` end, or null when `now` is not in them (or the setting does not parse). */
export function quietUntil(setting: string, now: number, timeZone: string): number | null {
  let ranges: string[];
  try {
    ranges = parseQuietHours(setting);
  } catch {
    return null;
  }
  if (ranges.length === 0) return null;
  // Sending is "open" outside the quiet ranges.
  const sending = new OffPeakWindows(timeZone, { kind: 'outside', ranges: ranges.map(parseDailyRange) });
  return sending.isOpen(now) ? null : sending.nextOpenAt(now);
}
