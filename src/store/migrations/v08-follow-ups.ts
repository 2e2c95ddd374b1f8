/** v8: the follow-up links (a follow-up task, the finished task it continues, the session it resumes and its agent). */
import { changeTriggersSql } from './change-counters';
import type { MigrationStep } from './migration-step';
import { FOLLOW_UPS_TABLE, TASKS_TABLE } from './tables';

export const SCHEMA_V8_SQL = `
CREATE TABLE IF NOT EXISTS ${FOLLOW_UPS_TABLE} (
  task_id      TEXT PRIMARY KEY,
  follow_up_of TEXT NOT NULL,
  of_title     TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  agent        TEXT NOT NULL,
  created_at   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS ${FOLLOW_UPS_TABLE}_session ON ${FOLLOW_UPS_TABLE} (session_id);
CREATE TRIGGER IF NOT EXISTS ${FOLLOW_UPS_TABLE}_follow_task_delete AFTER DELETE ON ${TASKS_TABLE}
  BEGIN DELETE FROM ${FOLLOW_UPS_TABLE} WHERE task_id = OLD.off_peak_task_id; END;
`;

export const v08: MigrationStep = {
  version: 8,
  description: 'follow-up tasks: the finished task each continues and the session it resumes',
  up: (db) => void [db.exec(SCHEMA_V8_SQL), db.exec(changeTriggersSql(db))],
};
