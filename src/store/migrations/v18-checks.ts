/**
 * v18: the checks (src/store/repos/check-repo.ts, docs/flows.md#checks): a task's check command, its
 * state, round, last exit code and output tail, removed with the task; and the last command used
 * per folder (the form's prefill).
 */
import { followTaskDeleteSql, tablesStep } from './migration-step';
import { CHECK_COMMANDS_TABLE, CHECKS_TABLE } from './tables';

export const SCHEMA_V18_SQL = `
CREATE TABLE IF NOT EXISTS ${CHECKS_TABLE} (
  task_id    TEXT PRIMARY KEY,
  command    TEXT NOT NULL,
  state      TEXT NOT NULL DEFAULT 'pending',
  round      INTEGER NOT NULL DEFAULT 0,
  exit_code  INTEGER,
  output     TEXT,
  updated_at INTEGER NOT NULL
);
${followTaskDeleteSql(CHECKS_TABLE, `${CHECKS_TABLE}_task_delete`)}
CREATE TABLE IF NOT EXISTS ${CHECK_COMMANDS_TABLE} (
  workspace_key TEXT PRIMARY KEY,
  command       TEXT NOT NULL,
  used_at       INTEGER NOT NULL
);
`;

export const v18 = tablesStep(
  18,
  'checks: the command the user typed for a task, its rounds and last output; the last command used per folder',
  SCHEMA_V18_SQL,
);
