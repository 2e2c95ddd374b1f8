// The task card as the panel shows it: its phase, open question, tokens, workplace and actions,
// and what its expanded view lists (the ticket ledger's segments, the questions and their
// answers). Part of the panel's protocol (webview.ts); the host builds these, the webview renders.
import * as z from './zod';
import { TASK_STATUSES } from '../core/types';
import { CheckViewSchema } from './check-view';
import { OutcomeViewSchema } from './outcome-view';
import { ScheduleRunMarkSchema } from './schedules';
import { PermissionModeSchema } from './task-form';

/** What a card shows as its state: finer than the local status ("running" before admission would be untrue: docs/flows.md#task-states). */
export const CardPhaseSchema = z.enum([
  'taking_ticket', // no live ticket yet (first take or a retake is pending)
  'scheduled', // no ticket until its "not before" time (docs/flows.md#schedules-and-chains)
  'after', // no ticket until the task it waits for completed (docs/flows.md#schedules-and-chains)
  'in_queue', // the gateway's FIFO holds the ticket
  'ready', // the gateway admitted the ticket; the scheduler will start it
  'paused',
  'between_segments', // a segment ended; the task waits for its next ticket to be admitted
  'waiting_for_admission', // the agent runs, but no model request of this segment was admitted yet
  'waiting_for_model', // personal mode: the agent runs, no model answer of this segment yet (nothing there admits: docs/flows.md#task-states)
  'running',
  'needs_input', // parked on an unanswered question: no agent, no ticket, until it is answered
  'completed',
  'failed',
  'cancelled',
]);
export type CardPhase = z.infer<typeof CardPhaseSchema>;

/**
 * A permission question the task's agent is waiting on (only in the window that runs it).
 * `question` and `tool` are untrusted model text: every surface shows them as plain text.
 */
export const CardAskSchema = z.object({
  id: z.string(),
  tool: z.string(),
  question: z.string(),
  /** The tool call's whole input (never shortened): the card shows all of it beside Allow. Untrusted text. */
  input: z.string(),
  /** sha256 of `input`: the answer sends it back (docs/flows.md#what-a-question-shows). */
  inputDigest: z.string(),
  askedAt: z.number(),
  /** Denied automatically at this time (the card counts down to it). */
  deadlineAt: z.number(),
  /** Further questions of this task waiting behind this one. */
  more: z.number().check(z.int()).check(z.nonnegative()),
  /** What happens at `deadlineAt` when nobody answers (absent: deny). */
  onDeadline: z.optional(z.enum(['deny', 'park'])),
  /** The task parked on this question at this time: no agent waits, any window may answer. */
  parkedAt: z.optional(z.number()),
  /** Its window closed (at `parkedAt`) while it was open: answer it now, or the agent asks again when the task resumes. */
  interrupted: z.optional(z.boolean()),
});
export type CardAsk = z.infer<typeof CardAskSchema>;

/** "N actions denied (M automatically)": a task's denied questions (docs/flows.md#questions-park-the-task). */
export const RefusalCountSchema = z.object({
  denied: z.number().check(z.int()).check(z.nonnegative()),
  automatic: z.number().check(z.int()).check(z.nonnegative()),
});
export type RefusalCount = z.infer<typeof RefusalCountSchema>;

/** A completed task whose action the user allowed (after it parked) never ran: the question's tool and headline. Untrusted text. */
export const AllowedNotRunSchema = z.object({ tool: z.string(), summary: z.string() });
export type AllowedNotRunView = z.infer<typeof AllowedNotRunSchema>;

