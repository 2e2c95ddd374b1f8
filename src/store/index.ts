/** Public surface of the task store. */
export { TaskStore, DB_FILE_NAME, type TaskStoreOptions, type StoreTx, type StoreReadTx, type StoreChange, type Disposable, type StoreStats } from './task-store';
export { TaskRepo, type NewTaskInput, type TaskEdit, type TaskFilter, type TicketSnapshot, type TerminalDetails } from './task-repo';
export { TicketRepo, type NewTicketInput, type TicketStatePatch, type TicketFilter } from './ticket-repo';
export { LeaseRepo, type LeaseResult } from './lease-repo';
export { StoreError, type StoreErrorCode, type StoreNotice } from './errors';
export { LATEST_SCHEMA_VERSION, TASK_COLUMNS, type MigrationReport } from './schema';
export { loadSqlJs, defaultWasmPath } from './sqljs';
export { SqlDb } from './sql';
export { LeaderElection, type LeaderElectionOptions } from './leader';
