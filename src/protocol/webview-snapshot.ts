// The panel's snapshot: the whole state the host pushes, versioned (the cards, History's first
// page and filter, availability, the setup line, the folders), and the lighter shape the webview
// checks it with on arrival. Part of the panel's protocol (webview.ts).
import { z } from 'zod';
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
  /** What it came to, in the words the card and the notifications use (docs/flows.md#outcomes). */
  outcome: OutcomeViewSchema,
});
export type HistoryRowView = z.infer<typeof HistoryRowSchema>;

/** The History filter box (docs/flows.md#archive): every part given must match. */
export const HistoryFilterSchema = z
  .object({
    /** Text in the title or the prompt (case-insensitive). */
    text: z.string().max(200).optional(),
    /** An outcome, or the group "succeeded" or "failure" (src/core/outcome.ts: HISTORY_FILTERS). */
    status: HistoryFilterKeySchema.optional(),
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

/** The account at a glance (docs/flows.md#capacity-and-cost), worded by `src/core/account-bar.ts`. */
export const AccountBarViewSchema = z.object({
  windows: z.array(
    z.object({
      label: z.enum(['5 h', 'week']),
      percent: z.number().int().min(0).max(100),
      resetText: z.string().max(100),
      overReserve: z.boolean(),
    }),
  ),
  reservePercent: z.number().int().min(0).max(100).nullable(),
  ageText: z.string().max(100),
  holdingText: z.string().max(200).nullable(),
  shortText: z.string().max(100),
  holdingShort: z.string().max(100).nullable(),
});

export const PanelStateSchema = z.object({
  /** Increases with every snapshot; the webview ignores anything older than what it shows. */
  version: z.number().int().nonnegative(),
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
      ownBranch: z.boolean().optional(),
      /** Why the folder cannot have its own branch (the toggle is off and disabled, the form says why). */
      noOwnBranch: z.string().max(1_000).optional(),
      /** The form's prefill of the check command (docs/flows.md#checks). */
      lastCheckCommand: z.string().optional(),
      /** What the last tasks of the folder spent, "Similar tasks here: $0.40 (median of the last 3)" (docs/flows.md#capacity-and-cost). */
      typicalSpend: z.string().max(200).optional(),
    }),
  ),
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
  /** A subscription account's windows from the last answer that reported them (absent or null: none did). */
  account: AccountBarViewSchema.nullable().optional(),
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
export const PanelStateArrivalSchema = PanelStateSchema.extend({
  tasks: z.array(rowWithId('id')),
  history: z.array(rowWithId('taskId')),
});
