/** v16: on the task, `not_before` (the time it takes its ticket at, no earlier). */
import { columnsStep } from './migration-step';
import { TASKS_TABLE } from './tables';

export const v16 = columnsStep(
  16,
  'not before: the time a task takes its ticket at, no earlier (docs/flows.md#schedules-and-chains)',
  TASKS_TABLE,
  [['not_before', 'INTEGER']],
);
