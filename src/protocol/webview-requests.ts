// The panel's requests (webview -> host, each answered with a result): one map of every
// method's params and result, which types the host's handlers and the webview's client alike.
// Part of the panel's protocol (webview.ts).
import * as z from './zod';
import { ScheduleRequests } from './schedules';
import { CreateTaskFormSchema, PermissionModeSchema, PromptSchema, TitleSchema } from './task-form';
import { QuestionViewSchema, SegmentViewSchema } from './webview-card';
import { HistoryFilterSchema, HistoryRowSchema } from './webview-snapshot';

const taskId = z.string().check(z.minLength(1)).check(z.maxLength(200));
const title = TitleSchema;
const prompt = PromptSchema;

/** What an edit changes; every field is optional. */
export const EditTaskPatchSchema = z.partial(
  z.strictObject({
    title,
    prompt,
    permissionMode: PermissionModeSchema,
    model: z.nullable(z.string().check(z.maxLength(200))),
    thoughtLevel: z.nullable(z.string().check(z.maxLength(50))),
    /** Only while the task has taken no ticket (null: take it now; docs/flows.md#schedules-and-chains). */
    notBefore: z.nullable(z.number().check(z.int()).check(z.nonnegative())),
  }),
);
export type EditTaskPatch = z.infer<typeof EditTaskPatchSchema>;

const TaskRef = z.strictObject({ taskId });
/** How an answer to a permission question ended: it decided, someone answered first, or the question is gone. */
export const AnswerOutcomeSchema = z.enum(['accepted', 'already-answered', 'unknown', 'input-mismatch']);
const Nothing = z.strictObject({});
/** False when the user declined the confirmation: nothing was changed. */
const Confirmed = z.object({ done: z.boolean() });

/**
 * Every request the webview can make: its params and its result. The host's handlers
 * (`RequestHandlers`) and the webview's client (`HostChannel.request`) are both typed from this
 * one map, and both sides validate against it.
 */
