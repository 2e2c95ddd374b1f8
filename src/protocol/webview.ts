// Messages between the extension host and the Off-Peak Tasks webview. One zod definition is
// used on both sides: the host validates everything the webview sends (a webview is untrusted
// input), the webview validates the snapshots it renders. The host is the single source of
// state: it pushes whole, versioned snapshots and posts nothing before the webview says `ready`.
import { CheckViewSchema } from './check-view';
import { z } from 'zod';
import { TASK_STATUSES } from '../core/types';
import { CreateTaskFormSchema, PermissionModeSchema, PromptSchema, TitleSchema } from './task-form';
import { ScheduleRequests, ScheduleRunMarkSchema, ScheduleViewSchema } from './schedules';

export { CreateTaskFormSchema, PermissionModeSchema, PROMPT_MAX_CHARS, type CreateTaskForm } from './task-form';
export * from './schedules';

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
  /** The task's changes were applied to the folder as uncommitted changes: when. */
  appliedAt: z.number().nullable().optional(),
  /** "Merge" is offered (a finished task whose worktree is there, not merged yet). */
  canMerge: z.boolean().optional(),
  /** "Discard" and "Open worktree in new window" are offered (a finished task whose worktree is there). */
  canDiscard: z.boolean().optional(),
  canOpen: z.boolean().optional(),
});
export type WorkplaceView = z.infer<typeof WorkplaceViewSchema>;

