// The MySQL tickets table's own parts: the columns read (the shared ones of sql-tickets.ts) and the
// live key that makes a take retry-safe.
import { createHash } from 'node:crypto';
import { TICKET_COLUMN_OF } from './sql-tickets';

/** The columns every ticket read selects (MySQL rows carry a `live_key` that no read needs). */
export const TICKET_COLUMNS = Object.values(TICKET_COLUMN_OF).join(', ');

/** The unique key of a live (user, task): fixed width whatever the ids' lengths. */
export function liveKey(userId: string, taskId: string): string {
  return createHash('sha256').update(`${userId}\u0000${taskId}`).digest('hex');
}
