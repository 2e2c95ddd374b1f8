/** v7: the decision record, `off_peak_task_questions`, and its `questions` change topic. */
import { followTaskDeleteSql, tablesStep } from './migration-step';
import { QUESTIONS_TABLE } from './tables';

/**
 * Every permission question a task's agent asked, with its answer, who or what gave it and
 * when (the decision record, docs/flows.md#questions-park-the-task). `parked_at`: the task parked on
 * it; `input` is the tool call's whole input as shown, and `call_digest` names the call (tool and
 * input) so the resumed session's identical call is answered
 * from the stored decision (`used_at`, once); `stated_at`: the continuation prompt told the agent.
 */
export const SCHEMA_V7_SQL = `
CREATE TABLE IF NOT EXISTS ${QUESTIONS_TABLE} (
  ask_id       TEXT PRIMARY KEY,
  task_id      TEXT NOT NULL,
  tool         TEXT NOT NULL,
  summary      TEXT NOT NULL,
  input        TEXT NOT NULL DEFAULT '',
  call_digest  TEXT,
  asked_at     INTEGER NOT NULL,
  parked_at    INTEGER,
  decision     TEXT,
  answered_by  TEXT,
  answered_at  INTEGER,
  used_at      INTEGER,
  stated_at    INTEGER
);
CREATE INDEX IF NOT EXISTS idx_${QUESTIONS_TABLE}_task ON ${QUESTIONS_TABLE}(task_id, asked_at);
${followTaskDeleteSql(QUESTIONS_TABLE)}
`;

export const v07 = tablesStep(
  7,
  'the decision record: every permission question of a task with its answer, who answered and when; a parked question waits here',
  SCHEMA_V7_SQL,
);
