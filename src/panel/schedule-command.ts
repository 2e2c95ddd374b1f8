// The palette's schedule commands' words and rules, vscode-free (docs/flows.md#schedules-and-chains):
// the repeat choices, the time typed as HH:MM, and how a schedule is named in a quick pick.
import { describeRule, nextOccurrence, type ScheduleRule, type Weekday } from '../core/schedule-rules';
import { formatDueTime, parseMinuteOfDay, wallTimeAt } from '../core/zoned-time';
import type { ScheduleRecord } from '../store';

/** "02:00" or "2:00" → 120 (the rule is parseMinuteOfDay's); otherwise why not. */
export function parseTimeOfDay(text: string): number | { problem: string } {
  return parseMinuteOfDay(text) ?? { problem: 'Type a time as HH:MM, 00:00 to 23:59.' };
}

const WORKDAYS: readonly Weekday[] = [1, 2, 3, 4, 5];

/** The repeat choices: every day, Monday to Friday, or once a week on today's weekday (in `zone`). */
export function repeatChoices(now: number, zone: string): { label: string; rule: (at: number) => ScheduleRule }[] {
  const today = wallTimeAt(now, zone).weekday as Weekday;
  return [
    { label: 'Every day', rule: (at) => ({ kind: 'daily', at }) },
    { label: 'Monday to Friday', rule: (at) => ({ kind: 'weekdays', days: WORKDAYS, at }) },
    {
      label: describeRule({ kind: 'weekly', day: today, at: 0 }).replace(/ at 00:00$/, ''),
      rule: (at) => ({ kind: 'weekly', day: today, at }),
    },
  ];
}

/** A rule of the same kind at another time. */
export function ruleAt(rule: ScheduleRule, at: number): ScheduleRule {
  return { ...rule, at };
}

/** A schedule in a quick pick: its title, its rule, and its next run or "Paused". */
export function schedulePickItem(s: ScheduleRecord, now: number, zone: string): { label: string; description: string; detail: string } {
  const next = s.paused ? 'Paused' : `Next: ${formatDueTime(nextOccurrence(s.rule, Math.max(s.handledThrough, now), s.zone), now, zone)}`;
  return { label: s.title, description: `${describeRule(s.rule)} · ${next}`, detail: s.workspacePath };
}
