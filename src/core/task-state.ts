/**
 * The local task state machine (docs/flows.md#task-states): one table of allowed from-states per
 * transition. The store turns each entry into a conditional UPDATE (`... WHERE status IN (...)`)
 * so the guard holds across processes; this module is the single place that says what is allowed.
 */
import { isTerminalStatus, type OffPeakTask, type TaskStatus } from './types';

export type TaskTransition = 'pause' | 'continue' | 'markRunning' | 'requeue' | 'complete' | 'fail' | 'cancel' | 'park' | 'answerParked';

/** Extra row conditions a transition needs besides the from-state. */
export type ClaimGuard = 'unclaimed' | 'claimed' | 'any';

export interface TransitionRule {
  from: readonly TaskStatus[];
  to: TaskStatus;
  claim: ClaimGuard;
  /** What the transition means, for error messages and docs. */
  summary: string;
}

export const TRANSITIONS: Readonly<Record<TaskTransition, TransitionRule>> = {
  pause: {
    from: ['queued'],
    to: 'paused',
    claim: 'unclaimed',
    summary: 'stop local dispatch of a queued, unclaimed task; its ticket keeps its place',
  },
  continue: {
    from: ['paused'],
    to: 'queued',
    claim: 'any',
    summary: 'resume local dispatch of a paused task',
  },
  markRunning: {
    from: ['queued'],
    to: 'running',
    claim: 'claimed',
    summary: 'the agent accepted the prompt; refused if the task was paused or cancelled meanwhile',
  },
  requeue: {
    // `awaiting` is legacy; it is migrated at open but a row written by an old build may still appear.
    from: ['running', 'awaiting'],
    to: 'queued',
    claim: 'any',
    summary: 'segment ended (ticket expired) or the run was interrupted; keeps session, started_at, queued_at',
  },
  complete: {
    from: ['running', 'awaiting'],
    to: 'completed',
    claim: 'any',
    summary: 'the agent finished successfully',
  },
  fail: {
    // queued: the task can no longer be dispatched or resumed at all (e.g. its workspace is gone).
    from: ['running', 'awaiting', 'queued'],
    to: 'failed',
    claim: 'any',
    summary: 'the run failed for good',
  },
  park: {
    from: ['running', 'awaiting'],
    to: 'needs_input',
    claim: 'any',
    summary: 'a permission question went unanswered: the segment ended and its ticket is settled; the task waits for the answer',
  },
  answerParked: {
    from: ['needs_input'],
    to: 'queued',
    claim: 'any',
    summary: 'the parked question was answered: the task takes a new ticket and resumes the same session',
  },
  cancel: {
    from: ['queued', 'paused', 'running', 'awaiting', 'needs_input'],
    to: 'cancelled',
    claim: 'any',
    summary: 'the user cancelled the task',
  },
};

export const TASK_TRANSITIONS = Object.keys(TRANSITIONS) as TaskTransition[];

/** Statuses in which the form (title, prompt, permission mode, model, thought level) may be edited. */
export const EDITABLE_STATUSES: readonly TaskStatus[] = ['queued', 'paused'];

/** Pure check of one transition against a task snapshot; the store enforces the same rule in SQL. */
export function canTransition(task: Pick<OffPeakTask, 'status' | 'claimRunning'>, transition: TaskTransition): boolean {
  const rule = TRANSITIONS[transition];
  if (!rule.from.includes(task.status)) return false;
  if (rule.claim === 'unclaimed' && task.claimRunning) return false;
  if (rule.claim === 'claimed' && !task.claimRunning) return false;
  return true;
}

export function canEdit(task: Pick<OffPeakTask, 'status'>): boolean {
  return EDITABLE_STATUSES.includes(task.status);
}

/** No transition leaves a terminal state: checked by a unit test over the whole table. */
export function terminalIsIrreversible(): boolean {
  return TASK_TRANSITIONS.every((t) => TRANSITIONS[t].from.every((s) => !isTerminalStatus(s)));
}
