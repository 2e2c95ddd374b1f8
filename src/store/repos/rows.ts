/**
 * The task and ticket rows as the core's records (the cell readers are in cells.ts).
 */
import type { OffPeakTask, SegmentUsage, TicketRecord } from '../../core/types';
import type { SqlRow } from '../db/sql';
import { cellReader, num, numOrNull } from './cells';

// One object literal each (cells.ts): these run for every task and ticket a snapshot reads.
const taskCells = cellReader(
  {
    str: ['id', 'title', 'prompt', 'permissionMode', 'workspaceKey', 'workspacePath', 'status'],
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
  },
  { renamed: { id: 'off_peak_task_id' } },
);

/** Its permission mode and status are read as text; the store writes only the core's values there. */
export const taskFromRow = (r: SqlRow): OffPeakTask => taskCells(r) as OffPeakTask;

const ticketCells = cellReader({
  str: ['ticketId', 'taskId', 'origin', 'serverState', 'settleState'],
  strOrNull: ['endReason', 'lastError', 'settleReason'],
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

/** Its origin, states and end reason are read as text; the store writes only the core's values there. */
export function ticketFromRow(r: SqlRow): TicketRecord {
  const ticket = ticketCells(r) as Omit<TicketRecord, 'usage'> as TicketRecord;
  ticket.usage = usageFromRow(r);
  return ticket;
}

const usageCells = cellReader(
  {
    str: ['model'],
    num: ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'requests'],
  },
  { prefix: 'usage_' },
);

/** The segment's token usage (v5 columns, each `usage_`-prefixed); null until its first answer was counted. */
function usageFromRow(r: SqlRow): SegmentUsage | null {
  if (r.usage_requests === null || r.usage_requests === undefined) return null;
  const usage: SegmentUsage = usageCells(r);
  // v23: absent until an answer was priced or reported a window share (docs/flows.md#capacity-and-cost).
  const cost = numOrNull(r.usage_cost_usd);
  if (cost !== null) usage.costUsd = cost;
  const [fiveHour, sevenDay] = [numOrNull(r.usage_share_5h), numOrNull(r.usage_share_7d)];
  if (fiveHour !== null || sevenDay !== null) usage.windowShare = { fiveHour: fiveHour ?? 0, sevenDay: sevenDay ?? 0 };
  const readAt = numOrNull(r.account_read_at);
  if (readAt !== null)
    usage.account = {
      at: readAt,
      utilization5h: num(r.account_u5h),
      utilization7d: num(r.account_u7d),
      reset5hAt: numOrNull(r.account_reset_5h),
      reset7dAt: numOrNull(r.account_reset_7d),
    };
  return usage;
}
