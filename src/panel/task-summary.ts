// What the status bar, the "Show Task Terminal…" picker and the top of the panel say about the
// tasks as a whole, vscode-free and pure (the webview imports it too): one wording everywhere.
// A running task whose agent waits for an answer is "needs input", never "running".
import type { AccountBarView } from '../core/account-bar';
import { clockTime } from '../core/clock';
import { outcomeCount, outcomeOf, type Outcome, type OutcomeFacts, type OutcomeKind } from '../core/outcome';
import { spendText, totalSpend } from '../core/spend';
import type { SegmentUsage, TaskStatus } from '../core/types';

/** The part of a task these texts read. */
export interface SummaryTask {
  id: string;
  status: TaskStatus;
}

export interface TaskCounts {
  needsInput: number;
  running: number;
  queued: number;
}

/** `asking`: ids of the tasks whose agent waits on a permission question. */
/** A task waits for the user: its running agent asks, or it parked on a question (docs/flows.md#questions-park-the-task). */
export function needsInput(task: SummaryTask, asking: ReadonlySet<string>): boolean {
  return task.status === 'needs_input' || ((task.status === 'running' || task.status === 'awaiting') && asking.has(task.id));
}

export function taskCounts(tasks: readonly SummaryTask[], asking: ReadonlySet<string>): TaskCounts {
  const counts: TaskCounts = { needsInput: 0, running: 0, queued: 0 };
  for (const t of tasks) {
    const live = t.status === 'running' || t.status === 'awaiting';
    if (needsInput(t, asking)) counts.needsInput++;
    else if (live) counts.running++;
    else if (t.status === 'queued') counts.queued++;
  }
  return counts;
}

/** The word a list of tasks (the terminal picker) shows beside a task. */
export function taskStateWord(task: SummaryTask, asking: ReadonlySet<string>): string {
  if (needsInput(task, asking)) return 'needs input';
  return task.status === 'awaiting' ? 'running' : task.status;
}

export interface StatusBarView {
  /** Hidden: nothing runs, waits or is new. */
  visible: boolean;
  text: string;
  tooltip: string;
  /** Some task waits for the user's answer: the item stands out (warning colours). */
  highlight: boolean;
}

/** The account's usage limit as the status bar shows it (docs/flows.md#usage-limits): the reset tasks wait for. */
export interface AccountLimitView {
  resetAt: number;
  now: number;
}

/** The status bar item: "N need input" first (and highlighted), then running, queued and new; the account's usage limit while it holds tasks. */
export function statusBarView(
  counts: TaskCounts,
  summary: ResultsSummary | undefined,
  unseenResults: number,
  limit?: AccountLimitView | null,
  account?: AccountBarView | null,
): StatusBarView {
  const held = limit && limit.resetAt > limit.now ? clockTime(limit.resetAt) : null;
  const parts = [
    held ? `usage limit until ${held}` : '',
    !held && account?.holdingShort ? account.holdingShort : '',
    counts.needsInput > 0 ? `${counts.needsInput} need${counts.needsInput === 1 ? 's' : ''} input` : '',
    counts.running > 0 ? `${counts.running} running` : '',
    counts.queued > 0 ? `${counts.queued} queued` : '',
    unseenResults > 0 ? `${unseenResults} new` : '',
  ].filter(Boolean);
  // Always there (also before any task exists): the entry is how a new user finds the panel.
  const idle = parts.length === 0;
  const icon = counts.needsInput > 0 ? 'question' : unseenResults > 0 ? 'bell-dot' : 'watch';
  const summaryText = summary ? summaryLine(summary) : undefined;
  const tooltip = [
    'Off-Peak Tasks',
    summaryText,
    idle && !summaryText ? 'Nothing queued or running.' : undefined,
    counts.needsInput > 0 ? `${counts.needsInput} task(s) wait for your answer (Allow or Deny on the card).` : undefined,
    held ? `Your usage limit is reached: tasks wait for its reset at ${held} and resume their sessions then.` : undefined,
    account ? `Account: ${account.shortText} (${account.ageText})` : undefined,
    account?.holdingText ?? undefined,
    'Click to open the panel.',
  ]
    .filter(Boolean)
    .join('\n');
  return {
    visible: true,
    text: idle ? `$(${icon}) Off-Peak` : `$(${icon}) Off-Peak: ${parts.join(', ')}`,
    tooltip,
    highlight: counts.needsInput > 0,
  };
}

