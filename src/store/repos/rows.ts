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

// Written out field by field: these two run for every task and ticket a snapshot reads, and the
// generic cellReader (cells.ts) measured about 30x slower per row (14 µs against 0.4 µs).
import { bool, num, numOrNull, str, strOrNull } from './cells';

export function taskFromRow(r: SqlRow): OffPeakTask {
  return {
    id: str(r.off_peak_task_id),
    title: str(r.title),
    prompt: str(r.prompt),
    permissionMode: str(r.permission_mode) as PermissionMode,
    model: strOrNull(r.model),
    thoughtLevel: strOrNull(r.thought_level),
    workspaceKey: str(r.workspace_key),
    workspacePath: str(r.workspace_path),
    workspaceIdentity: strOrNull(r.workspace_identity),
    conversationId: strOrNull(r.conversation_id),
    sessionId: strOrNull(r.session_id),
    status: str(r.status) as TaskStatus,
    queuedAt: num(r.queued_at),
    startedAt: numOrNull(r.started_at),
    endedAt: numOrNull(r.ended_at),
    failureReason: strOrNull(r.failure_reason),
    filesChanged: numOrNull(r.files_changed),
    serverTicketId: strOrNull(r.server_ticket_id),
    registeredAt: numOrNull(r.registered_at),
    schedulable: bool(r.schedulable),
    queuePosition: numOrNull(r.queue_position),
    nextPollAt: numOrNull(r.next_poll_at),
    claimRunning: bool(r.claim_running),
    claimedAt: numOrNull(r.claimed_at),
    attemptCount: num(r.attempt_count),
    lastError: strOrNull(r.last_error),
    notBefore: numOrNull(r.not_before),
    afterTaskId: strOrNull(r.after_task_id),
    afterTitle: strOrNull(r.after_title),
    continueInBranch: bool(r.continue_in_branch),
    settledAt: numOrNull(r.settled_at),
    historyDeletedAt: numOrNull(r.history_deleted_at),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

export function ticketFromRow(r: SqlRow): TicketRecord {
  return {
    ticketId: str(r.ticket_id),
    taskId: str(r.task_id),
    ordinal: num(r.ordinal),
    origin: str(r.origin) as TicketOrigin,
    serverState: str(r.server_state) as ServerTicketState,
    queuePosition: numOrNull(r.queue_position),
    takenAt: num(r.taken_at),
    readyAt: numOrNull(r.ready_at),
    readyDeadline: numOrNull(r.ready_deadline),
    activeAt: numOrNull(r.active_at),
    expiresAt: numOrNull(r.expires_at),
    lastStatusAt: numOrNull(r.last_status_at),
    nextPollAt: numOrNull(r.next_poll_at),
    segmentStartedAt: numOrNull(r.segment_started_at),
    segmentEndedAt: numOrNull(r.segment_ended_at),
    endReason: strOrNull(r.end_reason) as SegmentEndReason | null,
    lastError: strOrNull(r.last_error),
    gatewayUnreachableSince: numOrNull(r.gateway_unreachable_since),
    usageLimitResetAt: numOrNull(r.usage_limit_reset_at),
    usage: usageFromRow(r),
    settleState: str(r.settle_state) as SettleState,
    settleReason: strOrNull(r.settle_reason),
    settleAttempts: num(r.settle_attempts),
    nextSettleAt: numOrNull(r.next_settle_at),
    settledAt: numOrNull(r.settled_at),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

/** The segment's token usage (v5 columns); null until its first answer was counted. */
function usageFromRow(r: SqlRow): SegmentUsage | null {
  if (r.usage_requests === null || r.usage_requests === undefined) return null;
  const usage: SegmentUsage = {
    model: str(r.usage_model),
    inputTokens: num(r.usage_input_tokens),
    outputTokens: num(r.usage_output_tokens),
    cacheReadTokens: num(r.usage_cache_read_tokens),
    cacheWriteTokens: num(r.usage_cache_write_tokens),
    requests: num(r.usage_requests),
  };
  // v22: absent until an answer was priced or reported a window share (docs/flows.md#capacity-and-cost).
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
