// The tables of checks (v18; src/store/repos/check-repo.ts, docs/flows.md#checks), apart from schema.ts so the repo and the migration share them.
export const CHECKS_TABLE = 'off_peak_task_checks';
export const CHECK_COMMANDS_TABLE = 'off_peak_check_commands';
/** `tasksTable`: schema.ts's TASKS_TABLE (the trigger removes a task's check with it). */
export const schemaV18Sql = (tasksTable: string): string => `
CREATE TABLE IF NOT EXISTS ${CHECKS_TABLE} (
  task_id    TEXT PRIMARY KEY,
  command    TEXT NOT NULL,
  state      TEXT NOT NULL DEFAULT 'pending',
  round      INTEGER NOT NULL DEFAULT 0,
  exit_code  INTEGER,
  output     TEXT,
  updated_at INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS ${CHECKS_TABLE}_task_delete AFTER DELETE ON ${tasksTable}
  BEGIN DELETE FROM ${CHECKS_TABLE} WHERE task_id = OLD.off_peak_task_id; END;
CREATE TABLE IF NOT EXISTS ${CHECK_COMMANDS_TABLE} (
  workspace_key TEXT PRIMARY KEY,
  command       TEXT NOT NULL,
  used_at       INTEGER NOT NULL
);
`;
