/**
 * Public surface of the task service for the extension (UI) and the runtime (scheduler, segment
 * runner). One TaskService per window; construct it with the window's TaskStore, a GatewayClient
 * (base URL + API-key provider), a clock, timers, the window's TaskLifecycle (shared with the
 * runtime) and a `stopAgent(taskId)` callback, then `start()`.
 *
 * UI: create, pause, continue, edit, cancel, delete, deleteFromHistory, listTasks, getTask,
 *     ticketsOf, history(); `availability` (snapshot + `onDidChange`) for greying out "create".
 * Runtime:
 *   - `onDidWake(taskId)`: a queued task became schedulable (ready/active ticket);
 *   - `leadership.isLeader` / `leadership.onDidChange`: only the holder of the 'leader' lease
 *     runs the scheduler (the service already runs sync and the settle flush only there);
 *   - `TaskLifecycle`: the one writer of lifecycle changes (started, admitted, segment ended or
 *     expired, completed, failed, cancelled, deleted), used by the runtime and the user actions
 *     alike; the service runs the follow-up work it announces (settles, retakes).
 */
export {
  TaskService,
  DEFAULT_SYNC_CONFIG,
  type TaskServiceOptions,
  type CreateTaskInput,
  type SyncConfig,
  type SyncReport,
  type ContinueOutcome,
  type DeleteOptions,
  type ServiceEvents,
  type TaskDeletion,
} from './task-service';
export { ServiceError, type ServiceErrorCode } from './errors';
export type { FollowUpInput } from './follow-ups';
export { AvailabilitySnapshot, type AvailabilityState, type AvailabilityOptions } from './availability';
export { TaskLifecycle, type LifecycleWork, type LifecycleWorkListener } from './task-lifecycle';
export { Leadership, LEADER_LEASE, type LeadershipOptions } from './leadership';
export { PullRequests, DEFAULT_PULL_REQUEST_SETTINGS, type PullRequestSettings, type PullRequestsOptions } from './pull-requests';
export type { ForgeTokenProvider, ForgeApiFactory } from './forge/forge-api';
export { BringHome, type BringHomePlan, type BringHomeOptions, type WorktreeFit } from './bring-home';
export { TaskQuestions, type AskRelay, type TaskQuestionsOptions } from './questions';
export { TaskSessions, SESSION_OPEN_HERE, refuseFollowUpWhileOpen, type SessionStarter, type TaskSessionsOptions } from './sessions';