export const TaskCardSchema = z.object({
  id: z.string(),
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
  /** docs/flows.md#schedules-and-chains: its "not before" time on the machine's clock ("Tue 02:00") while it waits; the title of the task it waits for. */
  scheduledFor: z.string().optional(), notBefore: z.number().optional(), afterTitle: z.string().nullable().optional(),
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

export const HistoryRowSchema = z.object({
  taskId: z.string(),
  title: z.string(),
  prompt: z.string(),
  triggeredAt: z.number(),
  status: z.enum(['in_progress', 'succeeded', 'failure', 'skipped']),
  durationMs: z.number().nonnegative(),
  sessionId: z.string().nullable(),
  failureReason: z.string().nullable(),
  /** A follow-up's History row says which task it followed up ("follow-up of <title>"). */
  followUpOfId: z.string().nullable().optional(),
  followUpOfTitle: z.string().nullable().optional(),
  /** The tokens of all its segments; null when none were counted. */
  usage: UsageViewSchema.nullable(),
  refusals: RefusalCountSchema.optional(),
  /** Succeeded, but the action the user allowed did not run. */
  allowedNotRun: AllowedNotRunSchema.optional(),
  /** "Review changes" on the row opens the task's changes in the diff editor. */
  reviewable: z.boolean().optional(),
  /** The task is in the history archive (docs/flows.md#archive); acting on it brings it back first. */
  archived: z.boolean().optional(),
  check: CheckViewSchema.optional(),
});
export type HistoryRowView = z.infer<typeof HistoryRowSchema>;

/** The History filter box (docs/flows.md#archive): every part given must match. */
export const HistoryFilterSchema = z
  .object({
    /** Text in the title or the prompt (case-insensitive). */
    text: z.string().max(200).optional(),
    status: z.enum(['in_progress', 'succeeded', 'failure', 'skipped']).optional(),
    /** Triggered from / until (epoch ms, both inclusive). */
    from: z.number().int().nonnegative().optional(),
    to: z.number().int().nonnegative().optional(),
  })
  .strict();
export type HistoryFilterView = z.infer<typeof HistoryFilterSchema>;
/** History rows a snapshot carries; more come by `historyPage`. */
export const HISTORY_PAGE_ROWS = 50;

/**
 * What the create area shows. `kind` decides the layout; `reason` is already human text.
 * - hidden: the gateway does not expose off-peak tasks to this user (only existing tasks show);
 * - plan_locked: the plan has no off-peak tasks (3101): upgrade hint and link, create locked;
 * - limited: no ticket can be taken until `nextTakeAt` (a live countdown), or until a re-check;
 * - unreachable: the last check failed; `nextCheckAt` says when it is tried again;
 * - key_refused: the gateway answered, and refused the API key (`refusedStatus`, 401 or 403).
 */
export const AvailabilityViewSchema = z.object({
  kind: z.enum(['enabled', 'checking', 'hidden', 'plan_locked', 'limited', 'unreachable', 'key_refused']),
  canCreate: z.boolean(),
  /** Why create is disabled, as a sentence; absent when enabled. */
  reason: z.string().optional(),
  nextTakeAt: z.number().optional(),
  canTakeNumber: z.number().int().optional(),
  upgradeHint: z.string().optional(),
  upgradeUrl: z.string().optional(),
  /** Gateway health: the last answer that succeeded, and when the next check is due. */
  lastSuccessAt: z.number().optional(),
  nextCheckAt: z.number().optional(),
  /** The HTTP status of the gateway's refusal of the API key (kind key_refused). */
  refusedStatus: z.number().int().optional(),
  /**
   * Only while the gateway's off-peak windows are closed (queued tasks wait for them): when they
   * next open, or null when no opening is scheduled.
   */
  offPeakOpensAt: z.number().nullable().optional(),
});
export type AvailabilityView = z.infer<typeof AvailabilityViewSchema>;

/**
 * What will happen to a task queued now (docs/flows.md#what-the-panel-says): the mode, the agent,
 * whose credential, the model API's host and when tasks run. Words made by the host.
 */
export const SetupViewSchema = z.object({
  mode: z.enum(['personal', 'team']),
  /** "Personal mode" or "Team gateway <host>". */
  modeText: z.string(),
  /** "Claude Code" or "Reference agent", and for `auto` why ("found", "Claude Code not found"). */
  agentText: z.string(),
  /** Whose credential model requests carry, e.g. "your Claude Code login", "your model API key (not set)". */
  credentialText: z.string(),
  /** The model API's host (personal mode); null: the team gateway chooses. */
  modelApiHost: z.string().nullable(),
  /** `offPeak.personal.hours` as set (personal mode; null in team mode: the gateway's windows). */
  hours: z.string().nullable(),
  /** When the hours next open (to the minute); null: open now (or always). */
  hoursOpenAt: z.number().nullable(),
  /** The Model list's first choice: what a task that names no model runs on. */
  defaultModelText: z.string(),
  /** The credential is missing: the fix, as a command or setting to name. */
  missing: z.string().optional(),
  /** What a question nobody answers does now (`offPeak.unansweredQuestion` and its minutes), for the form's "Ask before edits" help. */
  unansweredText: z.string().optional(),
  /** A remote window that runs on the default settings (none of the machine settings set on the remote): says so and where they come from. */
  remoteText: z.string().max(1_000).optional(),
});
export type SetupView = z.infer<typeof SetupViewSchema>;

export const PanelStateSchema = z.object({
  /** Increases with every snapshot; the webview ignores anything older than what it shows. */
  version: z.number().int().nonnegative(),
  now: z.number(),
  tasks: z.array(TaskCardSchema),
  history: z.array(HistoryRowSchema),
  availability: AvailabilityViewSchema,
  hasApiKey: z.boolean(),
  models: z.array(z.string()),
  /**
   * `ownBranch`: the form's "Run on its own branch" starts checked (a folder committed in its
   * repository, `offPeak.isolation` worktree); `noOwnBranch`: why the folder cannot have one (the
   * toggle is off and disabled, the form says why); `lastCheckCommand`: the form's prefill (docs/flows.md#checks).
   */
  workspaces: z.array(z.object({ name: z.string(), path: z.string(), ownBranch: z.boolean().optional(), noOwnBranch: z.string().max(1_000).optional(), lastCheckCommand: z.string().optional() })),
  /** A problem the user should see (corrupt DB moved aside, gateway unreachable...). */
  notice: z.string().optional(),
  /** The mode, agent, credential, model API and hours line (absent: not known yet). */
  setup: SetupViewSchema.optional(),
  /**
   * Whether VS Code shows the panel (its tab is the active one); a webview in a background tab
   * cannot tell on its own. Absent: shown. Results count as seen only while it is shown.
   */
  visible: z.boolean().optional(),
  /** When a panel last showed a result (the user last looked): the summary's "Since 18:40". Null: never. */
  lastSeenAt: z.number().nullable().optional(),
  /** `history` is the first page: how many History rows the task DB has in all (absent: all are in `history`). */
  historyTotal: z.number().int().nonnegative().optional(),
  /** A history archive exists: older rows are behind "Show more" (docs/flows.md#archive). */
  historyArchived: z.boolean().optional(),
  /** The repeating schedules, not deleted, oldest first (docs/flows.md#schedules-and-chains; absent: none). */
  schedules: z.array(ScheduleViewSchema).optional(),
  /** The extension host's time zone, in which schedules run and their times are worded (a remote window's webview may be elsewhere). */
  timeZone: z.string().max(100).optional(),
});
export type PanelState = z.infer<typeof PanelStateSchema>;

// --- requests (webview -> host, answered with a result) --------------------------------------

const requestId = z.string().min(1).max(64);
const taskId = z.string().min(1).max(200);
const title = TitleSchema;
const prompt = PromptSchema;

export const EditTaskPatchSchema = z
  // notBefore: only while the task has taken no ticket (null: take it now; docs/flows.md#schedules-and-chains).
  .object({ title, prompt, permissionMode: PermissionModeSchema, model: z.string().max(200).nullable(), thoughtLevel: z.string().max(50).nullable(), notBefore: z.number().int().nonnegative().nullable() })
  .partial()
  .strict();
export type EditTaskPatch = z.infer<typeof EditTaskPatchSchema>;

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

const TaskRef = z.object({ taskId }).strict();
/** How an answer to a permission question ended: it decided, someone answered first, or the question is gone. */
export const AnswerOutcomeSchema = z.enum(['accepted', 'already-answered', 'unknown', 'input-mismatch']);
const Nothing = z.object({}).strict();
/** False when the user declined the confirmation: nothing was changed. */
const Confirmed = z.object({ done: z.boolean() });

/**
 * Every request the webview can make: its params and its result. The host's handlers
 * (`RequestHandlers`) and the webview's client (`HostChannel.request`) are both typed from this
 * one map, and both sides validate against it.
 */
export const PanelRequests = {
  /** `taskId` null: the user declined the Bypass permissions confirmation; nothing was queued. */
  createTask: { params: z.object({ input: CreateTaskFormSchema }).strict(), result: z.object({ taskId: z.string().nullable() }) },
  editTask: { params: z.object({ taskId, patch: EditTaskPatchSchema }).strict(), result: z.object({ title: z.string(), prompt: z.string() }) },
  pause: { params: TaskRef, result: Nothing },
  /** `retake_pending`: the old ticket was gone and a new one could not be taken yet (`error` says why); `scheduled`: taken at its "not before" time. */
  continue: { params: TaskRef, result: z.object({ ticket: z.enum(['reused', 'retaken', 'retake_pending', 'scheduled']), error: z.string().optional() }) },
  cancel: { params: TaskRef, result: Confirmed },
  delete: { params: TaskRef, result: Confirmed },
  deleteHistory: { params: TaskRef, result: z.object({ hidden: z.boolean(), reason: z.string().optional() }) },
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
    params: z.object({ taskId, prompt, title: title.optional(), permissionMode: PermissionModeSchema.optional() }).strict(),
    result: z.object({ taskId: z.string().nullable() }),
  },
  segments: { params: TaskRef, result: z.object({ segments: z.array(SegmentViewSchema) }) },
  /** The task's permission questions with their answers, who answered and when (the expanded card). */
  questions: { params: TaskRef, result: z.object({ questions: z.array(QuestionViewSchema) }) },
  /** "Discard": removes a finished task's worktree and branch after a confirmation (docs/flows.md#bring-it-home). */
  /** `report`: what Discard removed (only what was there). */
  discardChanges: { params: TaskRef, result: z.object({ done: z.boolean(), report: z.string().optional() }) },
  /**
   * "Merge": the task's branch into the folder's checked-out branch after a confirmation.
   * `conflict`: the merge is in progress with conflicts (the merge editor opens); a refusal is an error saying why.
   */
  mergeChanges: { params: TaskRef, result: z.object({ outcome: z.enum(['merged', 'conflict', 'declined']), into: z.string().optional(), files: z.array(z.string()).optional() }) },
  /** "Apply as uncommitted changes" after a confirmation; a refusal is an error saying why. */
  applyChanges: { params: TaskRef, result: Confirmed },
  /** "Open worktree in new window". */
  openWorktree: { params: TaskRef, result: Nothing },
  /** "Review changes": the task's changes in VS Code's multi-file diff editor; `path`: one file's diff (docs/flows.md#review). */
  reviewChanges: { params: z.object({ taskId, path: z.string().min(1).max(4096).optional() }).strict(), result: Nothing },
  /** Allow or Deny on a needs-input card; the first answer wins (card, notification, terminal or deadline). */
  answerAsk: {
    /** `inputDigest`: the sha256 of the input the card showed; an answer for another input is refused. */
    params: z.object({ taskId, askId: z.string().min(1).max(100), decision: z.enum(['allow', 'deny']), inputDigest: z.string().regex(/^[0-9a-f]{64}$/) }).strict(),
    result: z.object({ outcome: AnswerOutcomeSchema }),
  },
  /**
   * The panel showed these results (visible, on screen): their "New" mark and the unseen count go
   * in every window. `marked`: how many were still unseen.
   */
  markSeen: { params: z.object({ taskIds: z.array(taskId).min(1).max(1000) }).strict(), result: z.object({ marked: z.number().int().nonnegative() }) },
  /**
   * These unseen results are on screen in the visible panel. They keep their "New" mark (and the
   * status bar's count) while the user looks, and count as seen when the panel is hidden or
   * closed: one rule for the cards, the tab title and the status bar. `held`: how many are waiting.
   */
  showing: { params: z.object({ taskIds: z.array(taskId).min(1).max(1000) }).strict(), result: z.object({ held: z.number().int().nonnegative() }) },
  /**
   * Asks for the key and checks it with the gateway: `saved` false when the user dismissed the box;
   * `check` says whether the gateway accepted it (null: it could not be reached), as a sentence.
   */
  setApiKey: { params: Nothing, result: z.object({ saved: z.boolean(), check: z.object({ accepted: z.boolean().nullable(), text: z.string() }).optional() }) },
  /** Re-checks availability and the gateway's client configs. */
  refresh: { params: Nothing, result: Nothing },
  /** Opens the first-run walkthrough (the empty state's link; docs/flows.md#first-run). */
  openWalkthrough: { params: Nothing, result: Nothing },
  /**
   * A page of History, live and archived rows, newest first (the task DB's, then the archive's),
   * matching the filter; `total`: rows matching in all (docs/flows.md#archive).
   */
  historyPage: {
    params: z.object({ offset: z.number().int().nonnegative().max(1_000_000), limit: z.number().int().min(1).max(500), filter: HistoryFilterSchema.optional() }).strict(),
    result: z.object({ rows: z.array(HistoryRowSchema), total: z.number().int().nonnegative() }),
  },
  ...ScheduleRequests,
} as const;

export type PanelMethod = keyof typeof PanelRequests;
export type PanelParams<M extends PanelMethod> = z.infer<(typeof PanelRequests)[M]['params']>;
export type PanelResult<M extends PanelMethod> = z.infer<(typeof PanelRequests)[M]['result']>;
/** The host implements one handler per request. */
export type RequestHandlers = { [M in PanelMethod]: (params: PanelParams<M>) => Promise<PanelResult<M>> };

const methodNames = Object.keys(PanelRequests) as [PanelMethod, ...PanelMethod[]];

export const WebviewToHostSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('request'), requestId, method: z.enum(methodNames), params: z.unknown() }),
]);
export type WebviewToHost = z.infer<typeof WebviewToHostSchema>;

