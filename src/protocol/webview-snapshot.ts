// The panel's snapshot: the whole state the host pushes, versioned (the cards, History's first
// page and filter, availability, the setup line, the folders), and the lighter shape the webview
// checks it with on arrival. Part of the panel's protocol (webview.ts).
import * as z from './zod';
import { CheckViewSchema } from './check-view';
import { HistoryFilterKeySchema, OutcomeViewSchema } from './outcome-view';
import { ScheduleViewSchema } from './schedules';
import { AllowedNotRunSchema, RefusalCountSchema, TaskCardSchema, UsageViewSchema } from './webview-card';

export const HistoryRowSchema = z.object({
  taskId: z.string(),
  title: z.string(),
  prompt: z.string(),
  triggeredAt: z.number(),
  status: z.enum(['in_progress', 'succeeded', 'failure', 'skipped']),
  durationMs: z.number().check(z.nonnegative()),
  sessionId: z.nullable(z.string()),
  failureReason: z.nullable(z.string()),
  /** A follow-up's History row says which task it followed up ("follow-up of <title>"). */
  followUpOfId: z.optional(z.nullable(z.string())),
  followUpOfTitle: z.optional(z.nullable(z.string())),
  /** The tokens of all its segments; null when none were counted. */
  usage: z.nullable(UsageViewSchema),
  refusals: z.optional(RefusalCountSchema),
  /** Succeeded, but the action the user allowed did not run. */
  allowedNotRun: z.optional(AllowedNotRunSchema),
  /** "Review changes" on the row opens the task's changes in the diff editor. */
  reviewable: z.optional(z.boolean()),
  /** The task is in the history archive (docs/flows.md#archive); acting on it brings it back first. */
  archived: z.optional(z.boolean()),
  check: z.optional(CheckViewSchema),
  /** What it came to, in the words the card and the notifications use (docs/flows.md#outcomes). */
  outcome: OutcomeViewSchema,
});
export type HistoryRowView = z.infer<typeof HistoryRowSchema>;

/** The History filter box (docs/flows.md#archive): every part given must match. */
export const HistoryFilterSchema = z.strictObject({
  /** Text in the title or the prompt (case-insensitive). */
  text: z.optional(z.string().check(z.maxLength(200))),
  /** An outcome, or the group "succeeded" or "failure" (src/core/outcome.ts: HISTORY_FILTERS). */
  status: z.optional(HistoryFilterKeySchema),
  /** Triggered from / until (epoch ms, both inclusive). */
  from: z.optional(z.number().check(z.int()).check(z.nonnegative())),
  to: z.optional(z.number().check(z.int()).check(z.nonnegative())),
});
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
  reason: z.optional(z.string()),
  nextTakeAt: z.optional(z.number()),
  canTakeNumber: z.optional(z.number().check(z.int())),
  upgradeHint: z.optional(z.string()),
  upgradeUrl: z.optional(z.string()),
  /** Gateway health: the last answer that succeeded, and when the next check is due. */
  lastSuccessAt: z.optional(z.number()),
  nextCheckAt: z.optional(z.number()),
  /** The HTTP status of the gateway's refusal of the API key (kind key_refused). */
  refusedStatus: z.optional(z.number().check(z.int())),
  /**
   * Only while the gateway's off-peak windows are closed (queued tasks wait for them): when they
   * next open, or null when no opening is scheduled.
   */
  offPeakOpensAt: z.optional(z.nullable(z.number())),
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
  modelApiHost: z.nullable(z.string()),
  /** `offPeak.personal.hours` as set (personal mode; null in team mode: the gateway's windows). */
  hours: z.nullable(z.string()),
  /** When the hours next open (to the minute); null: open now (or always). */
  hoursOpenAt: z.nullable(z.number()),
  /** The Model list's first choice: what a task that names no model runs on. */
  defaultModelText: z.string(),
  /** The credential is missing: the fix, as a command or setting to name. */
  missing: z.optional(z.string()),
  /** What a question nobody answers does now (`offPeak.unansweredQuestion` and its minutes), for the form's "Ask before edits" help. */
  unansweredText: z.optional(z.string()),
  /** A remote window that runs on the default settings (none of the machine settings set on the remote): says so and where they come from. */
  remoteText: z.optional(z.string().check(z.maxLength(1_000))),
});
export type SetupView = z.infer<typeof SetupViewSchema>;

