// docs/flows.md#schedules-and-chains: the rule core over an injected clock and an explicit time zone
// (Europe/Berlin and America/New_York, whatever this machine's zone is).
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock';
import {
  describeRule,
  dueOccurrence,
  nextOccurrence,
  nextWakeAt,
  occurrenceDecision,
  previousOccurrence,
  ruleProblem,
  type ScheduleRule,
} from '../../src/core/schedule-rules';
import { epochAtWallTime, formatDueTime, wallTimeAt } from '../../src/core/zoned-time';

const BERLIN = 'Europe/Berlin';
const NEW_YORK = 'America/New_York';
const HOUR = 3600_000;
const DAY = 24 * HOUR;
const at = (hh: number, mm = 0): number => hh * 60 + mm;

/** "2026-03-29 03:30" in `zone` for an epoch ms: what a person there reads on the clock. */
function wall(ms: number, zone: string): string {
  const w = wallTimeAt(ms, zone);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${w.year}-${two(w.month)}-${two(w.day)} ${two(Math.floor(w.minuteOfDay / 60))}:${two(w.minuteOfDay % 60)}`;
}

/** The next `count` occurrences after `from`. */
function walk(rule: ScheduleRule, from: number, count: number, zone: string): number[] {
  const out: number[] = [];
  let t = from;
  for (let i = 0; i < count; i++) out.push((t = nextOccurrence(rule, t, zone)));
  return out;
}

describe('schedule rules: occurrences in a time zone (docs/flows.md#schedules-and-chains)', () => {
  it('daily 02:00 in Berlin across the spring change: one run a day, the skipped 02:00 runs at 03:00 summer time', () => {
    const rule: ScheduleRule = { kind: 'daily', at: at(2) };
    const runs = walk(rule, Date.UTC(2026, 2, 27, 12), 3, BERLIN);
    assert.deepEqual(
      runs.map((t) => wall(t, BERLIN)),
      ['2026-03-28 02:00', '2026-03-29 03:00', '2026-03-30 02:00'],
    );
    assert.deepEqual(
      runs.map((t) => new Date(t).toISOString()),
      ['2026-03-28T01:00:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:00:00.000Z'],
    );
  });

  it('daily 02:30 in Berlin across the autumn change: the hour shown twice runs once, at its first showing', () => {
    const rule: ScheduleRule = { kind: 'daily', at: at(2, 30) };
    const runs = walk(rule, Date.UTC(2026, 9, 24, 12), 3, BERLIN);
    assert.deepEqual(
      runs.map((t) => new Date(t).toISOString()),
      ['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z', '2026-10-27T01:30:00.000Z'],
    );
    assert.deepEqual(
      runs.map((t) => wall(t, BERLIN)),
      ['2026-10-25 02:30', '2026-10-26 02:30', '2026-10-27 02:30'],
    );
  });

  it('daily in New York across both changes: 02:30 in the spring gap runs at 03:30, 01:30 shown twice in autumn runs once', () => {
    const spring = walk({ kind: 'daily', at: at(2, 30) }, Date.UTC(2026, 2, 7, 12), 2, NEW_YORK);
    assert.deepEqual(
      spring.map((t) => wall(t, NEW_YORK)),
      ['2026-03-08 03:30', '2026-03-09 02:30'],
    );
    assert.equal(spring[1]! - spring[0]!, 23 * HOUR, 'the next night is 23 h later: the gap hour was not run twice');
    const autumn = walk({ kind: 'daily', at: at(1, 30) }, Date.UTC(2026, 9, 31, 12), 2, NEW_YORK);
    assert.deepEqual(
      autumn.map((t) => new Date(t).toISOString()),
      ['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z'],
    );
  });

  it('chosen weekdays keep their local time across a DST change (New York, Mon/Wed/Fri 09:00)', () => {
    const rule: ScheduleRule = { kind: 'weekdays', days: [1, 3, 5], at: at(9) };
    const runs = walk(rule, Date.UTC(2026, 2, 3, 12), 4, NEW_YORK); // from Tue 3 Mar
    assert.deepEqual(
      runs.map((t) => wall(t, NEW_YORK)),
      ['2026-03-04 09:00', '2026-03-06 09:00', '2026-03-09 09:00', '2026-03-11 09:00'],
    );
    assert.deepEqual(
      runs.map((t) => new Date(t).getUTCHours()),
      [14, 14, 13, 13],
      'UTC moves an hour at the change, the wall clock does not',
    );
  });

  it('weekly on the change day itself (Berlin, Sunday 02:00): the gap night runs at 03:00, the next Sunday at 02:00', () => {
    const rule: ScheduleRule = { kind: 'weekly', day: 0, at: at(2) };
    const runs = walk(rule, Date.UTC(2026, 2, 23), 3, BERLIN);
    assert.deepEqual(
      runs.map((t) => wall(t, BERLIN)),
      ['2026-03-29 03:00', '2026-04-05 02:00', '2026-04-12 02:00'],
    );
    assert.equal(previousOccurrence(rule, runs[1]! - 1, BERLIN), runs[0]);
  });

  it('the same wall time is a different instant in each zone', () => {
    const date = { year: 2026, month: 7, day: 1 };
    assert.equal(epochAtWallTime(date, at(2), NEW_YORK) - epochAtWallTime(date, at(2), BERLIN), 6 * HOUR);
  });

  it('refuses rules that can never run', () => {
    assert.match(ruleProblem({ kind: 'weekdays', days: [], at: at(2) }) ?? '', /at least one weekday/);
    assert.match(ruleProblem({ kind: 'daily', at: 24 * 60 }) ?? '', /00:00 and 23:59/);
    assert.equal(ruleProblem({ kind: 'weekly', day: 1, at: at(2) }), null);
    assert.throws(() => nextOccurrence({ kind: 'weekdays', days: [], at: 0 }, 0, BERLIN), /no occurrence/);
  });

  it('says the rule in words', () => {
    assert.equal(describeRule({ kind: 'daily', at: at(2) }), 'Every day at 02:00');
    assert.equal(describeRule({ kind: 'weekdays', days: [5, 1, 3], at: at(2, 15) }), 'Mon, Wed, Fri at 02:15');
    assert.equal(describeRule({ kind: 'weekly', day: 1, at: at(2) }), 'Every Monday at 02:00');
  });

  it('shows a due time as "Tue 02:00" within the week and with the date further away', () => {
    const now = Date.UTC(2026, 11, 1, 12); // Tue 1 Dec 2026
    const tuesday = epochAtWallTime({ year: 2026, month: 12, day: 8 }, at(2), BERLIN);
    assert.equal(formatDueTime(tuesday - 7 * DAY + DAY, now, BERLIN), 'Wed 02:00');
    assert.equal(formatDueTime(tuesday, now, BERLIN), 'Tue 8 Dec 02:00');
  });
});

describe('schedule rules: which occurrence is due now (docs/flows.md#schedules-and-chains)', () => {
  const daily: ScheduleRule = { kind: 'daily', at: at(2) };

  it('nothing is due before the first occurrence; at it, one on-time run with a stable key', () => {
    const created = Date.UTC(2026, 11, 1, 12); // Tue 13:00 Berlin
    const clock = new ManualClock(created);
    assert.equal(dueOccurrence('s1', daily, BERLIN, created, clock.now()), null);
    clock.set(nextOccurrence(daily, created, BERLIN) + 30_000);
    const due = dueOccurrence('s1', daily, BERLIN, created, clock.now());
    assert.ok(due);
    assert.equal(wall(due.dueAt, BERLIN), '2026-12-02 02:00');
    assert.equal(due.catchUp, false);
    assert.equal(due.missed, 0);
    assert.equal(due.key, 's1@2026-12-02T02:00');
    assert.equal(due.localDate, '2026-12-02');
    clock.advance(60_000);
    assert.equal(dueOccurrence('s1', daily, BERLIN, created, clock.now())?.key, due.key, 'asked again, the same occurrence and key');
    assert.equal(dueOccurrence('s1', daily, BERLIN, due.dueAt, clock.now()), null, 'handled, it is not due again');
  });

  it('a missed week fires one catch-up run, the latest, and counts the others as missed', () => {
    const handled = epochAtWallTime({ year: 2026, month: 11, day: 23 }, at(2), BERLIN); // Mon 23 Nov 02:00
    const clock = new ManualClock(epochAtWallTime({ year: 2026, month: 11, day: 30 }, at(8), BERLIN)); // next Mon 08:00
    const due = dueOccurrence('s1', daily, BERLIN, handled, clock.now());
    assert.ok(due);
    assert.equal(wall(due.dueAt, BERLIN), '2026-11-30 02:00');
    assert.equal(due.catchUp, true);
    assert.equal(due.missed, 6);
    assert.equal(dueOccurrence('s1', daily, BERLIN, due.dueAt, clock.now()), null, 'after the one catch-up nothing more is due today');
    clock.set(nextOccurrence(daily, due.dueAt, BERLIN));
    assert.equal(dueOccurrence('s1', daily, BERLIN, due.dueAt, clock.now())?.catchUp, false, 'the next night runs on time');
  });

  it('a weekly rule missed for three weeks (New York, across the spring change) fires one catch-up', () => {
    const weekly: ScheduleRule = { kind: 'weekly', day: 1, at: at(2) };
    const handled = epochAtWallTime({ year: 2026, month: 2, day: 16 }, at(2), NEW_YORK);
    const now = epochAtWallTime({ year: 2026, month: 3, day: 10 }, at(12), NEW_YORK);
    const due = dueOccurrence('w', weekly, NEW_YORK, handled, now);
    assert.ok(due);
    assert.equal(wall(due.dueAt, NEW_YORK), '2026-03-09 02:00');
    assert.equal(due.catchUp, true);
    assert.equal(due.missed, 2);
  });

  it('an occurrence while the previous run is still running is skipped, and says so', () => {
    const due = dueOccurrence('s1', daily, BERLIN, Date.UTC(2026, 11, 1, 12), Date.UTC(2026, 11, 2, 1, 1));
    assert.ok(due);
    const running = occurrenceDecision(due, { status: 'running' }, BERLIN);
    assert.equal(running.kind, 'skip');
    assert.match(running.kind === 'skip' ? running.reason : '', /Wed 02:00 run: the previous run is still running/);
    const queued = occurrenceDecision(due, { status: 'queued' }, BERLIN);
    assert.match(queued.kind === 'skip' ? queued.reason : '', /still queued/);
    assert.deepEqual(occurrenceDecision(due, { status: 'failed' }, BERLIN), { kind: 'queue' });
    assert.deepEqual(occurrenceDecision(due, null, BERLIN), { kind: 'queue' });
  });

  it('one wake-up time for many schedules: the earliest next occurrence, paused ones left out', () => {
    const from = Date.UTC(2026, 11, 1, 12);
    const schedules = [
      { rule: { kind: 'daily', at: at(3) } as ScheduleRule, handledThrough: from, paused: false },
      { rule: { kind: 'daily', at: at(1) } as ScheduleRule, handledThrough: from, paused: true },
      { rule: { kind: 'weekly', day: 3, at: at(2) } as ScheduleRule, handledThrough: from, paused: false },
    ];
    assert.equal(wall(nextWakeAt(schedules, BERLIN)!, BERLIN), '2026-12-02 02:00');
    assert.equal(
      nextWakeAt(
        schedules.map((s) => ({ ...s, paused: true })),
        BERLIN,
      ),
      null,
    );
  });
});
