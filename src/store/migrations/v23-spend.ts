/**
 * v23: on a ledger row, what its answers cost in dollars (`usage_cost_usd`, each answer at its
 * model's price) and their share of a subscription account's 5-hour and weekly windows
 * (`usage_share_5h`, `usage_share_7d`, 0..1), and the account's newest reading one of its answers
 * carried (`account_*`: when, each window's utilization and reset; the panel's header bar;
 * docs/flows.md#capacity-and-cost). Additive: the readable-by mark stays.
 */
import { columnsStep } from './migration-step';
import { TICKETS_TABLE } from './tables';

export const v23 = columnsStep(
  23,
  "spend: a segment's dollars and its share of the account's windows (docs/flows.md#capacity-and-cost)",
  TICKETS_TABLE,
  [
    ['usage_cost_usd', 'REAL'],
    ['usage_share_5h', 'REAL'],
    ['usage_share_7d', 'REAL'],
    ['account_read_at', 'INTEGER'],
    ['account_u5h', 'REAL'],
    ['account_u7d', 'REAL'],
    ['account_reset_5h', 'INTEGER'],
    ['account_reset_7d', 'INTEGER'],
  ],
);
