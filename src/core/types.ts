/**
 * Domain types of an off-peak task and its admission tickets (docs/flows.md#task-states, docs/flows.md#ticket-ledger).
 * Plain data, no I/O: the store maps these to and from SQL rows, the service and the webview
 * consume them. All times are epoch milliseconds.
 */

/**
 * Local execution axis (docs/flows.md#task-states). `awaiting` is a legacy value, migrated to `running` at open.
 * `needs_input`: parked on an unanswered permission question, no agent and no ticket until it is answered.
 */
export type TaskStatus = 'queued' | 'paused' | 'running' | 'awaiting' | 'needs_input' | 'completed' | 'failed' | 'cancelled';

export const TASK_STATUSES: readonly TaskStatus[] = [
  'queued',
  'paused',
  'running',
  'awaiting',
  'needs_input',
  'completed',
  'failed',
  'cancelled',
];
/** The statuses a task never leaves: the one list every layer (store SQL, service, panel, commands) reads. */
export const TERMINAL_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];

export function isTerminalStatus(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

export const NON_TERMINAL_STATUSES: readonly TaskStatus[] = TASK_STATUSES.filter((s) => !isTerminalStatus(s));

/** How much the agent may do without asking (Claude Code's permission modes). */
export type PermissionMode = 'default' | 'acceptEdits' | 'plan' | 'bypassPermissions';
export const PERMISSION_MODES: readonly PermissionMode[] = ['default', 'acceptEdits', 'plan', 'bypassPermissions'];

/**
 * One row of `off_peak_tasks`: its 30 columns, camelCased.
 * The aggregate answers "what is this task and where is it now"; the ticket ledger keeps the rest.
 */
export interface OffPeakTask {
  // identity and form
  id: string;
  title: string;
  prompt: string;
  permissionMode: PermissionMode;
  model: string | null;
  thoughtLevel: string | null;
  // workspace (immutable after creation)
  workspaceKey: string;
  workspacePath: string;
  workspaceIdentity: string | null;
  // session binding
  conversationId: string | null;
  sessionId: string | null;
  // local execution
  status: TaskStatus;
  queuedAt: number;
  startedAt: number | null;
  endedAt: number | null;
  failureReason: string | null;
  filesChanged: number | null;
  // server snapshot (a projection for scheduling, never the queue truth)
  serverTicketId: string | null;
  registeredAt: number | null;
  schedulable: boolean;
  queuePosition: number | null;
  nextPollAt: number | null;
  // scheduler claim and diagnostics
  claimRunning: boolean;
  claimedAt: number | null;
  attemptCount: number;
  lastError: string | null;
  /** The ticket is taken at this epoch ms, no earlier (schema v16; docs/flows.md#schedules-and-chains); null: at creation. */
  notBefore?: number | null;
  /** "After <task>": taken only once this task completed (schema v17; docs/flows.md#schedules-and-chains). */
  afterTaskId?: string | null;
  /** The title of that task when this one was created (the card says "After <title>" even after it is deleted). */
  afterTitle?: string | null;
  /** Runs in that task's worktree and branch (a plan of steps reviewed as one branch). */
  continueInBranch?: boolean;
  // settle and History
  settledAt: number | null;
  historyDeletedAt: number | null;
  // audit
  createdAt: number;
  updatedAt: number;
}

/** Server ticket admission axis as last seen by this client (docs/flows.md#server-ticket-states). */
export type ServerTicketState = 'queued' | 'ready' | 'active' | 'expired' | 'settled' | 'not_found';
export const SERVER_TICKET_STATES: readonly ServerTicketState[] = ['queued', 'ready', 'active', 'expired', 'settled', 'not_found'];

/**
 * Settle outbox state of a ledger row:
 * - `none`: live ticket, nothing to settle yet;
 * - `pending`: settle must be (re)sent to the gateway;
 * - `settled`: the gateway acknowledged it;
 * - `abandoned`: given up explicitly (e.g. the gateway no longer knows the ticket).
 */
export type SettleState = 'none' | 'pending' | 'settled' | 'abandoned';
export const SETTLE_STATES: readonly SettleState[] = ['none', 'pending', 'settled', 'abandoned'];

/** Where a ledger row came from: a take by this code, or the v1->v2 backfill of `server_ticket_id`. */
export type TicketOrigin = 'take' | 'legacy';

/** Why a ticket's segment ended. */
export type SegmentEndReason =
  'completed' | 'failed' | 'cancelled' | 'expired' | 'interrupted' | 'retaken' | 'deleted' | 'orphan' | 'parked' | 'usage_limit';

/** Tokens as the model API counts them (one answer, a segment, or a whole task). */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** Input read from the prompt cache. */
  cacheReadTokens: number;
  /** Input written to the prompt cache. */
  cacheWriteTokens: number;
}

