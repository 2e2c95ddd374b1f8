/** v14: the "readable by" mark (`off_peak_schema_mark`, written by src/store/db/schema-mark.ts). */
import { writeSchemaMark } from '../db/schema-mark';
import type { MigrationStep } from './migration-step';

export const v14: MigrationStep = {
  version: 14,
  description: 'the "readable by" mark: the oldest schema version whose builds still use this file (src/store/db/schema-mark.ts)',
  up: writeSchemaMark,
};
