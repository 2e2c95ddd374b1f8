/** Public surface of the task store. */
export { TaskStore, DB_FILE_NAME, changeConcerns, type TaskStoreOptions, type StoreTx, type StoreReadTx, type StoreChange, type StoreStats } from './task-store';
export { TaskRepo, ZOMBIE_CLAIM_MS, type NewTaskInput, type TaskEdit, type TaskFilter, type TicketSnapshot, type TerminalDetails } from './task-repo';
export { TicketRepo, type NewTicketInput, type TicketStatePatch, type TicketFilter } from './ticket-repo';
export { leaseFileFor, type LeaseHolding, type LeaseResult } from './lease-file';
export { WindowRepo, type WindowRecord } from './window-repo';
export { DispatchRepo, type DispatchBackoffRecord } from './dispatch-repo';
export { RuntimeRepo, type TaskRuntimeRecord } from './runtime-repo';
export { OutcomeRepo, type UnnotifiedOutcome } from './outcome-repo';
export { AskRepo, type SharedAsk } from './ask-repo';
export { QuestionRepo, type QuestionRecord, type QuestionDecision, type QuestionAnsweredBy, type DenialCount } from './question-repo';
export { FollowUpRepo, type FollowUpLink } from './follow-up-repo';
export { IsolationRepo, type TaskIsolation, type IsolationMode, type ChangedFile, type BroughtHome } from './isolation-repo';
export { isIoError, type StoreFs } from './db-file';
export { StoreError, type StoreErrorCode, type StoreNotice } from './errors';
export { LATEST_SCHEMA_VERSION, TASK_COLUMNS, STORE_TOPICS, type MigrationReport, type StoreTopic } from './schema';
export { loadSqlJs, defaultWasmPath } from './sqljs';
export { SqlDb } from './sql';
