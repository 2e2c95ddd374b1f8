/**
 * History is derived from the task row, never stored (docs/flows.md#cancel-delete-history): 0 or 1 row per task, however
 * many tickets and segments the task took.
 */
import { outcomeOf, type HistoryFilterKey, type Outcome, type OutcomeFacts } from './outcome';
import type { OffPeakTask } from './types';

export type HistoryStatus = 'in_progress' | 'succeeded' | 'failure' | 'skipped';

export interface HistoryRow {
  taskId: string;
  title: string;
  prompt: string;
  triggeredAt: number;
  status: HistoryStatus;
  durationMs: number;
  sessionId: string | null;
  failureReason: string | null;
  /** What it came to, in the words every surface uses (src/core/outcome.ts). */
  outcome: Outcome;
}

/**
 * When a task's History row says it was triggered: its first segment's start, or for a task that
 * ended before its first segment (failed: its folder gone, no ticket to be had; or cancelled) when
 * it ended. Null: no History row (never started and still queued or paused). The store's
 * `HISTORY_TRIGGERED_AT_SQL` says the same.
 */
export function historyTriggeredAt(task: Pick<OffPeakTask, 'startedAt' | 'status' | 'endedAt' | 'queuedAt'>): number | null {
  if (task.startedAt !== null) return task.startedAt;
  return task.status === 'failed' || task.status === 'cancelled' ? (task.endedAt ?? task.queuedAt) : null;
}

/** The reason a row of a task cancelled before its first segment gives (it has no failure reason). */
export const CANCELLED_BEFORE_START = 'Cancelled before it started.';

/**
 * The History row of a task, or undefined when it has none: never started (unless it failed or
 * was cancelled before it could), hidden by the user, or in a state without a History meaning (a started task
 * back in queued/paused between segments still shows as in progress).
 */
export function deriveHistoryRow(
  task: OffPeakTask,
  now: number,
  facts: Pick<OutcomeFacts, 'check' | 'broughtHome' | 'mergedIn'> = {},
): HistoryRow | undefined {
  const triggeredAt = historyTriggeredAt(task);
  if (triggeredAt === null || task.historyDeletedAt !== null) return undefined;
  const outcome = outcomeOf({ status: task.status, failureReason: task.failureReason, ...facts });
  const finished = task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled';
  return {
    taskId: task.id,
    title: task.title || task.prompt,
    prompt: task.prompt,
    triggeredAt,
    status: historyStatusOf(outcome),
    // running, awaiting, or queued/paused between segments of a started task: it counts on
    durationMs: Math.max(0, (finished ? (task.endedAt ?? now) : now) - triggeredAt),
    sessionId: task.sessionId,
    failureReason: task.failureReason ?? (task.status === 'cancelled' && task.startedAt === null ? CANCELLED_BEFORE_START : null),
    outcome,
  };
}

/** The row's coarse status (whether it still counts on, whether it succeeded), from its outcome's group. */
function historyStatusOf(outcome: Outcome): HistoryStatus {
  if (outcome.filters.includes('in_progress')) return 'in_progress';
  if (outcome.filters.includes('failure')) return 'failure';
  if (outcome.kind === 'cancelled' || outcome.kind === 'skipped') return 'skipped';
  return 'succeeded';
}

/** What the History filter box asks for (docs/flows.md#archive): every part given must match. */
export interface HistoryFilter {
  /** Case-insensitive text in the title or the prompt. */
  text?: string;
  /** An outcome, or a group of them (src/core/outcome.ts: HISTORY_FILTERS). */
  status?: HistoryFilterKey;
  /** Triggered at or after / at or before (epoch ms). */
  from?: number;
  to?: number;
}

export function matchesHistoryFilter(row: HistoryRow, filter: HistoryFilter | undefined): boolean {
  if (!filter) return true;
  if (filter.status !== undefined && !row.outcome.filters.includes(filter.status)) return false;
  if (filter.from !== undefined && row.triggeredAt < filter.from) return false;
  if (filter.to !== undefined && row.triggeredAt > filter.to) return false;
  const text = filter.text?.trim().toLowerCase();
  if (text) return row.title.toLowerCase().includes(text) || row.prompt.toLowerCase().includes(text);
  return true;
}
