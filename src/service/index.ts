/**
 * Public surface of the task service for the extension (UI) and the runtime (scheduler, segment
 * runner). One TaskService per window; construct it with the window's TaskStore, a GatewayClient
 * (base URL + API-key provider), a clock, timers and a `stopAgent(taskId)` callback, then `start()`.
 *
 * UI: create, pause, continue, edit, cancel, delete, deleteFromHistory, listTasks, getTask,
 *     ticketsOf, history(); `availability` (snapshot + `onDidChange`) for greying out "create".
 * Runtime:
 *   - `onDidWake(taskId)`: a queued task became schedulable (ready/active ticket);
 *   - `leadership.isLeader` / `leadership.onDidChange`: only the holder of the 'leader' lease
 *     runs the scheduler (the service already runs sync and the settle flush only there);
 *   - `onSegmentStarted(taskId, ticketId)`, `onAdmitted(ticketId, at?)` (first admitted model
 *     request: the ledger's active_at), `onSegmentEnded(taskId, ticketId, reason, error?)`;
 *   - `onSegmentExpired(taskId, ticketId)`: 3102 -> requeue (same session), settle the old ticket
 *     through the outbox, retake with the same task id;
 *   - `completeTask` / `failTask` (terminal transition + settle in one mutation), or
 *     `markSettleForTerminal(taskId)` after writing the terminal state itself.
 */
export { TaskService, DEFAULT_SYNC_CONFIG, type TaskServiceOptions, type CreateTaskInput, type SyncConfig, type SyncReport, type ContinueOutcome, type ServiceEvents } from './task-service';
export { ServiceError, type ServiceErrorCode } from './errors';
export { AvailabilitySnapshot, type AvailabilityState, type AvailabilityOptions } from './availability';
export { Leadership, LEADER_LEASE, type LeadershipOptions } from './leadership';