// --- host -> webview -------------------------------------------------------------------------

/** A row checked only for its id, in place: an object schema would copy each of its keys. */
const rowWithId = <K extends string>(key: K) =>
  z.custom<Record<K, string>>((row) => typeof row === 'object' && row !== null && typeof (row as Record<string, unknown>)[key] === 'string', { message: `a row without its ${key}` });

/**
 * A snapshot as the webview checks it on arrival: everything but the card and History rows in
 * full, those only for their ids. The host builds them from the types above; a full parse of
 * 1000 cards on every push would cost more than a frame (the webview's CSP rules out zod's
 * compiled parsers).
 */
export const PanelStateArrivalSchema = PanelStateSchema.extend({
  tasks: z.array(rowWithId('id')),
  history: z.array(rowWithId('taskId')),
});

export const HostToWebviewSchema = z.union([
  z.object({ type: z.literal('state'), state: PanelStateArrivalSchema }),
  z.object({ type: z.literal('result'), requestId: z.string(), ok: z.literal(true), result: z.unknown() }),
  /** `code`: the service's error code (e.g. `gateway_unavailable`: the panel clears that banner once the gateway answers again). */
  z.object({ type: z.literal('result'), requestId: z.string(), ok: z.literal(false), error: z.string(), code: z.string().optional() }),
  /** Asks the webview to bring the create form into view (the "Queue Off-Peak Task…" command). */
  z.object({ type: z.literal('focusForm') }),
]);
export type HostToWebview = z.infer<typeof HostToWebviewSchema>;

/** A readable one-line explanation of why a message was refused. */
export function describeInvalidMessage(error: z.ZodError): string {
  const first = error.issues[0];
  if (!first) return 'invalid message';
  const where = first.path.length > 0 ? first.path.join('.') : 'message';
  return `${where}: ${first.message}`;
}
