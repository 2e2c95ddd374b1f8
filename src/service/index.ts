/** Public surface of the task service for the extension and the runtime (scheduler, segment runner). */
export { TaskService, DEFAULT_SYNC_CONFIG, type TaskServiceOptions, type CreateTaskInput, type SyncConfig, type SyncReport, type ContinueOutcome, type ServiceEvents } from './task-service';
export { ServiceError, type ServiceErrorCode } from './errors';
export { AvailabilitySnapshot, type AvailabilityState, type AvailabilityOptions } from './availability';
export { Leadership, LEADER_LEASE, type LeadershipOptions } from './leadership';
export { createSystemTimers, ManualTimers, type Timers, type TimerHandle } from './timers';