/** A result the summary counts: a finished task the user has not looked at yet, or a task waiting for an answer. */
export interface SummaryCard {
  id: string;
  status: TaskStatus;
  filesChanged: number | null;
  /** Its result is new to the user. */
  isNew: boolean;
  /** Its agent waits on a question. */
  needsInput: boolean;
  /** What it came to (src/core/outcome.ts): a completed task may be ready for review or its check failed (docs/flows.md#checks). */
  outcome?: Pick<Outcome, 'kind'> & Partial<Pick<Outcome, 'short'>>;
  /** A run a repeating schedule queued (docs/flows.md#schedules-and-chains). */
  scheduled?: boolean;
  /** What it spent (docs/flows.md#capacity-and-cost). */
  usage?: Pick<SegmentUsage, 'costUsd' | 'windowShare'> | null;
}

export type SummaryFilter =
  'completed' | 'ready' | 'check_failed' | 'merged' | 'needs_input' | 'failed' | 'files_changed' | 'scheduled' | 'spent';

/**
 * "Since 18:40: 3 completed, 1 ready for review · checks pass, 1 check failed, 1 needs input, 1 failed, 14 files changed,
 * 2 by schedule", part by part; each result counted under its outcome's words (src/core/outcome.ts).
 */
export interface ResultsSummary {
  /** When the user last looked (a result was last shown); null when never. */
  since: number | null;
  parts: { filter: SummaryFilter; count: number; text: string; taskIds: string[] }[];
}

/**
 * What happened since the user last looked: new completed and failed results, tasks that need
 * input, the files the new results changed. Undefined when no result is new (nothing to report).
 */
export function resultsSummary(cards: readonly SummaryCard[], since: number | null): ResultsSummary | undefined {
  const fresh = cards.filter((c) => c.isNew && (c.status === 'completed' || c.status === 'failed'));
  if (fresh.length === 0) return undefined;
  // A completed result is counted under its outcome: completed, ready for review (its check passed) or check failed.
  const kindOf = (c: SummaryCard): OutcomeKind => (c.status === 'failed' ? 'failed' : (c.outcome?.kind ?? 'completed'));
  const asking = cards.filter((c) => c.needsInput);
  const changing = fresh.filter((c) => (c.filesChanged ?? 0) > 0);
  const files = changing.reduce((n, c) => n + (c.filesChanged ?? 0), 0);
  const parts: ResultsSummary['parts'] = [];
  const ids = (list: readonly SummaryCard[]) => list.map((c) => c.id);
  const counted = (filter: SummaryFilter & OutcomeKind, list: readonly SummaryCard[]) => {
    if (list.length > 0) parts.push({ filter, count: list.length, text: outcomeCount(filter, list.length), taskIds: ids(list) });
  };
  for (const kind of ['completed', 'ready', 'check_failed', 'merged'] as const)
    counted(
      kind,
      fresh.filter((c) => c.status === 'completed' && kindOf(c) === kind),
    );
  // One merged on the forge names its pull request: "merged in #123" (src/core/outcome.ts).
  const merged = parts.find((p) => p.filter === 'merged');
  const one = merged?.count === 1 ? fresh.find((c) => c.id === merged.taskIds[0])?.outcome?.short : undefined;
  if (merged && one) merged.text = one;
  counted('needs_input', asking);
  counted(
    'failed',
    fresh.filter((c) => c.status === 'failed'),
  );
  if (files > 0)
    parts.push({ filter: 'files_changed', count: files, text: `${files} file${files === 1 ? '' : 's'} changed`, taskIds: ids(changing) });
  // Of the new results, those a schedule queued: what ran by itself overnight.
  const scheduled = fresh.filter((c) => c.scheduled);
  if (scheduled.length > 0)
    parts.push({ filter: 'scheduled', count: scheduled.length, text: `${scheduled.length} by schedule`, taskIds: ids(scheduled) });
  // What the new results spent, in the units their credentials pay, worded as each card words it.
  const spending = fresh.filter((c) => totalSpend([c.usage]).length > 0);
  const spent = totalSpend(spending.map((c) => c.usage));
  if (spent.length > 0)
    parts.push({ filter: 'spent', count: spending.length, text: `${spent.map(spendText).join(' and ')} used`, taskIds: ids(spending) });
  return { since, parts };
}

