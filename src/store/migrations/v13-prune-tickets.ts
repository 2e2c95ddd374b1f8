/**
 * v13, no new column: removes the settled and abandoned tickets of tasks deleted before. Before v13
 * a deleted task's tickets stayed for good; now they go once settled (docs/flows.md#ticket-ledger).
 */
import type { MigrationStep } from './migration-step';
import { TASKS_TABLE, TICKETS_TABLE } from './tables';

export const v13: MigrationStep = {
  version: 13,
  description: 'ledger: the settled tickets of tasks deleted before',
  up: (db) =>
    void db.run(
      `DELETE FROM ${TICKETS_TABLE} WHERE settle_state IN ('settled', 'abandoned') AND task_id NOT IN (SELECT off_peak_task_id FROM ${TASKS_TABLE})`,
    ),
};