export const PanelRequests = {
  /** `taskId` null: the user declined the Bypass permissions confirmation; nothing was queued. */
  createTask: { params: z.strictObject({ input: CreateTaskFormSchema }), result: z.object({ taskId: z.nullable(z.string()) }) },
  editTask: {
    params: z.strictObject({ taskId, patch: EditTaskPatchSchema }),
    result: z.object({ title: z.string(), prompt: z.string() }),
  },
  pause: { params: TaskRef, result: Nothing },
  /** `retake_pending`: the old ticket was gone and a new one could not be taken yet (`error` says why); `scheduled`: taken at its "not before" time. */
  continue: {
    params: TaskRef,
    result: z.object({ ticket: z.enum(['reused', 'retaken', 'retake_pending', 'scheduled']), error: z.optional(z.string()) }),
  },
  cancel: { params: TaskRef, result: Confirmed },
  delete: { params: TaskRef, result: Confirmed },
  deleteHistory: { params: TaskRef, result: z.object({ hidden: z.boolean(), reason: z.optional(z.string()) }) },
  openTerminal: { params: TaskRef, result: Nothing },
  /**
   * The Session entry: a Claude Code session continues interactively in a terminal; a reference
   * agent's transcript is shown read-only in the task's terminal (docs/flows.md#open-session).
   */
  openSession: { params: TaskRef, result: z.object({ opened: z.enum(['interactive', 'transcript']) }) },
  /**
   * "Follow up…" on a finished task: a new task resuming its session (docs/flows.md#follow-up).
   * `taskId` null: the user declined the Bypass permissions confirmation; nothing was queued.
   */
  followUp: {
    params: z.strictObject({ taskId, prompt, title: z.optional(title), permissionMode: z.optional(PermissionModeSchema) }),
    result: z.object({ taskId: z.nullable(z.string()) }),
  },
  segments: { params: TaskRef, result: z.object({ segments: z.array(SegmentViewSchema) }) },
  /** The task's permission questions with their answers, who answered and when (the expanded card). */
  questions: { params: TaskRef, result: z.object({ questions: z.array(QuestionViewSchema) }) },
  /**
   * "Discard": removes a finished task's worktree and branch after a confirmation
   * (docs/flows.md#bring-it-home). `report`: what it removed (only what was there).
   */
  discardChanges: { params: TaskRef, result: z.object({ done: z.boolean(), report: z.optional(z.string()) }) },
  /**
   * "Merge": the task's branch into the folder's checked-out branch after a confirmation.
   * `conflict`: the merge is in progress with conflicts (the merge editor opens); a refusal is an error saying why.
   */
  mergeChanges: {
    params: TaskRef,
    result: z.object({
      outcome: z.enum(['merged', 'conflict', 'declined']),
      into: z.optional(z.string()),
      files: z.optional(z.array(z.string())),
    }),
  },
  /** "Apply as uncommitted changes" after a confirmation; a refusal is an error saying why. */
  applyChanges: { params: TaskRef, result: Confirmed },
  /**
   * "Open pull request": the task's branch pushed and a pull request opened on its forge
   * (docs/flows.md#pull-requests); a refusal or failure is an error saying what to do.
   */
  openPullRequest: { params: TaskRef, result: z.object({ number: z.number().check(z.int()).check(z.positive()), url: z.string() }) },
  /**
   * "Follow up from review": the pull request's review comments and failing checks as a follow-up
   * that resumes the task's session in its worktree (docs/flows.md#pull-requests); the new task's id.
   */
  followUpFromReview: { params: TaskRef, result: z.object({ taskId: z.string() }) },
  /** "Open worktree in new window". */
  openWorktree: { params: TaskRef, result: Nothing },
  /** "Review changes": the task's changes in VS Code's multi-file diff editor; `path`: one file's diff (docs/flows.md#review). */
  reviewChanges: {
    params: z.strictObject({ taskId, path: z.optional(z.string().check(z.minLength(1)).check(z.maxLength(4096))) }),
    result: Nothing,
  },
  /** Allow or Deny on a needs-input card; the first answer wins (card, notification, terminal or deadline). */
  answerAsk: {
    /** `inputDigest`: the sha256 of the input the card showed; an answer for another input is refused. */
    params: z.strictObject({
      taskId,
      askId: z.string().check(z.minLength(1)).check(z.maxLength(100)),
      decision: z.enum(['allow', 'deny']),
      inputDigest: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
    }),
    result: z.object({ outcome: AnswerOutcomeSchema }),
  },
  /**
   * The panel showed these results (visible, on screen): their "New" mark and the unseen count go
   * in every window. `marked`: how many were still unseen.
   */
  markSeen: {
    params: z.strictObject({ taskIds: z.array(taskId).check(z.minLength(1)).check(z.maxLength(1000)) }),
    result: z.object({ marked: z.number().check(z.int()).check(z.nonnegative()) }),
  },
  /**
   * These unseen results are on screen in the visible panel. They keep their "New" mark (and the
   * status bar's count) while the user looks, and count as seen when the panel is hidden or
   * closed: one rule for the cards, the tab title and the status bar. `held`: how many are waiting.
   */
  showing: {
    params: z.strictObject({ taskIds: z.array(taskId).check(z.minLength(1)).check(z.maxLength(1000)) }),
    result: z.object({ held: z.number().check(z.int()).check(z.nonnegative()) }),
  },
  /**
   * Asks for the key and checks it with the gateway: `saved` false when the user dismissed the box;
   * `check` says whether the gateway accepted it (null: it could not be reached), as a sentence.
   */
  setApiKey: {
    params: Nothing,
    result: z.object({ saved: z.boolean(), check: z.optional(z.object({ accepted: z.nullable(z.boolean()), text: z.string() })) }),
  },
  /** Re-checks availability and the gateway's client configs. */
  refresh: { params: Nothing, result: Nothing },
  /** Opens the first-run walkthrough (the empty state's link; docs/flows.md#first-run). */
  openWalkthrough: { params: Nothing, result: Nothing },
  /**
   * A page of History, live and archived rows, newest first (the task DB's, then the archive's),
   * matching the filter; `total`: rows matching in all (docs/flows.md#archive).
   */
  historyPage: {
    params: z.strictObject({
      offset: z.number().check(z.int()).check(z.nonnegative()).check(z.lte(1_000_000)),
      limit: z.number().check(z.int()).check(z.gte(1)).check(z.lte(500)),
      filter: z.optional(HistoryFilterSchema),
    }),
    result: z.object({ rows: z.array(HistoryRowSchema), total: z.number().check(z.int()).check(z.nonnegative()) }),
  },
  ...ScheduleRequests,
} as const;

export type PanelMethod = keyof typeof PanelRequests;
export type PanelParams<M extends PanelMethod> = z.infer<(typeof PanelRequests)[M]['params']>;
export type PanelResult<M extends PanelMethod> = z.infer<(typeof PanelRequests)[M]['result']>;
/** The host implements one handler per request. */
export type RequestHandlers = { [M in PanelMethod]: (params: PanelParams<M>) => Promise<PanelResult<M>> };
