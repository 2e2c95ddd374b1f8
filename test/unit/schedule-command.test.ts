/** The palette's schedule commands' rules (docs/flows.md#schedules-and-chains), vscode-free. */
import assert from 'node:assert/strict';
import { epochAtWallTime } from '../../src/core/zoned-time';
import { parseTimeOfDay, repeatChoices, ruleAt, schedulePickItem } from '../../src/panel/schedule-command';
import type { ScheduleRecord } from '../../src/store';

const ZONE = 'America/New_York';

describe('schedule commands: time, repeat choices, pick items', () => {
  it('reads HH:MM and refuses anything else with the reason', () => {
    assert.equal(parseTimeOfDay('02:00'), 120);
    assert.equal(parseTimeOfDay(' 2:30 '), 150);
    assert.equal(parseTimeOfDay('23:59'), 1439);
    for (const bad of ['24:00', '12:60', '2pm', '', '02:00:00'])
      assert.deepEqual(parseTimeOfDay(bad), { problem: 'Type a time as HH:MM, 00:00 to 23:59.' }, bad);
  });

  it("offers every day, Monday to Friday, and once a week on today's weekday in the zone", () => {
    const wednesday = epochAtWallTime({ year: 2026, month: 12, day: 2 }, 23 * 60 + 30, ZONE); // Wed 23:30 in New York, Thu in UTC
    const choices = repeatChoices(wednesday, ZONE);
    assert.deepEqual(
      choices.map((c) => c.label),
      ['Every day', 'Monday to Friday', 'Every Wednesday'],
    );
    assert.deepEqual(
      choices.map((c) => c.rule(120)),
      [
        { kind: 'daily', at: 120 },
        { kind: 'weekdays', days: [1, 2, 3, 4, 5], at: 120 },
        { kind: 'weekly', day: 3, at: 120 },
      ],
    );
    assert.deepEqual(ruleAt({ kind: 'weekly', day: 3, at: 120 }, 300), { kind: 'weekly', day: 3, at: 300 });
  });

  it('names a schedule by its rule and next run, or Paused', () => {
    const now = epochAtWallTime({ year: 2026, month: 12, day: 2 }, 12 * 60, ZONE);
    const s: ScheduleRecord = {
      id: 's',
      title: 'Nightly deps',
      prompt: 'p',
      workspacePath: '/w',
      workspaceIdentity: null,
      permissionMode: 'plan',
      model: null,
      thoughtLevel: null,
      isolation: null,
      checkCommand: null,
      rule: { kind: 'daily', at: 120 },
      zone: ZONE,
      paused: false,
      handledThrough: now - 1,
      createdAt: 0,
      updatedAt: 0,
    };
    assert.deepEqual(schedulePickItem(s, now, ZONE), {
      label: 'Nightly deps',
      description: 'Every day at 02:00 · Next: Thu 02:00',
      detail: '/w',
    });
    assert.equal(schedulePickItem({ ...s, paused: true }, now, ZONE).description, 'Every day at 02:00 · Paused');
  });
});
