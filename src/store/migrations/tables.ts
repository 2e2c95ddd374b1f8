/**
 * The task DB's table names: the migrations that create a table and the repository that reads and
 * writes it share the one constant here (a file with no imports, so neither side imports the other).
 */
export const TASKS_TABLE = 'off_peak_tasks';
export const TICKETS_TABLE = 'off_peak_tickets';
/** v2 only: v3 drops it (the lease is a file beside the DB now). */
export const LEASES_TABLE = 'off_peak_leases';
export const WINDOWS_TABLE = 'off_peak_windows';
export const HANDOFF_TABLE = 'off_peak_dispatch_requests';
export const DISPATCH_TABLE = 'off_peak_dispatch_backoff';
export const RUNTIME_TABLE = 'off_peak_task_runtime';
export const CHANGES_TABLE = 'off_peak_change_counters';
export const OUTCOMES_TABLE = 'off_peak_task_outcomes';
export const ASKS_TABLE = 'off_peak_pending_asks';
export const QUESTIONS_TABLE = 'off_peak_task_questions';
export const FOLLOW_UPS_TABLE = 'off_peak_follow_ups';
export const ISOLATION_TABLE = 'off_peak_task_isolation';
export const NOTIFY_OUTBOX_TABLE = 'off_peak_notify_outbox';
export const CHECKS_TABLE = 'off_peak_task_checks';
export const CHECK_COMMANDS_TABLE = 'off_peak_check_commands';
export const SCHEDULES_TABLE = 'off_peak_schedules';
export const SCHEDULE_RUNS_TABLE = 'off_peak_schedule_runs';
export const PULL_REQUESTS_TABLE = 'off_peak_pull_requests';
