// The rules of a repeating schedule (docs/flows.md#schedules-and-chains): when its occurrences fall in
// the machine's time zone, which one is due now, what a missed stretch turns into (at most one
// catch-up), and when an occurrence is skipped because the previous run has not finished.
// Pure functions over epoch ms and a zone name: the lease holder fires, the panel shows, tests
// pass any zone and any clock.
import { isTerminalStatus, type TaskStatus } from './types';
import {
  addDays,
  epochAtWallTime,
  formatDueTime,
  formatMinuteOfDay,
  isoDate,
  wallTimeAt,
  WEEKDAY_SHORT,
  type LocalDate,
} from './zoned-time';

/** 0 = Sunday … 6 = Saturday. */
export type Weekday = 0 | 1 | 2 | 3 | 4 | 5 | 6;

/** When a schedule repeats; `at` is the minute of the day (0–1439) in the schedule's time zone. */
export type ScheduleRule =
  { kind: 'daily'; at: number } | { kind: 'weekdays'; days: readonly Weekday[]; at: number } | { kind: 'weekly'; day: Weekday; at: number };

/** A run due this late or later is a catch-up, not the on-time run (the machine slept through it). */
export const ON_TIME_GRACE_MS = 10 * 60_000;
/** How many missed occurrences are counted before "more than" is said (a year asleep counts no further). */
const MISSED_COUNT_LIMIT = 400;
/** A rule has an occurrence in every 7 days; 8 covers a DST day on either side. */
const SEARCH_DAYS = 8;

function ruleDays(rule: ScheduleRule): readonly number[] {
  switch (rule.kind) {
    case 'daily':
      return [0, 1, 2, 3, 4, 5, 6];
    case 'weekdays':
      return rule.days;
    case 'weekly':
      return [rule.day];
  }
}

/** Why a rule cannot be used, or null when it is sound. */
export function ruleProblem(rule: ScheduleRule): string | null {
  if (!Number.isInteger(rule.at) || rule.at < 0 || rule.at >= 24 * 60) return 'the time must be between 00:00 and 23:59';
  const days = ruleDays(rule);
  if (days.length === 0) return 'choose at least one weekday';
  if (days.some((d) => !Number.isInteger(d) || d < 0 || d > 6)) return 'weekdays are 0 (Sunday) to 6 (Saturday)';
  return null;
}

function occursOn(rule: ScheduleRule, weekday: number): boolean {
  return ruleDays(rule).includes(weekday);
}

/** The first occurrence strictly after `after` (epoch ms) in `zone`. */
export function nextOccurrence(rule: ScheduleRule, after: number, zone: string): number {
  const today: LocalDate = wallTimeAt(after, zone);
  for (let i = 0; i <= SEARCH_DAYS; i++) {
    const date = addDays(today, i);
    if (!occursOn(rule, date.weekday)) continue;
    const due = epochAtWallTime(date, rule.at, zone);
    if (due > after) return due;
  }
  throw new Error(`schedule rule has no occurrence: ${ruleProblem(rule) ?? 'unknown'}`);
}

/** The last occurrence at or before `atOrBefore`, or null if none in the week before it. */
export function previousOccurrence(rule: ScheduleRule, atOrBefore: number, zone: string): number | null {
  const today: LocalDate = wallTimeAt(atOrBefore, zone);
  for (let i = 0; i <= SEARCH_DAYS; i++) {
    const date = addDays(today, -i);
    if (!occursOn(rule, date.weekday)) continue;
    const due = epochAtWallTime(date, rule.at, zone);
    if (due <= atOrBefore) return due;
  }
  return null;
}

/** One occurrence to queue now. */
export interface DueOccurrence {
  /** When it was due (epoch ms). */
  dueAt: number;
  /** Unique per schedule and occurrence: the fire is recorded under it once, whichever window fires. */
  key: string;
  /** Its local date, "2026-12-02" (the run's branch is named with it). */
  localDate: string;
  /** Fired later than its due time plus the grace: the machine slept or VS Code was closed. */
  catchUp: boolean;
  /** Earlier occurrences since the last handled one that will not run (only the latest runs). */
  missed: number;
}

/**
 * The occurrence due at `now`, or null. `handledThrough` is the due time of the last occurrence
 * already fired or skipped (or when the schedule was created or edited): nothing at or before it
 * fires again. Of several missed occurrences only the latest runs, once, as a catch-up.
 */
export function dueOccurrence(
  scheduleId: string,
  rule: ScheduleRule,
  zone: string,
  handledThrough: number,
  now: number,
): DueOccurrence | null {
  const latest = previousOccurrence(rule, now, zone);
  const first = nextOccurrence(rule, handledThrough, zone);
  if (first > now) return null;
  const dueAt = latest !== null && latest > handledThrough ? latest : first;
  let missed = 0;
  for (let t = first; t < dueAt && missed < MISSED_COUNT_LIMIT; t = nextOccurrence(rule, t, zone)) missed++;
  const local = wallTimeAt(dueAt, zone);
  const localDate = isoDate(local);
  return {
    dueAt,
    key: `${scheduleId}@${localDate}T${formatMinuteOfDay(local.minuteOfDay)}`,
    localDate,
    catchUp: now - dueAt > ON_TIME_GRACE_MS,
    missed,
  };
}

/** The previous run of a schedule as the store has it (null when it never ran or was deleted). */
export interface PreviousRun {
  status: TaskStatus;
}

export type OccurrenceDecision = { kind: 'queue' } | { kind: 'skip'; reason: string };

/**
 * Whether a due occurrence queues its run: not while the previous run is still queued, paused,
 * running or waiting for an answer (the occurrence is skipped, and the reason says so).
 */
export function occurrenceDecision(due: DueOccurrence, previous: PreviousRun | null, zone: string): OccurrenceDecision {
  if (!previous || isTerminalStatus(previous.status)) return { kind: 'queue' };
  const what =
    previous.status === 'running'
      ? 'still running'
      : previous.status === 'needs_input'
        ? 'still waiting for an answer'
        : `still ${previous.status}`;
  return { kind: 'skip', reason: `Skipped the ${formatDueTime(due.dueAt, due.dueAt, zone)} run: the previous run is ${what}.` };
}

/** "Every day at 02:00", "Mon, Wed, Fri at 02:00", "Every Monday at 02:00". */
export function describeRule(rule: ScheduleRule): string {
  const at = formatMinuteOfDay(rule.at);
  switch (rule.kind) {
    case 'daily':
      return `Every day at ${at}`;
    case 'weekdays': {
      const days = [...rule.days].sort((a, b) => ((a + 6) % 7) - ((b + 6) % 7));
      return `${days.map((d) => WEEKDAY_SHORT[d]).join(', ')} at ${at}`;
    }
    case 'weekly':
      return `Every ${WEEKDAY_LONG[rule.day]} at ${at}`;
  }
}

const WEEKDAY_LONG = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;

/** The earliest next occurrence of any schedule: the one time the lease holder's schedule timer is set for. */
export function nextWakeAt(
  schedules: readonly { rule: ScheduleRule; handledThrough: number; paused: boolean }[],
  zone: string,
): number | null {
  let best: number | null = null;
  for (const s of schedules) {
    if (s.paused) continue;
    const next = nextOccurrence(s.rule, s.handledThrough, zone);
    if (best === null || next < best) best = next;
  }
  return best;
}
