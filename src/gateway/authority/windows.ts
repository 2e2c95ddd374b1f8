// Off-peak windows in a named IANA time zone: when the promote timer may move tickets to ready.
// Wall-clock math is core/zoned-time.ts's (Intl's), so DST and odd offsets are the zone's business.
import { formatMinuteOfDay as formatMinute, isKnownTimeZone, parseMinuteOfDay, secondOfDayAt } from '../../core/zoned-time';

/** A daily range of wall-clock minutes [start, end); end may be <= start to wrap past midnight. */
export interface DailyRange {
  startMinute: number;
  endMinute: number;
}

export type WindowSpec =
  | { kind: 'always' }
  | { kind: 'never' }
  /** Off-peak = outside these ranges (the default: peak 14:00–18:00). */
  | { kind: 'outside'; ranges: DailyRange[] }
  /** Off-peak = inside these ranges. */
  | { kind: 'inside'; ranges: DailyRange[] };

const MINUTES_PER_DAY = 24 * 60;

/** A range's end: a time of day, or 24:00 (the end of the day), the one time an end may be and a start may not. */
function parseRangeEnd(text: string): number | undefined {
  return text.trim() === '24:00' ? MINUTES_PER_DAY : parseMinuteOfDay(text);
}

/** Parses "HH:MM-HH:MM", each side by parseMinuteOfDay's rule (24:00 allowed as an end). Throws a clear error on bad input. */
export function parseDailyRange(text: string): DailyRange {
  const [startText, endText, ...more] = text.split('-');
  const start = parseMinuteOfDay(startText);
  const end = endText === undefined ? undefined : parseRangeEnd(endText);
  if (start === undefined || end === undefined || more.length > 0)
    throw new Error(`invalid time range "${text}": expected HH:MM-HH:MM, e.g. 14:00-18:00 (hours 00-23, 24:00 as an end; minutes 00-59)`);
  if (start === end) throw new Error(`invalid time range "${text}": start equals end`);
  return { startMinute: start, endMinute: end };
}

function inRange(range: DailyRange, minute: number): boolean {
  return range.startMinute < range.endMinute
    ? minute >= range.startMinute && minute < range.endMinute
    : minute >= range.startMinute || minute < range.endMinute;
}

export class OffPeakWindows {
  /**
   * The last closed stretch found: closed from `from` until `opensAt`. Every answer about a
   * queued ticket asks; inside the stretch the answer is known without any calendar math.
   */
  private closedStretch: { from: number; opensAt: number } | undefined;

  constructor(
    readonly timeZone: string,
    readonly spec: WindowSpec,
  ) {
    if (!isKnownTimeZone(timeZone))
      throw new Error(`unknown time zone "${timeZone}": use an IANA name such as Asia/Shanghai or Europe/Berlin`);
  }

  /** Seconds since local midnight in the zone (for minute-precision window checks). */
  private localSecondOfDay(now: number): number {
    return secondOfDayAt(now, this.timeZone);
  }

  isOpen(now: number): boolean {
    switch (this.spec.kind) {
      case 'always':
        return true;
      case 'never':
        return false;
      case 'outside': {
        const minute = Math.floor(this.localSecondOfDay(now) / 60);
        return !this.spec.ranges.some((r) => inRange(r, minute));
      }
      case 'inside': {
        const minute = Math.floor(this.localSecondOfDay(now) / 60);
        return this.spec.ranges.some((r) => inRange(r, minute));
      }
    }
  }

  /**
   * For answers to clients: undefined while the windows are open; while they are closed, when they
   * next open (epoch ms), or null when no opening is scheduled (closed until reconfigured).
   */
  opensAt(now: number): number | null | undefined {
    const stretch = this.closedStretch;
    if (stretch && now >= stretch.from && now < stretch.opensAt) return stretch.opensAt;
    const next = this.nextOpenAt(now);
    if (next === now) return undefined;
    if (next !== null) this.closedStretch = { from: now, opensAt: next };
    return next;
  }

  /**
   * The next time at or after `now` when the windows are open; `now` if open, null if never.
   * Steps to the next minute boundary and checks, so DST shifts cannot fool it (bounded to 8 days).
   */
  nextOpenAt(now: number): number | null {
    if (this.isOpen(now)) return now;
    if (this.spec.kind === 'never') return null;
    const secondOfDay = this.localSecondOfDay(now);
    let t = now - (now % 1000) + (60 - (secondOfDay % 60)) * 1000;
    const limit = now + 8 * 24 * 3600 * 1000;
    // Jump straight to the candidate boundaries first; fall back to minute steps near them.
    while (t <= limit) {
      if (this.isOpen(t)) return t;
      const minute = Math.floor(this.localSecondOfDay(t) / 60);
      const jump = this.minutesToNextBoundary(minute);
      t += Math.max(1, jump) * 60_000;
    }
    return null;
  }

  private minutesToNextBoundary(minute: number): number {
    if (this.spec.kind !== 'outside' && this.spec.kind !== 'inside') return 1;
    let best = MINUTES_PER_DAY;
    for (const r of this.spec.ranges) {
      for (const boundary of [r.startMinute, r.endMinute % MINUTES_PER_DAY]) {
        const delta = (boundary - minute + MINUTES_PER_DAY) % MINUTES_PER_DAY;
        if (delta > 0 && delta < best) best = delta;
      }
    }
    // Jump to an hour before the boundary (a DST shift moves local time by up to an hour, so a
    // longer jump could land past the real opening), then check minute by minute.
    return best > 61 ? best - 61 : 1;
  }

  describe(): string {
    switch (this.spec.kind) {
      case 'always':
        return 'Always off-peak: tickets are admitted whenever capacity allows.';
      case 'never':
        return 'Off-peak windows are closed: no tickets are admitted.';
      case 'outside':
        return `Off-peak outside ${this.spec.ranges.map((r) => `${formatMinute(r.startMinute)}–${formatMinute(r.endMinute)}`).join(', ')} (${this.timeZone}).`;
      case 'inside':
        return `Off-peak during ${this.spec.ranges.map((r) => `${formatMinute(r.startMinute)}–${formatMinute(r.endMinute)}`).join(', ')} (${this.timeZone}).`;
    }
  }
}
