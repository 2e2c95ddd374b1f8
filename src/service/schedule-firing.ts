/**
 * Firing repeating schedules (docs/flows.md#schedules-and-chains), in the lease holder's sync:
 * each due occurrence is recorded under its occurrence key and, unless the previous run is still
 * going, queues one ordinary task without a ticket (`notBefore` = its due time, the path of "not
 * before"), all in ONE store transaction. The key is unique in the store, so a second window, a
 * reload or a crash between the two can neither queue an occurrence twice nor lose it.
 */
import { dueOccurrence, nextOccurrence, occurrenceDecision, type DueOccurrence } from '../core/schedule-rules';
import type { ScheduleRecord, StoreReadTx, StoreTx } from '../store';
import { isolateTask } from './follow-ups';
import { insertWaitingTask, keepCheck, type CreateTaskInput } from './ticket-rules';

/** One occurrence this transaction handled. */
export interface FiredOccurrence {
  scheduleId: string;
  occurrenceKey: string;
  outcome: 'queued' | 'skipped';
  /** The queued run's task. */
  taskId: string | null;
}

/** The earliest next occurrence of any schedule that is not paused; null when there is none (no timer). */
export function scheduleWakeAt(tx: StoreReadTx): number | null {
  let best: number | null = null;
  for (const s of tx.schedules.list()) {
    if (s.paused) continue;
    const next = nextOccurrence(s.rule, s.handledThrough, s.zone);
    if (best === null || next < best) best = next;
  }
  return best;
}

/** A run's task: the schedule's saved task, named with its local date (its branch is too: `offpeak/<title>-2026-12-02-…`). */
export function runTaskInput(s: ScheduleRecord, due: Pick<DueOccurrence, 'dueAt' | 'localDate'>): CreateTaskInput {
  return {
    title: `${s.title} ${due.localDate}`,
    prompt: s.prompt,
    permissionMode: s.permissionMode,
    model: s.model,
    thoughtLevel: s.thoughtLevel,
    workspacePath: s.workspacePath,
    workspaceIdentity: s.workspaceIdentity,
    notBefore: due.dueAt,
    isolation: s.isolation ?? undefined,
    checkCommand: s.checkCommand,
  };
}

/** Records and queues (or skips) every occurrence due at `tx.now`; nothing is written when none is due. */
export function fireDueSchedules(tx: StoreTx, newTaskId: () => string): FiredOccurrence[] {
  const fired: FiredOccurrence[] = [];
  for (const s of tx.schedules.list()) {
    if (s.paused) continue;
    const due = dueOccurrence(s.id, s.rule, s.zone, s.handledThrough, tx.now);
    if (!due) continue;
    tx.schedules.markHandled(s.id, due.dueAt);
    const previous = tx.schedules.lastQueued(s.id);
    const previousTask = previous?.taskId ? tx.tasks.get(previous.taskId) : undefined;
    const decision = occurrenceDecision(due, previousTask ? { status: previousTask.status } : null, s.zone);
    const taskId = decision.kind === 'queue' ? newTaskId() : null;
    const recorded = tx.schedules.insertRun({
      occurrenceKey: due.key,
      scheduleId: s.id,
      dueAt: due.dueAt,
      taskId,
      outcome: decision.kind === 'queue' ? 'queued' : 'skipped',
      catchUp: due.catchUp,
      missedCount: due.missed,
      note: decision.kind === 'skip' ? decision.reason : null,
    });
    // Recorded before (another window fired it): nothing more, never a second task.
    if (!recorded) continue;
    if (taskId) {
      const input = runTaskInput(s, due);
      const task = insertWaitingTask(tx, taskId, input, null);
      isolateTask(tx, taskId, input);
      keepCheck(tx, task, input);
    }
    fired.push({ scheduleId: s.id, occurrenceKey: due.key, outcome: decision.kind === 'queue' ? 'queued' : 'skipped', taskId });
  }
  return fired;
}

/** Whether any schedule has an occurrence due at `now` (a read: the cycle writes only then). */
export function anyScheduleDue(tx: StoreReadTx, now: number): boolean {
  return tx.schedules.list().some((s) => !s.paused && dueOccurrence(s.id, s.rule, s.zone, s.handledThrough, now) !== null);
}
