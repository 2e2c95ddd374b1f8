/**
 * v24: on a task's pull request, `wait_until`: the forge's rate limit lets the next look happen
 * only then (docs/flows.md#pull-requests); null when nothing holds the look back. Additive: the
 * readable-by mark stays.
 */
import { columnsStep } from './migration-step';
import { PULL_REQUESTS_TABLE } from './tables';

export const v24 = columnsStep(
  24,
  "pull request wait: the forge's rate limit holds the next look until then (docs/flows.md#pull-requests)",
  PULL_REQUESTS_TABLE,
  [['wait_until', 'INTEGER']],
);
