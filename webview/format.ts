// Small display helpers for the panel (pure; unit-tested in Node).
import {
  PROMPT_MAX_CHARS,
  type AvailabilityView,
  type CardAsk,
  type CardPhase,
  type HistoryRowView,
  type PanelParams,
  type PanelResult,
  type QuestionView,
  type SetupView,
  type TaskCard,
} from '../src/protocol/webview';

/** A duration as people read it: "42s", "3m 07s", "2h 05m". */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n: number) => String(n).padStart(2, '0');
  if (h > 0) return `${h}h ${pad(m)}m`;
  if (m > 0) return `${m}m ${pad(s % 60)}s`;
  return `${s}s`;
}

/** "1 file changed", "14 files changed". */
export function filesChangedText(count: number): string {
  return `${count} file${count === 1 ? '' : 's'} changed`;
}

/** "in 4m 12s" until `at`, counting down to "now". */
export function formatCountdown(at: number, now: number): string {
  return at > now ? `in ${formatDuration(at - now + 999)}` : 'now';
}

/** "12s ago", "5m 03s ago". */
export function formatAgo(at: number, now: number): string {
  return now - at < 1000 ? 'just now' : `${formatDuration(now - at)} ago`;
}

export function formatTime(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function phaseLabel(
  card: Pick<TaskCard, 'phase' | 'queuePosition'> & {
    /** A finished task's label is its outcome's (src/core/outcome.ts), the same in History and the notifications. */
    outcome?: Pick<TaskCard['outcome'], 'label'>;
    ask?: CardAsk | null;
    usageLimitResetAt?: number | null;
    scheduledFor?: string;
    afterTitle?: string | null;
  },
  now?: number,
): string {
  if (card.ask) return 'Needs input';
  if (card.outcome && (card.phase === 'completed' || card.phase === 'failed' || card.phase === 'cancelled')) return card.outcome.label;
  // A segment held by the account's usage limit is not working (docs/flows.md#usage-limits).
  const held = now !== undefined && card.usageLimitResetAt != null && card.usageLimitResetAt > now;
  if (held && (card.phase === 'running' || card.phase === 'waiting_for_admission' || card.phase === 'waiting_for_model'))
    return 'Held: usage limit';
  const position = card.queuePosition != null ? ` · #${card.queuePosition}` : '';
  const labels: Record<CardPhase, string> = {
    taking_ticket: 'Taking a ticket',
    scheduled: card.scheduledFor ? `Scheduled for ${card.scheduledFor}` : 'Scheduled',
    after: card.afterTitle ? `After ${card.afterTitle}` : 'After another task',
    in_queue: `In queue${position}`,
    ready: 'Ready to start',
    paused: `Paused${position}`,
    between_segments: `Waiting for the next segment${position}`,
    waiting_for_admission: 'Waiting for admission',
    waiting_for_model: 'Waiting for the model',
    running: 'Running',
    needs_input: 'Needs input',
    completed: 'Completed',
    failed: 'Failed',
    cancelled: 'Cancelled',
  };
  return labels[card.phase];
}

/** The codicon each phase shows beside its label. */
export const PHASE_ICONS: Record<CardPhase, string> = {
  taking_ticket: 'loading',
  scheduled: 'calendar',
  after: 'debug-step-over',
  in_queue: 'clock',
  ready: 'debug-start',
  paused: 'debug-pause',
  between_segments: 'sync',
  waiting_for_admission: 'watch',
  waiting_for_model: 'loading',
  running: 'play-circle',
  needs_input: 'question',
  completed: 'pass-filled',
  failed: 'error',
  cancelled: 'circle-slash',
};

export const END_REASON_LABELS: Record<string, string> = {
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
  expired: 'segment ended (time limit)',
  interrupted: 'interrupted',
  retaken: 'replaced by a new ticket',
  deleted: 'task deleted',
  orphan: 'never used',
  parked: 'parked: waiting for your answer',
  usage_limit: 'usage limit: resumes after the reset',
};

/**
 * The sentence under the create button while it is disabled, with a live countdown; undefined
 * when create is possible. `now` ticks in the webview.
 */
export function availabilityText(a: AvailabilityView, now: number): string | undefined {
  if (a.canCreate) return undefined;
  const parts = [a.reason ?? 'No off-peak ticket can be taken right now.'];
  if (a.nextTakeAt !== undefined) {
    parts.push(a.nextTakeAt > now ? `You can queue a task again ${formatCountdown(a.nextTakeAt, now)}.` : 'Checking again…');
  } else if (a.kind === 'unreachable' && a.nextCheckAt !== undefined) {
    parts.push(a.nextCheckAt > now ? `Next try ${formatCountdown(a.nextCheckAt, now)}.` : 'Trying again…');
  }
  if (a.kind === 'unreachable' && a.lastSuccessAt !== undefined) parts.push(`Last reached ${formatAgo(a.lastSuccessAt, now)}.`);
  return parts.join(' ');
}

/** Why queued tasks wait: "Off-peak opens at 00:00 · in 3h 12m", ticking with `now`. */
export function offPeakOpeningText(opensAt: number | null, now: number): string {
  if (opensAt === null) return 'Off-peak windows are closed; no opening is scheduled.';
  const at = new Date(opensAt).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return `Off-peak opens at ${at} · ${formatCountdown(opensAt, now)}`;
}

export type SectionName = 'running' | 'needs_input' | 'queued' | 'paused' | 'finished';

export const SECTIONS: { name: SectionName; label: string; icon: string }[] = [
  { name: 'running', label: 'Running', icon: 'play-circle' },
  { name: 'needs_input', label: 'Needs input', icon: 'question' },
  { name: 'queued', label: 'Queued', icon: 'clock' },
  { name: 'paused', label: 'Paused', icon: 'debug-pause' },
  { name: 'finished', label: 'Finished', icon: 'check-all' },
];

export function sectionOf(card: Pick<TaskCard, 'status'> & { ask?: CardAsk | null }): SectionName {
  // The agent waits on a question: the task is running, but it is the user's turn.
  if (card.ask) return 'needs_input';
  switch (card.status) {
    case 'running':
      return 'running';
    case 'awaiting':
    case 'needs_input':
      return 'needs_input';
    case 'queued':
      return 'queued';
    case 'paused':
      return 'paused';
    default:
      return 'finished';
  }
}

/**
 * Cards grouped by section. Active cards follow the gateway queue (position, then queue time);
 * finished cards show the most recent first.
 */
export function groupCards(cards: readonly TaskCard[]): Record<SectionName, TaskCard[]> {
  const groups: Record<SectionName, TaskCard[]> = { running: [], needs_input: [], queued: [], paused: [], finished: [] };
  for (const card of cards) groups[sectionOf(card)].push(card);
  const byQueue = (a: TaskCard, b: TaskCard) =>
    (a.queuePosition ?? Number.MAX_SAFE_INTEGER) - (b.queuePosition ?? Number.MAX_SAFE_INTEGER) || a.queuedAt - b.queuedAt;
  for (const name of ['running', 'needs_input', 'queued', 'paused'] as const) groups[name].sort(byQueue);
  groups.finished.sort((a, b) => (b.endedAt ?? 0) - (a.endedAt ?? 0));
  return groups;
}

/** Whether a card shows a duration that changes every second. */
export function ticks(card: Pick<TaskCard, 'startedAt' | 'endedAt'>): boolean {
  return card.startedAt !== null && card.endedAt === null;
}

/** What a pending question's card says under it: when it is denied (or the task parks) if nobody answers, or that it waits parked. */
export function askDeadlineText(ask: CardAsk, now: number): string {
  const more = ask.more > 0 ? ` (${ask.more} more waiting)` : '';
  if (ask.interrupted && ask.parkedAt !== undefined)
    return `Its window closed at ${formatTime(ask.parkedAt)} before anyone answered; answer now, or the agent asks again when the task resumes${more}.`;
  if (ask.parkedAt !== undefined)
    return `Waiting for your answer since ${formatTime(ask.parkedAt)}, without holding capacity; the task resumes once you answer${more}.`;
  if (ask.onDeadline === 'park')
    return ask.deadlineAt > now
      ? `If nobody answers within ${formatDuration(ask.deadlineAt - now + 999)}, the task waits without holding capacity${more}.`
      : `Releasing the capacity…${more}`;
  return ask.deadlineAt > now ? `Denied automatically ${formatCountdown(ask.deadlineAt, now)}${more}.` : `Denying…${more}`;
}

/** "2 actions denied (1 automatically)", or undefined when nothing was denied. */
export function refusalText(r: { denied: number; automatic: number } | undefined): string | undefined {
  if (!r || r.denied === 0) return undefined;
  return `${r.denied} action${r.denied === 1 ? '' : 's'} denied${r.automatic > 0 ? ` (${r.automatic} automatically)` : ''}`;
}

/** Who or what answered a question, as the expanded card says it. */
export const ANSWERED_BY_LABELS: Record<string, string> = {
  host: 'you, in VS Code',
  terminal: 'you, in the terminal',
  'other-window': 'you, in another window',
  timeout: 'automatically (nobody answered in time)',
  stored: 'your earlier answer',
};

/** What the expanded card says a question's answer was: the verdict, who or what gave it, and when. */
export function questionAnswerText(q: Pick<QuestionView, 'decision' | 'answeredBy' | 'answeredAt' | 'parkedAt'>): string {
  const when = q.answeredAt !== null ? ` · ${formatTime(q.answeredAt)}` : '';
  // Its window closed (a reload, a crash, an engine restart) while it was open: kept, then the resumed session was told to ask anew.
  const closed = `its window closed${q.parkedAt !== null ? ` at ${formatTime(q.parkedAt)}` : ''} (a reload, a crash or a restart) before anyone answered`;
  if (q.answeredBy === 'interrupted' && q.decision === null)
    return `Waiting for your answer: ${closed}; the agent asks again when the task resumes`;
  if (q.answeredBy === 'asked-again')
    return `Not answered: ${closed}; the resumed agent was told to ask again${q.answeredAt !== null ? ` (${formatTime(q.answeredAt)})` : ''}`;
  if (q.decision === null) return q.parkedAt !== null ? `Waiting for your answer (parked ${formatTime(q.parkedAt)})` : 'Not answered yet';
  // Nobody answered: its segment ended first (the task stopped); the resumed agent asks again.
  if (q.answeredBy === 'ended')
    return `Not answered: its segment ended first (the task stopped); the agent asks again when the task resumes${when}`;
  const verdict = q.decision === 'allow' ? 'Allowed' : 'Denied';
  const who = q.answeredBy ? (ANSWERED_BY_LABELS[q.answeredBy] ?? q.answeredBy) : 'unknown';
  return `${verdict} by ${who}${when}`;
}

/** What the panel says after Allow/Deny was clicked, by how the answer ended. */
export function answerOutcomeText(
  decision: PanelParams<'answerAsk'>['decision'],
  outcome: PanelResult<'answerAsk'>['outcome'],
  tool: string,
  parked = false,
): string {
  switch (outcome) {
    case 'accepted':
      if (parked)
        return `${decision === 'allow' ? 'Allowed' : 'Denied'}: the task is queued again and resumes its session with your answer about ${tool}.`;
      return decision === 'allow' ? `Allowed: the agent goes on with ${tool}.` : `Denied: the agent was refused ${tool}.`;
    case 'already-answered':
      return 'This question was already answered (in the terminal, a notification, or by its deadline); your answer was not used.';
    case 'unknown':
      return 'This question is no longer open: the task stopped, or its agent runs in another window.';
    case 'input-mismatch':
      return 'Your answer was for another input than the question holds, so it was not used; the question is still open: read its input again.';
  }
}

/** The form shows a character counter from this share of the limit on. */
const COUNTER_FROM = 0.9;

/**
 * What the form says under the instructions: a counter near the length limit (and past it), and
 * why "Queue task" is disabled when the instructions are only whitespace. `blocks`: the prompt
 * cannot be queued as it is.
 */
export function promptHint(prompt: string): { counter?: string; hint?: string; blocks: boolean } {
  const n = prompt.length;
  const counter =
    n >= PROMPT_MAX_CHARS * COUNTER_FROM
      ? `${n.toLocaleString('en-US')} / ${PROMPT_MAX_CHARS.toLocaleString('en-US')} characters`
      : undefined;
  if (n > PROMPT_MAX_CHARS)
    return {
      counter,
      hint: `The instructions are ${(n - PROMPT_MAX_CHARS).toLocaleString('en-US')} characters too long: shorten them to queue the task.`,
      blocks: true,
    };
  if (n > 0 && prompt.trim() === '')
    return { counter, hint: 'The instructions are only spaces or line breaks: write what the agent should do.', blocks: true };
  return { counter, blocks: n === 0 };
}

/** An expanded card shows this many lines of a long prompt until "Show all". */
export const PROMPT_FOLD_LINES = 20;

/** The first `maxLines` lines of a prompt, and how many more it has (0: nothing is folded). */
export function foldPrompt(prompt: string, maxLines = PROMPT_FOLD_LINES): { text: string; hiddenLines: number } {
  const lines = prompt.split('\n');
  // Folding a line or two saves nothing: only a clearly longer prompt folds.
  if (lines.length <= maxLines + 2) return { text: prompt, hiddenLines: 0 };
  return { text: lines.slice(0, maxLines).join('\n'), hiddenLines: lines.length - maxLines };
}

/** When tasks run, to the minute (docs/flows.md#what-the-panel-says). */
export function setupRunsText(setup: SetupView, now: number): string {
  if (setup.mode === 'team') return 'tasks run when the gateway admits them';
  if (setup.hours === null || /^always$/i.test(setup.hours)) return 'tasks run any time';
  if (setup.hoursOpenAt === null) return `tasks run now (hours ${setup.hours})`;
  const at = new Date(setup.hoursOpenAt).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return `tasks run at ${at}, ${formatCountdown(setup.hoursOpenAt, now)} (hours ${setup.hours})`;
}

/** How long a row's task took, or has been running: counted on with the panel's clock, as its card's is. */
export function historyRowDuration(row: Pick<HistoryRowView, 'status' | 'triggeredAt' | 'durationMs'>, now: number): number {
  return row.status === 'in_progress' ? Math.max(row.durationMs, now - row.triggeredAt) : row.durationMs;
}
