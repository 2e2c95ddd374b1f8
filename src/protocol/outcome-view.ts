// What a task came to, as the panel carries it (src/core/outcome.ts words it; docs/flows.md#outcomes):
// the card and the History row show its label, and the History filter finds it by its keys.
import * as z from './zod';
import { HISTORY_FILTER_KEYS } from '../core/outcome';

export const HistoryFilterKeySchema = z.enum(HISTORY_FILTER_KEYS);

export const OutcomeViewSchema = z.object({
  kind: z.enum([
    'in_progress',
    'needs_input',
    'completed',
    'ready',
    'check_failed',
    'failed',
    'cancelled',
    'skipped',
    'merged',
    'applied',
    'discarded',
  ]),
  label: z.string(),
  short: z.string(),
  tone: z.enum(['progress', 'attention', 'success', 'failure', 'neutral']),
  icon: z.string(),
  filters: z.array(HistoryFilterKeySchema),
});
export type OutcomeView = z.infer<typeof OutcomeViewSchema>;
