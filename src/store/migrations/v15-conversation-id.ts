/** v15, no new column: fills `conversation_id` (written by `markRunning` since) for tasks that started before. */
import type { MigrationStep } from './migration-step';
import { TASKS_TABLE } from './tables';

export const v15: MigrationStep = {
  version: 15,
  description: 'conversation_id: the session id the Session entry opens, for tasks that started before it was written',
  up: (db) =>
    void db.run(`UPDATE ${TASKS_TABLE} SET conversation_id = session_id WHERE conversation_id IS NULL AND session_id IS NOT NULL`),
};
