// Repeating schedules between the host and the webview (docs/flows.md#schedules-and-chains): the
// rule, what the Schedules section shows, a scheduled run's mark on its card, and the requests.
import * as z from './zod';
import type { ScheduleRule } from '../core/schedule-rules';
import { TASK_DRAFT_SHAPE } from './task-form';

const minuteOfDay = z
  .number()
  .check(z.int())
  .check(z.gte(0))
  .check(z.lte(24 * 60 - 1));
const weekday = z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3), z.literal(4), z.literal(5), z.literal(6)]);

/** `ScheduleRule` of src/core/schedule-rules.ts: `at` is the minute of the day (02:00 = 120) in the machine's zone; weekdays 0 = Sunday. */
export const ScheduleRuleSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('daily'), at: minuteOfDay }),
  z.strictObject({
    kind: z.literal('weekdays'),
    days: z.readonly(z.array(weekday).check(z.minLength(1)).check(z.maxLength(7))),
    at: minuteOfDay,
  }),
  z.strictObject({ kind: z.literal('weekly'), day: weekday, at: minuteOfDay }),
]) satisfies z.ZodMiniType<ScheduleRule>;

/** The task a schedule queues at each occurrence: the create form's fields without "not before" and "after". */
export const ScheduleDraftSchema = z.strictObject(TASK_DRAFT_SHAPE);
export type ScheduleDraft = z.infer<typeof ScheduleDraftSchema>;

/** What the Schedules section shows of one schedule. Words are made by the host. */
export const ScheduleViewSchema = z.object({
  id: z.string(),
  title: z.string(),
  /** `describeRule`: "Every day at 02:00", "Mon, Wed, Fri at 02:00". */
  ruleText: z.string(),
  rule: ScheduleRuleSchema,
  paused: z.boolean(),
  /** The next occurrence (epoch ms) and "Tue 02:00"; null while paused. */
  nextRunAt: z.nullable(z.number()),
  nextRunText: z.nullable(z.string()),
  /**
   * The last occurrence handled: its run's task (null when it was skipped, or the task was
   * deleted), when it was due, and its result in words ("Completed", "Ready for review · checks
   * pass", "Skipped: …", "Missed 3, caught up"…).
   */
  lastRun: z.nullable(z.object({ taskId: z.nullable(z.string()), at: z.number(), text: z.string(), catchUp: z.boolean() })),
  /** The saved task, to fill the form for Edit (the workspace is the folder's path). */
  draft: ScheduleDraftSchema,
});
export type ScheduleView = z.infer<typeof ScheduleViewSchema>;

/** A task a schedule queued: its card says "Nightly deps · Tue 02:00 (catch-up)". */
export const ScheduleRunMarkSchema = z.object({
  scheduleId: z.string(),
  scheduleTitle: z.string(),
  dueText: z.string(),
  catchUp: z.boolean(),
});
export type ScheduleRunMark = z.infer<typeof ScheduleRunMarkSchema>;

const scheduleId = z.string().check(z.minLength(1)).check(z.maxLength(200));

/** The Schedules section's requests (part of `PanelRequests` in src/protocol/webview.ts). */
export const ScheduleRequests = {
  /** `scheduleId` null: the user declined the Bypass permissions confirmation; nothing was saved. */
  createSchedule: {
    params: z.strictObject({ draft: ScheduleDraftSchema, rule: ScheduleRuleSchema }),
    result: z.object({ scheduleId: z.nullable(z.string()) }),
  },
  /** Future occurrences only: a run already queued keeps the task it was queued with. `done` false: declined. */
  editSchedule: {
    params: z.strictObject({ id: scheduleId, draft: ScheduleDraftSchema, rule: ScheduleRuleSchema }),
    result: z.object({ done: z.boolean() }),
  },
  /** Paused: no occurrence fires, none is caught up on resume. */
  pauseSchedule: { params: z.strictObject({ id: scheduleId, paused: z.boolean() }), result: z.object({}) },
  /** After a confirmation; a run already queued stays as an ordinary task. */
  deleteSchedule: { params: z.strictObject({ id: scheduleId }), result: z.object({ done: z.boolean() }) },
} as const;
