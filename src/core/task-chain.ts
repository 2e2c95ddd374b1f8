// "After <task>" chains (docs/flows.md#schedules-and-chains): when a waiting task may be taken, when it
// is skipped instead, and the cycle check at creation. Pure rules over what the store says of the
// task it follows.
import type { TaskStatus } from './types';

/**
 * How the followed task's check went. Checks are a per-task command run after the agent completes;
 * until a task has one (or before checks exist at all) it is `none`, and completed is enough.
 */
export type CheckOutcome = 'none' | 'pending' | 'passed' | 'failed';

/** The task a waiting task follows, as the store has it; null when it was deleted. */
export interface Predecessor {
  title: string;
  status: TaskStatus;
  check: CheckOutcome;
}

export type ChainGate = { kind: 'wait' } | { kind: 'go' } | { kind: 'skip'; reason: string };

/**
 * Whether a task waiting for `predecessor` may go: only once it completed (and its check, if it has
 * one, passed). A failed, cancelled or deleted predecessor, or a failed check, skips the waiting task
 * with the reason: it never runs on a broken base.
 */
export function chainGate(predecessor: Predecessor | null): ChainGate {
  if (!predecessor) return { kind: 'skip', reason: 'Skipped: the task it follows was deleted.' };
  const title = predecessor.title;
  switch (predecessor.status) {
    case 'completed':
      if (predecessor.check === 'failed') return { kind: 'skip', reason: `Skipped: ${title}'s check failed.` };
      if (predecessor.check === 'pending') return { kind: 'wait' };
      return { kind: 'go' };
    case 'failed':
      return { kind: 'skip', reason: `Skipped: ${title} failed.` };
    case 'cancelled':
      return { kind: 'skip', reason: `Skipped: ${title} was cancelled.` };
    default:
      return { kind: 'wait' };
  }
}

/**
 * The chain `taskId → after → …` would form if `taskId` waited for `after`, when it comes back to
 * `taskId` (the ids in order, `taskId` first and last); null when it ends. `afterOf` says which task
 * each task waits for.
 */
export function chainCycle(taskId: string, after: string, afterOf: (id: string) => string | null | undefined): string[] | null {
  const path = [taskId];
  const seen = new Set<string>([taskId]);
  for (let current: string | null | undefined = after; current; current = afterOf(current)) {
    path.push(current);
    if (current === taskId) return path;
    if (seen.has(current)) return null; // an older knot that does not pass through taskId
    seen.add(current);
  }
  return null;
}