/** What the summary reads of a task besides its id, status and files: each caller says it from what it holds. */
export type SummaryFacts = Pick<SummaryCard, 'isNew' | 'needsInput' | 'outcome' | 'scheduled' | 'usage'>;

/**
 * The summary of a list of tasks: the one place a task becomes a summary card, for the panel (from
 * its cards) and the status bar (from the store) alike.
 */
export function summaryOfTasks<T extends SummaryTask & { filesChanged: number | null }>(
  tasks: readonly T[],
  factsOf: (task: T) => SummaryFacts,
  since: number | null,
): ResultsSummary | undefined {
  return resultsSummary(
    tasks.map((t) => ({ id: t.id, status: t.status, filesChanged: t.filesChanged, ...factsOf(t) })),
    since,
  );
}

/** "Since 18:40" (today) or "Since Nov 30, 18:40"; "New results" when the user never looked. */
export function sinceText(since: number | null, now = Date.now()): string {
  if (since === null) return 'New results';
  const at = new Date(since);
  const time = at.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  const sameDay = new Date(now).toDateString() === at.toDateString();
  return sameDay ? `Since ${time}` : `Since ${at.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })}, ${time}`;
}

/** The whole summary as one line (the status bar's tooltip). */
export function summaryLine(summary: ResultsSummary, now = Date.now()): string {
  // Commas: an outcome's own words may hold a "·" ("ready for review · checks pass").
  return `${sinceText(summary.since, now)}: ${summary.parts.map((p) => p.text).join(', ')}`;
}

/** The summary's facts of a panel card (the webview's summary): the card carries its outcome. */
export function cardSummaryFacts(card: {
  unseen: boolean;
  ask: unknown;
  outcome: Pick<Outcome, 'kind'> & Partial<Pick<Outcome, 'short'>>;
  scheduleRun?: unknown;
  usage?: SummaryCard['usage'];
}): SummaryFacts {
  return {
    isNew: card.unseen,
    needsInput: card.ask !== null,
    outcome: card.outcome,
    scheduled: Boolean(card.scheduleRun),
    usage: card.usage ?? null,
  };
}

/** The store's tasks as the status bar counts them: each with its outcome (its check counts) and whether a schedule queued it. */
export function statusTasksOf<T extends SummaryTask & { failureReason: string | null }>(
  tasks: readonly T[],
  checks: ReadonlyMap<string, NonNullable<OutcomeFacts['check']>>,
  scheduled: { has(taskId: string): boolean },
  fates?: ReadonlyMap<string, Pick<OutcomeFacts, 'broughtHome' | 'mergedIn'>>,
): (T & { outcome: Outcome; scheduled: boolean })[] {
  return tasks.map((t) => ({
    ...t,
    outcome: outcomeOf({ ...t, check: checks.get(t.id), ...fates?.get(t.id) }),
    scheduled: scheduled.has(t.id),
  }));
}

/** The status bar as the host sees the store: its tasks, the open questions, the unseen results. */
export function hostStatusView(
  tasks: readonly (SummaryTask & {
    filesChanged: number | null;
    outcome?: Pick<Outcome, 'kind'> & Partial<Pick<Outcome, 'short'>>;
    scheduled?: boolean;
  })[],
  asks: readonly { taskId: string }[],
  unseen: readonly string[],
  lastSeenAt: number | null,
  limit?: AccountLimitView | null,
  account?: AccountBarView | null,
): StatusBarView {
  const asking = new Set(asks.map((a) => a.taskId));
  const fresh = new Set(unseen);
  const summary = summaryOfTasks(
    tasks,
    (t) => ({ isNew: fresh.has(t.id), needsInput: needsInput(t, asking), outcome: t.outcome, scheduled: t.scheduled }),
    lastSeenAt,
  );
  return statusBarView(taskCounts(tasks, asking), summary, unseen.length, limit, account);
}

/**
 * The toast after "Queue Off-Peak Task…" from the palette. It names no queue position: the card
 * is the one source for it (the position moves as other tickets are admitted; a toast cannot).
 */
export function queuedNoticeText(title: string): string {
  return `Queued "${title}". It runs when the gateway admits it; the panel shows its place in the queue.`;
}