/** One question of a task as the expanded card lists it: the answer, who or what gave it, and when. */
export const QuestionViewSchema = z.object({
  askId: z.string(),
  tool: z.string(),
  summary: z.string(),
  askedAt: z.number(),
  parkedAt: z.nullable(z.number()),
  decision: z.nullable(z.enum(['allow', 'deny'])),
  /** `interrupted`: nobody yet, its window closed while it was open; `asked-again`: the resumed session was told to ask anew (docs/flows.md#a-question-across-a-reload). */
  answeredBy: z.nullable(z.enum(['host', 'terminal', 'other-window', 'timeout', 'stored', 'ended', 'interrupted', 'asked-again'])),
  answeredAt: z.nullable(z.number()),
});
export type QuestionView = z.infer<typeof QuestionViewSchema>;
/** Tokens the model API reported for a segment or a whole task (docs/flows.md#ticket-ledger). */
export const UsageViewSchema = z.object({
  /** The models that answered, comma-separated in the order first seen ("" when none said). */
  model: z.string(),
  inputTokens: z.number().check(z.int()).check(z.nonnegative()),
  outputTokens: z.number().check(z.int()).check(z.nonnegative()),
  cacheReadTokens: z.number().check(z.int()).check(z.nonnegative()),
  cacheWriteTokens: z.number().check(z.int()).check(z.nonnegative()),
  /** Model answers counted. */
  requests: z.number().check(z.int()).check(z.nonnegative()),
  /** Dollars at each answer's model's price (docs/flows.md#capacity-and-cost); absent when none was priced. */
  costUsd: z.optional(z.number().check(z.nonnegative())),
  /** The share (0..1) of a subscription account's 5-hour and weekly windows; absent when none was reported. */
  windowShare: z.optional(z.object({ fiveHour: z.number().check(z.nonnegative()), sevenDay: z.number().check(z.nonnegative()) })),
});
export type UsageView = z.infer<typeof UsageViewSchema>;
/** One changed file of a task, with its added/removed lines (null: binary or unknown). */
export const ChangedFileViewSchema = z.object({
  path: z.string(),
  status: z.enum(['added', 'modified', 'deleted']),
  added: z.nullable(z.number().check(z.int())),
  removed: z.nullable(z.number().check(z.int())),
});
export type ChangedFileView = z.infer<typeof ChangedFileViewSchema>;

/** A task's pull request on the card: number, link, state, the forge's checks and review. */
export const PullRequestViewSchema = z.object({
  number: z.number().check(z.int()).check(z.positive()),
  url: z.string(),
  state: z.enum(['draft', 'open', 'merged', 'closed']),
  checks: z.enum(['none', 'pending', 'passing', 'failing']),
  review: z.enum(['none', 'approved', 'changes_requested', 'commented']),
  /** The forge's rate limit holds the next look until then (docs/flows.md#pull-requests). */
  waitUntil: z.optional(z.nullable(z.number())),
});
export type PullRequestView = z.infer<typeof PullRequestViewSchema>;

/** Where a task works (docs/flows.md#isolation) and what it changed there (docs/flows.md#review). */
export const WorkplaceViewSchema = z.object({
  mode: z.enum(['worktree', 'inPlace']),
  /** Its own branch and worktree (null until its first start, and in place). */
  branch: z.nullable(z.string()),
  worktreePath: z.nullable(z.string()),
  /** Why a task asked to run on its own branch runs in place. */
  note: z.nullable(z.string()),
  /** The worktree's folder was removed by hand. */
  missing: z.boolean(),
  /** An in-place task waiting for the task that runs in its folder: that task's title. */
  waitingFor: z.nullable(z.string()),
  /** The changed files counted after the last segment (null: not counted yet or unknown). */
  changes: z.nullable(z.array(ChangedFileViewSchema)),
  /** "Review changes" can open the diff editor. */
  reviewable: z.boolean(),
  /** The branch was discarded (docs/flows.md#bring-it-home): when. */
  discardedAt: z.optional(z.nullable(z.number())),
  /** The branch was merged into the folder's checked-out branch: when. */
  mergedAt: z.optional(z.nullable(z.number())),
  /** Merged by its pull request on the forge: that pull request's number (docs/flows.md#pull-requests). */
  mergedIn: z.optional(z.nullable(z.number().check(z.int()))),
  /** The task's changes were applied to the folder as uncommitted changes: when. */
  appliedAt: z.optional(z.nullable(z.number())),
  /** Merged or applied, then its worktree and branch were removed: when (the record above stays). */
  removedAt: z.optional(z.nullable(z.number())),
  /** A chain's earlier step: the title of the last step, whose card brings the shared branch home (docs/flows.md#bring-it-home). */
  bringHomeWith: z.optional(z.nullable(z.string())),
  /** "Merge" is offered (a finished task whose worktree is there, not merged yet). */
  canMerge: z.optional(z.boolean()),
  /** "Discard" and "Open worktree in new window" are offered (a finished task whose worktree is there). */
  canDiscard: z.optional(z.boolean()),
  canOpen: z.optional(z.boolean()),
  /** "Open pull request" is offered (a finished task on its own branch, nothing brought home, no open pull request). */
  canOpenPullRequest: z.optional(z.boolean()),
  /** "Follow up from review" is offered: its pull request is open and the forge reports failing checks or a review. */
  canFollowUpFromReview: z.optional(z.boolean()),
  /** The task's pull request as the forge last said (docs/flows.md#pull-requests). */
  pullRequest: z.optional(z.nullable(PullRequestViewSchema)),
});
export type WorkplaceView = z.infer<typeof WorkplaceViewSchema>;

