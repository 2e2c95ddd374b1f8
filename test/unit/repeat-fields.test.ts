// The create form's Repeat (docs/flows.md#schedules-and-chains): the rule its fields say, and the
// fields a schedule's rule fills back in for Edit.
import assert from 'node:assert/strict';
import { describeRule } from '../../src/core/schedule-rules';
import { ScheduleRuleSchema } from '../../src/protocol/schedules';
import { choiceOf, REPEAT_ONCE, ruleOf } from '../../webview/repeat-fields';
import { lastRunLabel, nextRunLabel } from '../../webview/schedules';

describe('Repeat fields: the rule the form sends', () => {
  it('Once is no rule: the form queues one task', () => {
    assert.equal(ruleOf(REPEAT_ONCE), null);
  });

  it('daily, chosen weekdays (Monday first) and weekly, at the minute of the day', () => {
    assert.deepEqual(ruleOf({ ...REPEAT_ONCE, kind: 'daily', time: '02:00' }), { kind: 'daily', at: 120 });
    assert.deepEqual(ruleOf({ ...REPEAT_ONCE, kind: 'weekdays', time: '07:30', days: [5, 0, 1] }), {
      kind: 'weekdays',
      days: [1, 5, 0],
      at: 450,
    });
    assert.deepEqual(ruleOf({ ...REPEAT_ONCE, kind: 'weekly', time: '23:59', day: 0 }), { kind: 'weekly', day: 0, at: 1439 });
    for (const kind of ['daily', 'weekdays', 'weekly'] as const) {
      const rule = ruleOf({ ...REPEAT_ONCE, kind, time: '02:00' });
      assert.ok(ScheduleRuleSchema.safeParse(rule).success, `${kind}: the host's schema takes it`);
    }
  });

  it('says what is missing instead of a rule: no time, no weekday', () => {
    assert.equal(ruleOf({ ...REPEAT_ONCE, kind: 'daily', time: '' }), 'Choose a time (HH:MM).');
    assert.equal(ruleOf({ ...REPEAT_ONCE, kind: 'weekdays', days: [] }), 'Choose at least one weekday.');
    // The time is read by the palette's rule (parseMinuteOfDay): a whole HH:MM and nothing after it.
    for (const bad of ['24:00', '07:60', '7:5', '02:00:30', '2:00pm'])
      assert.equal(ruleOf({ ...REPEAT_ONCE, kind: 'daily', time: bad }), 'Choose a time (HH:MM).', bad);
    assert.deepEqual(ruleOf({ ...REPEAT_ONCE, kind: 'daily', time: '9:05' }), { kind: 'daily', at: 545 });
  });

  it("Edit fills the fields from a schedule's rule, and they say the same rule again", () => {
    for (const rule of [
      { kind: 'daily', at: 195 },
      { kind: 'weekdays', days: [1, 3, 5], at: 450 },
      { kind: 'weekly', day: 6, at: 0 },
    ] as const) {
      const again = ruleOf(choiceOf(rule));
      assert.deepEqual(again, rule);
      assert.equal(describeRule(again as typeof rule), describeRule(rule));
    }
  });

  it('the Schedules row: "Paused" over a next run, and the last run in the host\'s words', () => {
    assert.equal(nextRunLabel({ paused: true, nextRunText: null }), 'Paused');
    assert.equal(nextRunLabel({ paused: false, nextRunText: 'Thu 02:00' }), 'Next: Thu 02:00');
    assert.equal(lastRunLabel(null), null);
    assert.equal(
      lastRunLabel({ taskId: null, at: 0, text: 'Missed 3, caught up · Completed', catchUp: true }),
      'Last: Missed 3, caught up · Completed',
    );
  });
});
