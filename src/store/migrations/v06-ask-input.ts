/** v6: on the pending asks, the tool call's whole input and the digest of the input an answer names. */
import { columnsStep } from './migration-step';
import { ASKS_TABLE } from './tables';

/**
 * A question shows its whole input in every window, and an answer left for the asking window
 * names the input it was given for (docs/flows.md#what-a-question-shows). A row written before
 * has no input: an answer to it names the empty text and the asking window refuses it.
 */
export const SCHEMA_V6_COLUMNS: readonly [name: string, definition: string][] = [
  ['input', "TEXT NOT NULL DEFAULT ''"],
  ['answer_digest', 'TEXT'],
];

export const v06 = columnsStep(
  6,
  "pending asks carry the tool call's whole input and the digest of the input an answer was given for",
  ASKS_TABLE,
  SCHEMA_V6_COLUMNS,
);
