/** Public surface of the task store. */
export {
  TaskStore,
  DB_FILE_NAME,
  changeConcerns,
  type TaskStoreOptions,
  type StoreTx,
  type StoreReadTx,
  type StoreChange,
  type StoreStats,
} from './task-store';
export { TaskRepo } from './repos/task-repo';
export { ZOMBIE_CLAIM_MS } from './repos/task-reads';
export { type NewTaskInput, type TaskEdit, type TaskFilter, type TicketSnapshot, type TerminalDetails } from './repos/task-input';
export { TicketRepo, type NewTicketInput, type TicketStatePatch, type TicketFilter } from './repos/ticket-repo';
export { leaseFileFor, type LeaseHolding, type LeaseResult } from './db/lease-file';
export { WindowRepo, type WindowRecord } from './repos/window-repo';
export { DispatchRepo, type DispatchBackoffRecord } from './repos/dispatch-repo';
export { RuntimeRepo, type TaskRuntimeRecord } from './repos/runtime-repo';
export { OutcomeRepo, type UnnotifiedOutcome } from './repos/outcome-repo';
export { NotifyRepo, type NotifyRow, type NotifyState } from './repos/notify-repo';
export { AskRepo, type SharedAsk } from './questions/ask-repo';
export {
  QuestionRepo,
  type QuestionRecord,
  type QuestionDecision,
  type QuestionAnsweredBy,
  type DenialCount,
  type AllowedNotRun,
} from './questions/question-repo';
export { FollowUpRepo, type FollowUpLink } from './repos/follow-up-repo';
export {
  PullRequestRepo,
  type TaskPullRequest,
  type PullRequestState,
  type PullRequestChecks,
  type PullRequestReview,
  type PullRequestLook,
  type ForgeKind,
} from './repos/pull-request-repo';
export { IsolationRepo, type TaskIsolation, type IsolationMode, type ChangedFile, type BroughtHome } from './repos/isolation-repo';
export {
  ScheduleRepo,
  type ScheduleDraftRecord,
  type ScheduleRecord,
  type ScheduleRunRecord,
  type ScheduleRunOutcome,
} from './repos/schedule-repo';
export { CheckRepo, type TaskCheck, type CheckState, type CheckProgress } from './repos/check-repo';
export { isIoError, type StoreFs } from './db/db-file';
export { StoreError, type StoreErrorCode, type StoreNotice } from './errors';
export { LATEST_SCHEMA_VERSION, type MigrationReport } from './migrations/migrate';
export { TASK_COLUMNS } from './migrations/v01-tasks';
export { STORE_TOPICS, type StoreTopic } from './migrations/change-counters';
export { loadSqlJs, defaultWasmPath } from './db/sqljs';
export { SqlDb } from './db/sql';
export { ArchiveFile, ARCHIVE_FILE_NAME, ARCHIVE_SCHEMA_VERSION, type ArchiveFileOptions } from './archive/archive-file';
export { ArchiveRepo, type KeepRule } from './archive/archive-repo';
export { type PerTaskTable, type TaskRows } from './archive/archive-rows';