export const TaskCardSchema = z.object({
  id: z.string(),
  /** "4ea89496": the id away notifications name the task by (docs/flows.md#away-notifications). */
  shortId: z.string(),
  title: z.string(),
  /** True when the title is the prompt's first line (no title was given): an edit of the prompt changes it. */
  autoTitle: z.boolean(),
  prompt: z.string(),
  status: z.enum(TASK_STATUSES),
  phase: CardPhaseSchema,
  queuePosition: z.nullable(z.number().check(z.int())),
  workspacePath: z.string(),
  permissionMode: PermissionModeSchema,
  model: z.nullable(z.string()),
  thoughtLevel: z.nullable(z.string()),
  queuedAt: z.number(),
  startedAt: z.nullable(z.number()),
  endedAt: z.nullable(z.number()),
  failureReason: z.nullable(z.string()),
  lastError: z.nullable(z.string()),
  filesChanged: z.nullable(z.number().check(z.int())),
  segments: z.number().check(z.int()).check(z.nonnegative()),
  /** The open permission question, when this window runs the task's agent and it asked. */
  ask: z.nullable(CardAskSchema),
  /** A running task whose model requests cannot reach the gateway: since when (they wait for it; docs/flows.md#segments). */
  gatewayUnreachableSince: z.nullable(z.number()),
  /** The account's usage limit holds the task (or parked it) until this epoch ms; shown while it is ahead (docs/flows.md#usage-limits). */
  usageLimitResetAt: z.optional(z.nullable(z.number())),
  /** Its "not before" time on the machine's clock ("Tue 02:00") while it waits (docs/flows.md#schedules-and-chains). */
  scheduledFor: z.optional(z.string()),
  /** The same "not before" time, epoch ms (the edit form's prefill). */
  notBefore: z.optional(z.number()),
  /** The title of the task it waits for (docs/flows.md#schedules-and-chains). */
  afterTitle: z.optional(z.nullable(z.string())),
  /** The tokens of all its segments; null before the first model answer was counted. */
  usage: z.nullable(UsageViewSchema),
  /** Its usage with its follow-ups' (docs/flows.md#capacity-and-cost); absent when no follow-up of it used anything. */
  withFollowUps: z.optional(UsageViewSchema),
  /** A completed or failed result no panel in any window has shown yet (the card's "New" mark). */
  unseen: z.boolean(),
  /** Questions denied (by the user or automatically at the deadline), and how many of them automatically. */
  refusals: z.optional(RefusalCountSchema),
  /** Completed, but the action the user allowed did not run (docs/flows.md#questions-park-the-task). */
  allowedNotRun: z.optional(AllowedNotRunSchema),
  /** A follow-up: the finished task it continues (its id, and its title when the follow-up was made). */
  followUpOfId: z.nullable(z.string()),
  followUpOfTitle: z.nullable(z.string()),
  /** Tasks created since isolation exists: its own branch or in place, and its changed files. */
  workplace: z.optional(z.nullable(WorkplaceViewSchema)),
  check: z.optional(CheckViewSchema),
  /** What it came to (or that it is in progress), in the words History and the notifications use (docs/flows.md#outcomes). */
  outcome: OutcomeViewSchema,
  /** A run a repeating schedule queued (docs/flows.md#schedules-and-chains). */
  scheduleRun: z.optional(z.nullable(ScheduleRunMarkSchema)),
  actions: z.object({
    pause: z.boolean(),
    continue: z.boolean(),
    edit: z.boolean(),
    cancel: z.boolean(),
    delete: z.boolean(),
    /** A finished task that has a session: "Follow up…" and "Open session" (while it runs, its Terminal shows it live). */
    followUp: z.boolean(),
    openSession: z.boolean(),
  }),
});
export type TaskCard = z.infer<typeof TaskCardSchema>;

/** One ticket of a task's ledger, as the expanded card lists it. */
export const SegmentViewSchema = z.object({
  ordinal: z.number().check(z.int()),
  ticketId: z.string(),
  serverState: z.string(),
  queuedAt: z.number(),
  readyAt: z.nullable(z.number()),
  admittedAt: z.nullable(z.number()),
  startedAt: z.nullable(z.number()),
  endedAt: z.nullable(z.number()),
  endReason: z.nullable(z.string()),
  /** The tokens of this segment's model answers; null when none were counted. */
  usage: z.nullable(UsageViewSchema),
});
export type SegmentView = z.infer<typeof SegmentViewSchema>;
