/**
 * v22: on a ledger row, what its answers cost in dollars (`usage_cost_usd`, each answer at its
 * model's price) and their share of a subscription account's 5-hour and weekly windows
 * (`usage_share_5h`, `usage_share_7d`, 0..1; docs/flows.md#capacity-and-cost). Additive: the
 * readable-by mark stays.
 */
import { columnsStep } from './migration-step';
import { TICKETS_TABLE } from './tables';

export const v22 = columnsStep(
  22,
  "spend: a segment's dollars and its share of the account's windows (docs/flows.md#capacity-and-cost)",
  TICKETS_TABLE,
  [
    ['usage_cost_usd', 'REAL'],
    ['usage_share_5h', 'REAL'],
    ['usage_share_7d', 'REAL'],
  ],
);