/** The account at a glance (docs/flows.md#capacity-and-cost), worded by `src/core/account-bar.ts`. */
export const AccountBarViewSchema = z.object({
  windows: z.array(
    z.object({
      label: z.enum(['5 h', 'week']),
      percent: z.number().check(z.int()).check(z.gte(0)).check(z.lte(100)),
      resetText: z.string().check(z.maxLength(100)),
      overReserve: z.boolean(),
    }),
  ),
  reservePercent: z.nullable(z.number().check(z.int()).check(z.gte(0)).check(z.lte(100))),
  ageText: z.string().check(z.maxLength(100)),
  holdingText: z.nullable(z.string().check(z.maxLength(200))),
  shortText: z.string().check(z.maxLength(100)),
  holdingShort: z.nullable(z.string().check(z.maxLength(100))),
});

export const PanelStateSchema = z.object({
  /** Increases with every snapshot; the webview ignores anything older than what it shows. */
  version: z.number().check(z.int()).check(z.nonnegative()),
  now: z.number(),
  tasks: z.array(TaskCardSchema),
  history: z.array(HistoryRowSchema),
  availability: AvailabilityViewSchema,
  hasApiKey: z.boolean(),
  models: z.array(z.string()),
  /** The window's folders, as the create form offers them. */
  workspaces: z.array(
    z.object({
      name: z.string(),
      path: z.string(),
      /** The form's "Run on its own branch" starts checked (a folder committed in its repository, `offPeak.isolation` worktree). */
      ownBranch: z.optional(z.boolean()),
      /** Why the folder cannot have its own branch (the toggle is off and disabled, the form says why). */
      noOwnBranch: z.optional(z.string().check(z.maxLength(1_000))),
      /** The form's prefill of the check command (docs/flows.md#checks). */
      lastCheckCommand: z.optional(z.string()),
      /** What the last tasks of the folder spent, "Similar tasks here: $0.40 (median of the last 3)" (docs/flows.md#capacity-and-cost). */
      typicalSpend: z.optional(z.string().check(z.maxLength(200))),
    }),
  ),
  /** A problem the user should see (corrupt DB moved aside, gateway unreachable...). */
  notice: z.optional(z.string()),
  /** The mode, agent, credential, model API and hours line (absent: not known yet). */
  setup: z.optional(SetupViewSchema),
  /**
   * Whether VS Code shows the panel (its tab is the active one); a webview in a background tab
   * cannot tell on its own. Absent: shown. Results count as seen only while it is shown.
   */
  visible: z.optional(z.boolean()),
  /** When a panel last showed a result (the user last looked): the summary's "Since 18:40". Null: never. */
  lastSeenAt: z.optional(z.nullable(z.number())),
  /** `history` is the first page: how many History rows the task DB has in all (absent: all are in `history`). */
  historyTotal: z.optional(z.number().check(z.int()).check(z.nonnegative())),
  /** A history archive exists: older rows are behind "Show more" (docs/flows.md#archive). */
  historyArchived: z.optional(z.boolean()),
  /** The repeating schedules, not deleted, oldest first (docs/flows.md#schedules-and-chains; absent: none). */
  schedules: z.optional(z.array(ScheduleViewSchema)),
  /** The extension host's time zone, in which schedules run and their times are worded (a remote window's webview may be elsewhere). */
  timeZone: z.optional(z.string().check(z.maxLength(100))),
  /** A subscription account's windows from the last answer that reported them (absent or null: none did). */
  account: z.optional(z.nullable(AccountBarViewSchema)),
});
export type PanelState = z.infer<typeof PanelStateSchema>;

/** A row checked only for its id, in place: an object schema would copy each of its keys. */
const rowWithId = <K extends string>(key: K) =>
  z.custom<Record<K, string>>(
    (row) => typeof row === 'object' && row !== null && typeof (row as Record<string, unknown>)[key] === 'string',
    { message: `a row without its ${key}` },
  );

/**
 * A snapshot as the webview checks it on arrival: everything but the card and History rows in
 * full, those only for their ids. The host builds them from the types above; a full parse of
 * 1000 cards on every push would cost more than a frame (the webview's CSP rules out zod's
 * compiled parsers).
 */
export const PanelStateArrivalSchema = z.extend(PanelStateSchema, {
  tasks: z.array(rowWithId('id')),
  history: z.array(rowWithId('taskId')),
});
