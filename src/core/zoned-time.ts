// Wall-clock dates and times in a named IANA time zone, both ways (docs/flows.md#schedules-and-chains).
// Intl.DateTimeFormat knows every zone's offsets and DST changes; this module only asks it, so no
// offset table is kept here and the machine's zone is whatever Intl resolves.

/** A wall-clock moment in some zone: calendar date, minute of the day and the day of the week (0 = Sunday). */
export interface WallTime {
  year: number;
  /** 1–12. */
  month: number;
  /** 1–31. */
  day: number;
  /** 0–1439. */
  minuteOfDay: number;
  /** 0 = Sunday … 6 = Saturday. */
  weekday: number;
}

/** A calendar date with no time (what a rule walks day by day). */
export interface LocalDate {
  year: number;
  month: number;
  day: number;
}

const DAY_MS = 24 * 3600_000;
const formats = new Map<string, Intl.DateTimeFormat>();

/** The machine's IANA time zone (UTC when Intl cannot say). */
export function machineTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Whether Intl knows this zone name. */
export function isKnownTimeZone(zone: string): boolean {
  try {
    formatFor(zone);
    return true;
  } catch {
    return false;
  }
}

function formatFor(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(zone, format);
  }
  return format;
}

/** Wall-clock date, minute and seconds of `ms` in `zone`. */
function zonedFields(ms: number, zone: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  const fields = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const part of formatFor(zone).formatToParts(new Date(ms))) {
    if (part.type in fields) fields[part.type as keyof typeof fields] = Number(part.value);
  }
  fields.hour %= 24;
  return fields;
}

/** The wall clock in `zone` at epoch `ms`. */
export function wallTimeAt(ms: number, zone: string): WallTime {
  const f = zonedFields(ms, zone);
  return {
    year: f.year,
    month: f.month,
    day: f.day,
    minuteOfDay: f.hour * 60 + f.minute,
    weekday: new Date(Date.UTC(f.year, f.month - 1, f.day)).getUTCDay(),
  };
}

/** Seconds since local midnight in `zone` at epoch `ms` (the gateway's off-peak hours test minutes of it). */
export function secondOfDayAt(ms: number, zone: string): number {
  const f = zonedFields(ms, zone);
  return f.hour * 3600 + f.minute * 60 + f.second;
}

/** How far `zone` is ahead of UTC at `ms`, in ms. */
function offsetAt(ms: number, zone: string): number {
  const f = zonedFields(ms, zone);
  const asUtc = Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/** The date `days` after `date` (negative goes back), with its weekday. */
export function addDays(date: LocalDate, days: number): LocalDate & { weekday: number } {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), weekday: d.getUTCDay() };
}

/**
 * The epoch ms at which the wall clock in `zone` shows `minuteOfDay` on `date`.
 * A time the clock skips (spring forward) is taken with the offset before the change, so it lands
 * as far past the change as it was into the gap (02:30 on a 02:00→03:00 night is 03:30). A time
 * the clock shows twice (fall back) is its first showing.
 */
export function epochAtWallTime(date: LocalDate, minuteOfDay: number, zone: string): number {
  const asUtc = Date.UTC(date.year, date.month - 1, date.day, Math.floor(minuteOfDay / 60), minuteOfDay % 60);
  const offsetBefore = offsetAt(asUtc - DAY_MS, zone);
  const offsetAfter = offsetAt(asUtc + DAY_MS, zone);
  const shows = (ms: number): boolean => {
    const w = wallTimeAt(ms, zone);
    return w.year === date.year && w.month === date.month && w.day === date.day && w.minuteOfDay === minuteOfDay;
  };
  const candidates = [asUtc - offsetBefore, asUtc - offsetAfter].filter(shows).sort((a, b) => a - b);
  return candidates[0] ?? asUtc - offsetBefore;
}

export const WEEKDAY_SHORT = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;
const MONTH_SHORT = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/**
 * The minute of the day a typed "02:00" or "2:00" says (0–1439), or undefined when it is not a
 * time of day: one or two hour digits, exactly two minute digits, 00:00 to 23:59, white space
 * around it allowed and nothing else. The one rule of the create form's time field, the
 * palette's time prompt and each side of the gateway's daily ranges (which add 24:00 as an end).
 */
export function parseMinuteOfDay(text: string): number | undefined {
  const match = /^\s*(\d{1,2}):(\d{2})\s*$/.exec(text);
  if (!match) return undefined;
  const [hour, minute] = [Number(match[1]), Number(match[2])];
  return hour < 24 && minute < 60 ? hour * 60 + minute : undefined;
}

/** "02:00" from a minute of the day. */
export function formatMinuteOfDay(minuteOfDay: number): string {
  return `${String(Math.floor(minuteOfDay / 60)).padStart(2, '0')}:${String(minuteOfDay % 60).padStart(2, '0')}`;
}

/**
 * A due time as people read it: "Tue 02:00" within the coming week (or the past day),
 * "Tue 8 Dec 02:00" further away, in `zone`.
 */
export function formatDueTime(ms: number, now: number, zone: string): string {
  const w = wallTimeAt(ms, zone);
  const head = `${WEEKDAY_SHORT[w.weekday]}`;
  const near = ms > now - DAY_MS && ms < now + 6 * DAY_MS;
  return near
    ? `${head} ${formatMinuteOfDay(w.minuteOfDay)}`
    : `${head} ${w.day} ${MONTH_SHORT[w.month - 1]} ${formatMinuteOfDay(w.minuteOfDay)}`;
}

/** "2026-12-02" of a wall time (branch names and occurrence keys). */
export function isoDate(date: LocalDate): string {
  return `${date.year}-${String(date.month).padStart(2, '0')}-${String(date.day).padStart(2, '0')}`;
}
