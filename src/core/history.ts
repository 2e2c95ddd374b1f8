/**
 * History is derived from the task row, never stored (docs/flows.md#cancel-delete-history): 0 or 1 row per task, however
 * many tickets and segments the task took.
 */
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
}

/**
 * The History row of a task, or undefined when it has none: never started, hidden by the user,
 * or in a state without a History meaning (a started task back in queued/paused between segments
 * still shows as in progress).
 */
export function deriveHistoryRow(task: OffPeakTask, now: number): HistoryRow | undefined {
  if (task.startedAt === null || task.historyDeletedAt !== null) return undefined;
  let status: HistoryStatus;
  let end: number;
  switch (task.status) {
    case 'completed':
      status = 'succeeded';
      end = task.endedAt ?? now;
      break;
    case 'failed':
      status = 'failure';
      end = task.endedAt ?? now;
      break;
    case 'cancelled':
      status = 'skipped';
      end = task.endedAt ?? now;
      break;
    default:
      // running, awaiting, or queued/paused between segments of a started task
      status = 'in_progress';
      end = now;
  }
  return {
    taskId: task.id,
    title: task.title || task.prompt,
    prompt: task.prompt,
    triggeredAt: task.startedAt,
    status,
    durationMs: Math.max(0, end - task.startedAt),
    sessionId: task.sessionId,
    failureReason: task.failureReason,
  };
}
