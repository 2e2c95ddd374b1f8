// The create form's "Repeat" (docs/flows.md#schedules-and-chains): Once (one task, as before), or a
// schedule's rule: daily, on chosen weekdays or weekly, at a time on this machine's clock.
import type { Weekday } from '../src/core/schedule-rules';
import type { ScheduleView } from '../src/protocol/schedules';
import { formatMinuteOfDay, parseMinuteOfDay, WEEKDAY_SHORT } from '../src/core/zoned-time';
import { valueOf } from './field-value';
import { SelectField } from './select-field';

/** A rule as the protocol carries it. */
export type ScheduleRule = ScheduleView['rule'];
export type RepeatKind = 'once' | ScheduleRule['kind'];

/** What the Repeat fields hold; a rule is made of it only when `kind` is not once. */
export interface RepeatChoice {
  kind: RepeatKind;
  /** "02:00", as the time field has it. */
  time: string;
  /** On weekdays: the checked days. */
  days: Weekday[];
  /** Weekly: its day. */
  day: Weekday;
}

export const REPEAT_ONCE: RepeatChoice = { kind: 'once', time: '02:00', days: [1, 2, 3, 4, 5], day: 1 };

const KIND_LABELS: { value: RepeatKind; label: string }[] = [
  { value: 'once', label: 'Once' },
  { value: 'daily', label: 'Daily' },
  { value: 'weekdays', label: 'On weekdays' },
  { value: 'weekly', label: 'Weekly' },
];
/** Monday first, as a week is read. */
const WEEK: Weekday[] = [1, 2, 3, 4, 5, 6, 0];
const WEEKDAY_LONG = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;

/** The rule the fields say, or null for Once; a string says what is missing (the form shows it and does not send). */
export function ruleOf(choice: RepeatChoice): ScheduleRule | null | string {
  if (choice.kind === 'once') return null;
  const at = parseMinuteOfDay(choice.time);
  if (at === undefined) return 'Choose a time (HH:MM).';
  if (choice.kind === 'daily') return { kind: 'daily', at };
  if (choice.kind === 'weekly') return { kind: 'weekly', day: choice.day, at };
  if (choice.days.length === 0) return 'Choose at least one weekday.';
  return { kind: 'weekdays', days: WEEK.filter((d) => choice.days.includes(d)), at };
}

/** The fields filled from a schedule's rule (its Edit form). */
export function choiceOf(rule: ScheduleRule): RepeatChoice {
  const time = formatMinuteOfDay(rule.at);
  if (rule.kind === 'weekdays') return { ...REPEAT_ONCE, kind: 'weekdays', time, days: [...rule.days] };
  if (rule.kind === 'weekly') return { ...REPEAT_ONCE, kind: 'weekly', time, day: rule.day };
  return { ...REPEAT_ONCE, kind: 'daily', time };
}

/** `once`: a schedule being edited cannot become one task (delete it instead). */
export function RepeatFields({
  choice,
  onChange,
  zoneText,
  once = true,
  timeId,
}: {
  choice: RepeatChoice;
  onChange(choice: RepeatChoice): void;
  zoneText: string;
  once?: boolean;
  timeId: string;
}) {
  const set = (patch: Partial<RepeatChoice>) => onChange({ ...choice, ...patch });
  const toggleDay = (day: Weekday, on: boolean) => set({ days: on ? [...choice.days, day] : choice.days.filter((d) => d !== day) });
  return (
    <div class="repeat" data-testid="repeat-fields">
      <div class="repeat-row">
        <SelectField
          label="Repeat"
          testid="repeat"
          value={choice.kind}
          choices={KIND_LABELS.filter((k) => once || k.value !== 'once')}
          onChange={(v) => set({ kind: v as RepeatKind })}
        />
        {choice.kind === 'weekly' && (
          <SelectField
            label="Day"
            testid="repeat-day"
            value={String(choice.day)}
            choices={WEEK.map((d) => ({ value: String(d), label: WEEKDAY_LONG[d] }))}
            onChange={(v) => set({ day: Number(v) as Weekday })}
          />
        )}
        {choice.kind !== 'once' && (
          <div>
            <vscode-label for={timeId}>At</vscode-label>
            <vscode-textfield
              id={timeId}
              type="time"
              data-testid="repeat-time"
              value={choice.time}
              onInput={(e) => set({ time: valueOf(e) })}
              onChange={(e) => set({ time: valueOf(e) })}
            />
          </div>
        )}
      </div>
      {choice.kind === 'weekdays' && (
        <fieldset class="repeat-days" data-testid="repeat-days">
          <legend class="hint">On</legend>
          {WEEK.map((d) => (
            <label key={d} data-testid={`repeat-day-${d}`}>
              <input
                type="checkbox"
                checked={choice.days.includes(d)}
                onChange={(e) => toggleDay(d, (e.target as HTMLInputElement).checked)}
              />{' '}
              {WEEKDAY_SHORT[d]}
            </label>
          ))}
        </fieldset>
      )}
      {choice.kind !== 'once' && (
        <span class="hint" data-testid="repeat-hint">
          On this machine's clock ({zoneText}). Each run is one task, through the usual queue and hours; a run still going when the next is
          due makes that one skip.
        </span>
      )}
    </div>
  );
}
