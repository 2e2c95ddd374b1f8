// The task card as the panel shows it: its phase, open question, tokens, workplace and actions,
// and what its expanded view lists (the ticket ledger's segments, the questions and their
// answers). Part of the panel's protocol (webview.ts); the host builds these, the webview renders.
import { z } from 'zod';
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
  more: z.number().int().nonnegative(),
  /** What happens at `deadlineAt` when nobody answers (absent: deny). */
  onDeadline: z.enum(['deny', 'park']).optional(),
  /** The task parked on this question at this time: no agent waits, any window may answer. */
  parkedAt: z.number().optional(),
  /** Its window closed (at `parkedAt`) while it was open: answer it now, or the agent asks again when the task resumes. */
  interrupted: z.boolean().optional(),
});
export type CardAsk = z.infer<typeof CardAskSchema>;

/** "N actions denied (M automatically)": a task's denied questions (docs/flows.md#questions-park-the-task). */
export const RefusalCountSchema = z.object({ denied: z.number().int().nonnegative(), automatic: z.number().int().nonnegative() });
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
  parkedAt: z.number().nullable(),
  decision: z.enum(['allow', 'deny']).nullable(),
  /** `interrupted`: nobody yet, its window closed while it was open; `asked-again`: the resumed session was told to ask anew (docs/flows.md#a-question-across-a-reload). */
  answeredBy: z.enum(['host', 'terminal', 'other-window', 'timeout', 'stored', 'ended', 'interrupted', 'asked-again']).nullable(),
  answeredAt: z.number().nullable(),
});
export type QuestionView = z.infer<typeof QuestionViewSchema>;
/** Tokens the model API reported for a segment or a whole task (docs/flows.md#ticket-ledger). */
export const UsageViewSchema = z.object({
  /** The models that answered, comma-separated in the order first seen ("" when none said). */
  model: z.string(),
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative(),
  cacheWriteTokens: z.number().int().nonnegative(),
  /** Model answers counted. */
  requests: z.number().int().nonnegative(),
});
export type UsageView = z.infer<typeof UsageViewSchema>;
/** One changed file of a task, with its added/removed lines (null: binary or unknown). */
export const ChangedFileViewSchema = z.object({
  path: z.string(),
  status: z.enum(['added', 'modified', 'deleted']),
  added: z.number().int().nullable(),
  removed: z.number().int().nullable(),
});
export type ChangedFileView = z.infer<typeof ChangedFileViewSchema>;

/** A task's pull request on the card: number, link, state, the forge's checks and review. */
export const PullRequestViewSchema = z.object({
  number: z.number().int().positive(),
  url: z.string(),
  state: z.enum(['draft', 'open', 'merged', 'closed']),
  checks: z.enum(['none', 'pending', 'passing', 'failing']),
  review: z.enum(['none', 'approved', 'changes_requested', 'commented']),
  /** The forge's rate limit holds the next look until then (docs/flows.md#pull-requests). */
  waitUntil: z.number().nullable().optional(),
});
export type PullRequestView = z.infer<typeof PullRequestViewSchema>;

