/** v5: on the ledger, since when a segment cannot reach the gateway and the tokens its model answers used. */
import { columnsStep } from './migration-step';
import { TICKETS_TABLE } from './tables';

/** The columns added to the ledger (name, SQL type). */
const LEDGER_COLUMNS_V5: readonly (readonly [string, string])[] = [
  ['gateway_unreachable_since', 'INTEGER'],
  ['usage_model', 'TEXT'],
  ['usage_input_tokens', 'INTEGER'],
  ['usage_output_tokens', 'INTEGER'],
  ['usage_cache_read_tokens', 'INTEGER'],
  ['usage_cache_write_tokens', 'INTEGER'],
  ['usage_requests', 'INTEGER'],
];

export const v05 = columnsStep(
  5,
  'ledger: since when the segment cannot reach the gateway; the tokens its model answers used',
  TICKETS_TABLE,
  LEDGER_COLUMNS_V5,
);
