/**
 * v21: on a task's check, `agent_changed` (a JSON list of the files the check runs that the agent
 * changed since the task's base commit, flagged before it ran; docs/flows.md#checks). Additive:
 * the readable-by mark stays.
 */
import { columnsStep } from './migration-step';
import { CHECKS_TABLE } from './tables';

export const v21 = columnsStep(
  21,
  "check flag: the check's files the agent changed, flagged before it ran (docs/flows.md#checks)",
  CHECKS_TABLE,
  [['agent_changed', 'TEXT']],
);
