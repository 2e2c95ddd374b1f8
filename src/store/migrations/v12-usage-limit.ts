/**
 * v12: on the ledger, until when the account's usage limit holds the segment (`usage_limit_reset_at`).
 *
 * There are no versions 10 and 11. v12 followed v9 directly: the usage-limit holds (commit 5ae7a49,
 * "Extension: usage-limit holds") moved LATEST_SCHEMA_VERSION from 9 to 12 on a branch that left
 * main at v9 together with the personal-mode and history-archive branches. Neither of those changed
 * this schema, no commit on any branch ever used version 10 or 11, and the history does not say
 * why they were skipped. No file was ever written at 10 or 11, so nothing is lost: `migrate` runs
 * every step above a file's version, and a v9 file goes straight to v12.
 */
import { columnsStep } from './migration-step';
import { TICKETS_TABLE } from './tables';

export const v12 = columnsStep(
  12,
  "ledger: until when the account's usage limit holds the segment (docs/flows.md#usage-limits)",
  TICKETS_TABLE,
  [['usage_limit_reset_at', 'INTEGER']],
);