/** Where a task works (docs/flows.md#isolation) and what it changed there (docs/flows.md#review). */
export const WorkplaceViewSchema = z.object({
  mode: z.enum(['worktree', 'inPlace']),
  /** Its own branch and worktree (null until its first start, and in place). */
  branch: z.string().nullable(),
  worktreePath: z.string().nullable(),
  /** Why a task asked to run on its own branch runs in place. */
  note: z.string().nullable(),
  /** The worktree's folder was removed by hand. */
  missing: z.boolean(),
  /** An in-place task waiting for the task that runs in its folder: that task's title. */
  waitingFor: z.string().nullable(),
  /** The changed files counted after the last segment (null: not counted yet or unknown). */
  changes: z.array(ChangedFileViewSchema).nullable(),
  /** "Review changes" can open the diff editor. */
  reviewable: z.boolean(),
  /** The branch was discarded (docs/flows.md#bring-it-home): when. */
  discardedAt: z.number().nullable().optional(),
  /** The branch was merged into the folder's checked-out branch: when. */
  mergedAt: z.number().nullable().optional(),
  /** Merged by its pull request on the forge: that pull request's number (docs/flows.md#pull-requests). */
  mergedIn: z.number().int().nullable().optional(),
  /** The task's changes were applied to the folder as uncommitted changes: when. */
  appliedAt: z.number().nullable().optional(),
  /** Merged or applied, then its worktree and branch were removed: when (the record above stays). */
  removedAt: z.number().nullable().optional(),
  /** A chain's earlier step: the title of the last step, whose card brings the shared branch home (docs/flows.md#bring-it-home). */
  bringHomeWith: z.string().nullable().optional(),
  /** "Merge" is offered (a finished task whose worktree is there, not merged yet). */
  canMerge: z.boolean().optional(),
  /** "Discard" and "Open worktree in new window" are offered (a finished task whose worktree is there). */
  canDiscard: z.boolean().optional(),
  canOpen: z.boolean().optional(),
  /** "Open pull request" is offered (a finished task on its own branch, nothing brought home, no open pull request). */
  canOpenPullRequest: z.boolean().optional(),
  /** "Follow up from review" is offered: its pull request is open and the forge reports failing checks or a review. */
  canFollowUpFromReview: z.boolean().optional(),
  /** The task's pull request as the forge last said (docs/flows.md#pull-requests). */
  pullRequest: PullRequestViewSchema.nullable().optional(),
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
  queuePosition: z.number().int().nullable(),
  workspacePath: z.string(),
  permissionMode: PermissionModeSchema,
  model: z.string().nullable(),
  thoughtLevel: z.string().nullable(),
  queuedAt: z.number(),
  startedAt: z.number().nullable(),
  endedAt: z.number().nullable(),
  failureReason: z.string().nullable(),
  lastError: z.string().nullable(),
  filesChanged: z.number().int().nullable(),
  segments: z.number().int().nonnegative(),
  /** The open permission question, when this window runs the task's agent and it asked. */
  ask: CardAskSchema.nullable(),
  /** A running task whose model requests cannot reach the gateway: since when (they wait for it; docs/flows.md#segments). */
  gatewayUnreachableSince: z.number().nullable(),
  /** The account's usage limit holds the task (or parked it) until this epoch ms; shown while it is ahead (docs/flows.md#usage-limits). */
  usageLimitResetAt: z.number().nullable().optional(),
  /** Its "not before" time on the machine's clock ("Tue 02:00") while it waits (docs/flows.md#schedules-and-chains). */
  scheduledFor: z.string().optional(),
  /** The same "not before" time, epoch ms (the edit form's prefill). */
  notBefore: z.number().optional(),
  /** The title of the task it waits for (docs/flows.md#schedules-and-chains). */
  afterTitle: z.string().nullable().optional(),
  /** The tokens of all its segments; null before the first model answer was counted. */
  usage: UsageViewSchema.nullable(),
  /** A completed or failed result no panel in any window has shown yet (the card's "New" mark). */
  unseen: z.boolean(),
  /** Questions denied (by the user or automatically at the deadline), and how many of them automatically. */
  refusals: RefusalCountSchema.optional(),
  /** Completed, but the action the user allowed did not run (docs/flows.md#questions-park-the-task). */
  allowedNotRun: AllowedNotRunSchema.optional(),
  /** A follow-up: the finished task it continues (its id, and its title when the follow-up was made). */
  followUpOfId: z.string().nullable(),
  followUpOfTitle: z.string().nullable(),
  /** Tasks created since isolation exists: its own branch or in place, and its changed files. */
  workplace: WorkplaceViewSchema.nullable().optional(),
  check: CheckViewSchema.optional(),
  /** What it came to (or that it is in progress), in the words History and the notifications use (docs/flows.md#outcomes). */
  outcome: OutcomeViewSchema,
  /** A run a repeating schedule queued (docs/flows.md#schedules-and-chains). */
  scheduleRun: ScheduleRunMarkSchema.nullable().optional(),
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
  ordinal: z.number().int(),
  ticketId: z.string(),
  serverState: z.string(),
  queuedAt: z.number(),
  readyAt: z.number().nullable(),
  admittedAt: z.number().nullable(),
  startedAt: z.number().nullable(),
  endedAt: z.number().nullable(),
  endReason: z.string().nullable(),
  /** The tokens of this segment's model answers; null when none were counted. */
  usage: UsageViewSchema.nullable(),
});
export type SegmentView = z.infer<typeof SegmentViewSchema>;
