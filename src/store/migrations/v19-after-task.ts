/** v19: on the task, `after_task_id`, `after_title` and `continue_in_branch` (the task it waits for, its title then, whether it runs in that task's branch). */
import { columnsStep } from './migration-step';
import { TASKS_TABLE } from './tables';

export const v19 = columnsStep(
  19,
  'after <task>: the task a task waits for, its title then, and whether it continues in its branch (docs/flows.md#schedules-and-chains)',
  TASKS_TABLE,
  [
    ['after_task_id', 'TEXT'],
    ['after_title', 'TEXT'],
    ['continue_in_branch', 'INTEGER'],
  ],
);
