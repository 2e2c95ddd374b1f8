/**
 * The account at a glance (docs/flows.md#capacity-and-cost): a subscription account's 5-hour and
 * weekly windows as the last answer's headers reported them, with their resets, the reading's age,
 * the reserve (`offPeak.personal.stopAtUtilization`) as a mark on both, and why the queue waits.
 * The one wording of the panel's header and the status bar.
 */
import { clockTime } from './clock';
import type { AccountReading, SegmentUsage } from './types';

export interface AccountWindowView {
  label: '5 h' | 'week';
  /** Whole percent used now (0 once its reset passed). */
  percent: number;
  /** "resets 15:00", "resets Tue 09:00", or "reset at 15:00" once it passed; "" when not said. */
  resetText: string;
  /** At or above the reserve, before its reset: new tasks wait. */
  overReserve: boolean;
}

export interface AccountBarView {
  windows: AccountWindowView[];
  /** The reserve as a percent mark on both bars; null when not set. */
  reservePercent: number | null;
  /** "as of 3 min ago". */
  ageText: string;
  /** "holding: weekly 71 % ≥ your 70 % reserve · resets Tue 09:00"; null when nothing holds. */
  holdingText: string | null;
  /** The status bar's "5 h 42 % · week 71 %". */
  shortText: string;
  /** The status bar's part while it holds: "holding: week 71 %". */
  holdingShort: string | null;
}

const DAY_MS = 86_400_000;

/** "15:00" today, "Tue 09:00" on another day. */
function whenText(at: number, now: number): string {
  const sameDay = new Date(at).toDateString() === new Date(now).toDateString();
  if (sameDay) return clockTime(at);
  return `${new Date(at).toLocaleDateString('en-US', { weekday: 'short' })} ${clockTime(at)}`;
}

function ageText(ms: number): string {
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  if (minutes < 1) return 'as of just now';
  if (minutes < 60) return `as of ${minutes} min ago`;
  if (ms >= DAY_MS) return `as of ${Math.floor(ms / DAY_MS)} d ago`;
  const rest = minutes % 60;
  return `as of ${Math.floor(minutes / 60)} h${rest === 0 ? '' : ` ${rest} min`} ago`;
}

/** The newest reading over a task's or the account's ledger rows. */
export function latestAccountReading(rows: readonly { usage: Pick<SegmentUsage, 'account'> | null }[]): AccountReading | null {
  let latest: AccountReading | null = null;
  for (const row of rows) {
    const r = row.usage?.account;
    if (r && (latest === null || r.at > latest.at)) latest = r;
  }
  return latest;
}

/** The header bar of `reading` at `now` with the reserve (0..1, null: off); null before any answer was read. */
export function accountBar(reading: AccountReading | null, reserve: number | null, now: number): AccountBarView | null {
  if (!reading) return null;
  const windows = (
    [
      ['5 h', 'five-hour', reading.utilization5h, reading.reset5hAt],
      ['week', 'weekly', reading.utilization7d, reading.reset7dAt],
    ] as const
  ).map(([label, name, utilization, resetAt]) => {
    const passed = resetAt !== null && resetAt <= now;
    const percent = passed ? 0 : Math.round(utilization * 100);
    const resetText = resetAt === null ? '' : `${passed ? 'reset at' : 'resets'} ${whenText(resetAt, now)}`;
    const overReserve = reserve !== null && !passed && utilization >= reserve;
    return { view: { label, percent, resetText, overReserve }, name, resetAt };
  });
  const reservePercent = reserve === null ? null : Math.round(reserve * 100);
  const holding = windows.filter((w) => w.view.overReserve).sort((a, b) => (b.resetAt ?? 0) - (a.resetAt ?? 0))[0];
  return {
    windows: windows.map((w) => w.view),
    reservePercent,
    ageText: ageText(now - reading.at),
    holdingText: holding
      ? `holding: ${holding.name} ${holding.view.percent} % ≥ your ${reservePercent} % reserve${holding.view.resetText ? ` · ${holding.view.resetText}` : ''}`
      : null,
    shortText: windows.map((w) => `${w.view.label} ${w.view.percent} %`).join(' · '),
    holdingShort: holding ? `holding: ${holding.view.label} ${holding.view.percent} %` : null,
  };
}
