/**
 * The task and ticket rows as the core's records (the cell readers are in cells.ts).
 */
import type {
  OffPeakTask,
  PermissionMode,
  SegmentEndReason,
  SegmentUsage,
  ServerTicketState,
  SettleState,
  TaskStatus,
  TicketOrigin,
  TicketRecord,
} from '../../core/types';
import type { SqlRow } from '../db/sql';

import { cellReader, num, str, strOrNull } from './cells';

const taskCells = cellReader({
  str: ['title', 'prompt', 'workspaceKey', 'workspacePath'],
  strOrNull: [
    'model',
    'thoughtLevel',
    'workspaceIdentity',
    'conversationId',
    'sessionId',
    'failureReason',
    'serverTicketId',
    'lastError',
    'afterTaskId',
    'afterTitle',
  ],
  num: ['queuedAt', 'attemptCount', 'createdAt', 'updatedAt'],
  numOrNull: [
    'startedAt',
    'endedAt',
    'filesChanged',
    'registeredAt',
    'queuePosition',
    'nextPollAt',
    'claimedAt',
    'notBefore',
    'settledAt',
    'historyDeletedAt',
  ],
  bool: ['schedulable', 'claimRunning', 'continueInBranch'],
});

export function taskFromRow(r: SqlRow): OffPeakTask {
  return {
    ...taskCells(r),
    id: str(r.off_peak_task_id),
    permissionMode: str(r.permission_mode) as PermissionMode,
    status: str(r.status) as TaskStatus,
  };
}

const ticketCells = cellReader({
  str: ['ticketId', 'taskId'],
  strOrNull: ['lastError', 'settleReason'],
  num: ['ordinal', 'takenAt', 'settleAttempts', 'createdAt', 'updatedAt'],
  numOrNull: [
    'queuePosition',
    'readyAt',
    'readyDeadline',
    'activeAt',
    'expiresAt',
    'lastStatusAt',
    'nextPollAt',
    'segmentStartedAt',
    'segmentEndedAt',
    'gatewayUnreachableSince',
    'usageLimitResetAt',
    'nextSettleAt',
    'settledAt',
  ],
});

export function ticketFromRow(r: SqlRow): TicketRecord {
  return {
    ...ticketCells(r),
    origin: str(r.origin) as TicketOrigin,
    serverState: str(r.server_state) as ServerTicketState,
    endReason: strOrNull(r.end_reason) as SegmentEndReason | null,
    usage: usageFromRow(r),
    settleState: str(r.settle_state) as SettleState,
  };
}

/** The segment's token usage (v5 columns); null until its first answer was counted. */
function usageFromRow(r: SqlRow): SegmentUsage | null {
  if (r.usage_requests === null || r.usage_requests === undefined) return null;
  return {
    model: str(r.usage_model),
    inputTokens: num(r.usage_input_tokens),
    outputTokens: num(r.usage_output_tokens),
    cacheReadTokens: num(r.usage_cache_read_tokens),
    cacheWriteTokens: num(r.usage_cache_write_tokens),
    requests: num(r.usage_requests),
  };
}
