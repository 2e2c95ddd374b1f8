/**
 * One truth per outcome (docs/flows.md#outcomes): what a task came to, in the words every surface
 * uses — the card, History's row and its filters, the toast, the status bar, the morning summary,
 * the desktop and the away notification. Each of them asks `outcomeOf` and shows its `label` (or
 * its `short` form in a sentence or a count); none words an outcome of its own.
 */
import type { TaskStatus } from './types';

export type OutcomeKind =
  | 'in_progress'
  | 'needs_input'
  | 'completed'
  | 'ready'
  | 'check_failed'
  | 'failed'
  | 'cancelled'
  | 'skipped'
  | 'merged'
  | 'applied'
  | 'discarded';

/** How an outcome looks: its colour and icon family. */
export type OutcomeTone = 'progress' | 'attention' | 'success' | 'failure' | 'neutral';

/** The History filter's choices: every outcome by itself, and the two groups "Succeeded" and "Failure". */
export type HistoryFilterKey = OutcomeKind | 'succeeded' | 'failure';

/** What the outcome is made of: the task row, its check (docs/flows.md#checks) and what became of its branch. */
export interface OutcomeFacts {
  status: TaskStatus;
  failureReason?: string | null;
  check?: { state: string; round: number } | null;
  broughtHome?: 'merged' | 'applied' | 'discarded' | null;
  /** The pull request that merged it on the forge (docs/flows.md#pull-requests): "Merged in #123". */
  mergedIn?: number | null;
}

export interface Outcome {
  kind: OutcomeKind;
  /** As a card, a History row or a notification's title says it: "Check failed after 2 rounds". */
  label: string;
  /** In a sentence or a count, lower case: "check failed" ("1 check failed", "… : check failed after 2 rounds."). */
  short: string;
  tone: OutcomeTone;
  /** The codicon beside the label. */
  icon: string;
  /** The History filters that find it: its own, and its group's. */
  filters: HistoryFilterKey[];
}

/** A chain step that never ran because the step it follows did not pass (src/core/task-chain.ts words the reason). */
export const SKIPPED_PREFIX = 'Skipped: ';

const rounds = (n: number) => `${n} round${n === 1 ? '' : 's'}`;

/** What the task came to; a task not finished yet is in progress (or needs input). */
export function outcomeOf(facts: OutcomeFacts): Outcome {
  const { status, check } = facts;
  const finished = status === 'completed' || status === 'failed' || status === 'cancelled';
  // Its work brought home is the last word; a discard is, for a run that ended with work to discard.
  if (finished && facts.broughtHome === 'merged' && facts.mergedIn != null) return mergedIn(facts.mergedIn);
  if (finished && (facts.broughtHome === 'merged' || facts.broughtHome === 'applied')) return OUTCOMES[facts.broughtHome];
  if (status === 'completed' && facts.broughtHome === 'discarded') return OUTCOMES.discarded;
  switch (status) {
    case 'completed':
      if (check?.state === 'failed') return checkFailed(Math.max(1, check.round));
      return check?.state === 'passed' ? OUTCOMES.ready : OUTCOMES.completed;
    case 'failed':
      return OUTCOMES.failed;
    case 'cancelled':
      return facts.failureReason?.startsWith(SKIPPED_PREFIX) ? OUTCOMES.skipped : OUTCOMES.cancelled;
    case 'needs_input':
      return OUTCOMES.needs_input;
    default:
      return OUTCOMES.in_progress;
  }
}

/** "Check failed after N rounds": its own outcome, found by the Failure filter and by its own. */
function checkFailed(n: number): Outcome {
  return { ...OUTCOMES.check_failed, label: `Check failed after ${rounds(n)}`, short: `check failed after ${rounds(n)}` };
}

/** "Merged in #123": merged by its pull request on the forge, found by the Merged filter. */
function mergedIn(n: number): Outcome {
  return { ...OUTCOMES.merged, label: `Merged in #${n}`, short: `merged in #${n}` };
}

const OUTCOMES: Record<OutcomeKind, Outcome> = {
  in_progress: {
    kind: 'in_progress',
    label: 'In progress',
    short: 'in progress',
    tone: 'progress',
    icon: 'sync',
    filters: ['in_progress'],
  },
  needs_input: {
    kind: 'needs_input',
    label: 'Needs input',
    short: 'needs input',
    tone: 'attention',
    icon: 'question',
    filters: ['needs_input', 'in_progress'],
  },
  completed: {
    kind: 'completed',
    label: 'Completed',
    short: 'completed',
    tone: 'success',
    icon: 'pass-filled',
    filters: ['completed', 'succeeded'],
  },
  ready: {
    kind: 'ready',
    label: 'Ready for review · checks pass',
    short: 'ready for review · checks pass',
    tone: 'success',
    icon: 'pass-filled',
    filters: ['ready', 'succeeded'],
  },
  check_failed: {
    kind: 'check_failed',
    label: 'Check failed',
    short: 'check failed',
    tone: 'failure',
    icon: 'error',
    filters: ['check_failed', 'failure'],
  },
  failed: { kind: 'failed', label: 'Failed', short: 'failed', tone: 'failure', icon: 'error', filters: ['failed', 'failure'] },
  cancelled: { kind: 'cancelled', label: 'Cancelled', short: 'cancelled', tone: 'neutral', icon: 'circle-slash', filters: ['cancelled'] },
  skipped: { kind: 'skipped', label: 'Skipped', short: 'skipped', tone: 'neutral', icon: 'debug-step-over', filters: ['skipped'] },
  merged: { kind: 'merged', label: 'Merged', short: 'merged', tone: 'success', icon: 'git-merge', filters: ['merged', 'succeeded'] },
  applied: {
    kind: 'applied',
    label: 'Applied',
    short: 'applied',
    tone: 'success',
    icon: 'git-pull-request-create',
    filters: ['applied', 'succeeded'],
  },
  discarded: { kind: 'discarded', label: 'Discarded', short: 'discarded', tone: 'neutral', icon: 'discard', filters: ['discarded'] },
};

/** "1 check failed", "2 need input": a count of one outcome, as the morning summary and the status bar say it. */
export function outcomeCount(kind: OutcomeKind, count: number): string {
  const word = OUTCOMES[kind].short;
  return `${count} ${kind === 'needs_input' && count !== 1 ? 'need input' : word}`;
}

/** The History filter box's choices, in order, with the words it shows. */
export const HISTORY_FILTERS: readonly { key: HistoryFilterKey; label: string }[] = [
  { key: 'in_progress', label: 'In progress' },
  { key: 'needs_input', label: OUTCOMES.needs_input.label },
  { key: 'succeeded', label: 'Succeeded (all)' },
  { key: 'completed', label: OUTCOMES.completed.label },
  { key: 'ready', label: OUTCOMES.ready.label },
  { key: 'merged', label: OUTCOMES.merged.label },
  { key: 'applied', label: OUTCOMES.applied.label },
  { key: 'failure', label: 'Failure (all)' },
  { key: 'failed', label: OUTCOMES.failed.label },
  { key: 'check_failed', label: OUTCOMES.check_failed.label },
  { key: 'cancelled', label: OUTCOMES.cancelled.label },
  { key: 'skipped', label: OUTCOMES.skipped.label },
  { key: 'discarded', label: OUTCOMES.discarded.label },
];

export const HISTORY_FILTER_KEYS = HISTORY_FILTERS.map((f) => f.key) as [HistoryFilterKey, ...HistoryFilterKey[]];
