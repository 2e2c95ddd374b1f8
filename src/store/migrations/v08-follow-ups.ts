/** v8: the follow-up links (a follow-up task, the finished task it continues, the session it resumes and its agent). */
import { followTaskDeleteSql, tablesStep } from './migration-step';
import { FOLLOW_UPS_TABLE } from './tables';

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
${followTaskDeleteSql(FOLLOW_UPS_TABLE)}
`;

export const v08 = tablesStep(8, 'follow-up tasks: the finished task each continues and the session it resumes', SCHEMA_V8_SQL);