/** The share (0..1) of the account's 5-hour and weekly windows some answers used (docs/flows.md#capacity-and-cost). */
export interface WindowShare {
  fiveHour: number;
  sevenDay: number;
}

/** A subscription account's windows as one answer's headers reported them (docs/flows.md#capacity-and-cost). */
export interface AccountReading {
  /** When the answer came (this machine's clock). */
  at: number;
  /** Utilization 0..1 of the 5-hour and the weekly window. */
  utilization5h: number;
  utilization7d: number;
  /** When each window resets (epoch ms), null when not said. */
  reset5hAt: number | null;
  reset7dAt: number | null;
}

/** What one segment's model answers used, as its proxy read it (docs/flows.md#ticket-ledger). */
export interface SegmentUsage extends TokenUsage {
  /** The models that answered, in the order first seen, comma-separated ("" when none said). */
  model: string;
  /** Answers counted. */
  requests: number;
  /** Dollars, each answer at its model's price when it was counted; absent when no answer's price was known. */
  costUsd?: number;
  /** Its share of a subscription account's windows, from the gateway's header deltas; absent when none was reported. */
  windowShare?: WindowShare;
  /** The account's latest reading one of its answers carried (the panel's header bar); absent when none did. */
  account?: AccountReading;
}

/** One row of `off_peak_tickets`: the local ledger and settle outbox (docs/flows.md#ticket-ledger). */
export interface TicketRecord {
  ticketId: string;
  /** The task it was taken for. No foreign key: the row outlives a deleted task until settled. */
  taskId: string;
  /** 1, 2, 3... per task in take order; 0 for a `legacy` backfilled row. */
  ordinal: number;
  origin: TicketOrigin;
  serverState: ServerTicketState;
  queuePosition: number | null;
  takenAt: number;
  readyAt: number | null;
  readyDeadline: number | null;
  activeAt: number | null;
  expiresAt: number | null;
  lastStatusAt: number | null;
  nextPollAt: number | null;
  segmentStartedAt: number | null;
  segmentEndedAt: number | null;
  endReason: SegmentEndReason | null;
  lastError: string | null;
  /** While the segment runs: since when its proxy cannot reach the gateway (requests held), else null. */
  gatewayUnreachableSince: number | null;
  /** The account's usage limit held this segment's requests until this epoch ms (schema v12; docs/flows.md#usage-limits). */
  usageLimitResetAt?: number | null;
  /** The tokens of the segment's model answers; null before the first one (or before schema v5). */
  usage: SegmentUsage | null;
  settleState: SettleState;
  settleReason: string | null;
  settleAttempts: number;
  nextSettleAt: number | null;
  settledAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** The leader lease: only its holder runs sync, the scheduler and the settle flush. */
export interface LeaseRecord {
  name: string;
  holder: string;
  token: string;
  acquiredAt: number;
  renewedAt: number;
  expiresAt: number;
}

/** workspace_key = workspaceIdentity?.trim() || workspacePath. */
export function workspaceKeyOf(workspacePath: string, workspaceIdentity?: string | null): string {
  const identity = workspaceIdentity?.trim();
  return identity ? identity : workspacePath;
}

/** The question a task parks on, as the asking runtime holds it (docs/flows.md#questions-park-the-task). */
export interface ParkQuestion {
  askId: string;
  tool: string;
  summary: string;
  /** The tool call's whole input as shown (an answer must carry its sha256). */
  input: string;
  /** Names the tool call (tool + input): the resumed session's identical call is answered from the stored decision. */
  callDigest: string | null;
  askedAt: number;
}

/** A question open when its window closed, with the answer that reached that window while its agent stopped, if any. */
export interface HeldQuestion {
  question: ParkQuestion;
  answer?: { decision: 'allow' | 'deny'; by: 'host' | 'terminal' | 'other-window' | 'timeout' | 'stored' | 'ended' };
}

/** What a park did: parked (needs_input), requeued (answered while the agent stopped: it retakes), or nothing (the task ended meanwhile). */
export type ParkResult = 'parked' | 'requeued' | 'gone';
