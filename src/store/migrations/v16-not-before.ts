/** v16: on the task, `not_before` (the time it takes its ticket at, no earlier). */
import { addMissingColumns, type MigrationStep } from './migration-step';
import { TASKS_TABLE } from './tables';

export const v16: MigrationStep = {
  version: 16,
  description: 'not before: the time a task takes its ticket at, no earlier (docs/flows.md#schedules-and-chains)',
  up: (db) => addMissingColumns(db, TASKS_TABLE, [['not_before', 'INTEGER']]),
};
