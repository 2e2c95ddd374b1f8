// The card a task shows in the panel: a projection of the task row and its ticket ledger.
import type { PendingAsk } from '../core/ask-types';
import { outcomeOf, type OutcomeFacts } from '../core/outcome';
import { canEdit, canTransition } from '../core/task-state';
import { shortTaskId } from '../core/task-title';
import { isTerminalStatus, type OffPeakTask, type SegmentUsage, type TicketRecord } from '../core/types';
import { addSegmentUsage, totalUsage } from '../core/usage';
import { formatDueTime } from '../core/zoned-time';
import type { AllowedNotRunView, CardAsk, CardPhase, RefusalCount, TaskCard } from '../protocol/webview';
import type { FollowUpLink, TaskCheck } from '../store';
import type { CheckView } from '../protocol/check-view';

const DEAD_TICKET = new Set(['expired', 'settled', 'not_found']);

/**
 * The finer state a card shows. A running task whose current segment has not had a model
 * request admitted yet says "waiting for admission", not "running" (docs/flows.md#task-states);
 * in personal mode (`personal`), where no one admits what the user waits for, "waiting for the
 * model" until its first model answer.
 */
export function cardPhaseOf(task: OffPeakTask, currentTicket: TicketRecord | undefined, personal = false): CardPhase {
  switch (task.status) {
    case 'completed':
    case 'failed':
    case 'cancelled':
    case 'paused':
      return task.status;
    case 'running':
    case 'awaiting':
      if (currentTicket?.activeAt != null) return 'running';
      return personal ? 'waiting_for_model' : 'waiting_for_admission';
    case 'needs_input':
      return 'needs_input';
    case 'queued':
      if (!task.serverTicketId && task.afterTaskId) return 'after';
      if (!task.serverTicketId && task.notBefore != null) return 'scheduled';
      // It ran before: a segment ended and the same session resumes once a new ticket is admitted.
      if (task.startedAt !== null && !task.schedulable) return 'between_segments';
      if (!task.serverTicketId || (currentTicket && DEAD_TICKET.has(currentTicket.serverState))) return 'taking_ticket';
      return task.schedulable ? 'ready' : 'in_queue';
  }
}

/** "Tue 02:00": when a task that waits for its "not before" time takes its ticket, in `zone` (docs/flows.md#schedules-and-chains). */
export function scheduledForOf(
  task: OffPeakTask,
  now: number,
  zone: string,
): { scheduledFor: string; notBefore: number } | Record<string, never> {
  if (task.notBefore == null || task.serverTicketId || isTerminalStatus(task.status)) return {};
  return { scheduledFor: formatDueTime(task.notBefore, now, zone), notBefore: task.notBefore };
}

/** The oldest open question of a running task (the agent waits on it) or of a parked one, or null. */
export function cardAskOf(task: OffPeakTask, asks: readonly PendingAsk[]): CardAsk | null {
  // An ask outlives nothing: once the task stops running (or waiting parked), a leftover would offer a useless button.
  const live = task.status === 'running' || task.status === 'awaiting' || task.status === 'needs_input';
  // A question kept across its window's close waits on a queued (or paused) task until the resume.
  const waiting = task.status === 'queued' || task.status === 'paused';
  const open = asks.filter(
    (a) => a.taskId === task.id && (a.interrupted ? waiting : live && (task.status === 'needs_input') === (a.parkedAt !== undefined)),
  );
  const first = open.reduce<PendingAsk | undefined>((oldest, a) => (oldest && oldest.askedAt <= a.askedAt ? oldest : a), undefined);
  if (!first) return null;
  const card: CardAsk = {
    id: first.id,
    tool: first.tool,
    question: first.summary,
    input: first.input,
    inputDigest: first.inputDigest,
    askedAt: first.askedAt,
    deadlineAt: first.deadlineAt,
    more: open.length - 1,
  };
  if (first.onDeadline) card.onDeadline = first.onDeadline;
  if (first.parkedAt !== undefined) card.parkedAt = first.parkedAt;
  if (first.interrupted) card.interrupted = true;
  return card;
}

/**
 * The latest usage-limit reset its ledger holds, for a task that is not finished (docs/flows.md#usage-limits):
 * a running segment held until the reset, or one that parked until it. The card shows it while it is ahead.
 */
export function usageLimitResetOf(task: OffPeakTask, tickets: readonly TicketRecord[]): number | null {
  if (isTerminalStatus(task.status)) return null;
  let latest: number | null = null;
  for (const t of tickets)
    if (t.usageLimitResetAt != null && (latest === null || t.usageLimitResetAt > latest)) latest = t.usageLimitResetAt;
  return latest;
}

/** The account's state for the status bar: the latest reset a live task waits for, when it is still ahead; else null. */
export function accountUsageLimitResetAt(
  tasks: readonly OffPeakTask[],
  ticketsOf: (taskId: string) => readonly TicketRecord[],
  now: number,
): number | null {
  let latest: number | null = null;
  for (const task of tasks) {
    if (isTerminalStatus(task.status)) continue;
    const at = usageLimitResetOf(task, ticketsOf(task.id));
    if (at !== null && at > now && (latest === null || at > latest)) latest = at;
  }
  return latest;
}

/**
 * `asks`: the open permission questions of this task's agent, when this window runs it.
 * `unseen`: its result has not been shown by any panel yet.
 */
/** A task's check as the panel shows it (docs/flows.md#checks). */
export function checkViewOf(check: TaskCheck): CheckView {
  return {
    command: check.command,
    state: check.state,
    round: check.round,
    exitCode: check.exitCode,
    output: check.output,
    ...(check.agentChanged?.length ? { agentChanged: check.agentChanged } : {}),
  };
}

/** What became of a task's branch, as its workplace view records it: a merge or apply stays the last word after a discard. */
export function broughtHomeOf(
  workplace: { mergedAt?: number | null; appliedAt?: number | null; discardedAt?: number | null } | undefined,
): OutcomeFacts['broughtHome'] {
  if (workplace?.mergedAt != null) return 'merged';
  if (workplace?.appliedAt != null) return 'applied';
  return workplace?.discardedAt != null ? 'discarded' : null;
}

export function toTaskCard(
  task: OffPeakTask,
  tickets: readonly TicketRecord[],
  asks: readonly PendingAsk[] = [],
  unseen = false,
  followUp?: FollowUpLink,
  refusals?: RefusalCount,
  notRun?: AllowedNotRunView,
  check?: CheckView,
  personal = false,
  broughtHome?: OutcomeFacts['broughtHome'],
  mergedIn?: number | null,
): TaskCard {
  const finishedWithSession = isTerminalStatus(task.status) && task.sessionId !== null;
  const current = task.serverTicketId ? tickets.find((t) => t.ticketId === task.serverTicketId) : undefined;
  return {
    id: task.id,
    shortId: shortTaskId(task.id),
    title: task.title || task.prompt.split('\n')[0].slice(0, 200),
    autoTitle: !task.title,
    prompt: task.prompt,
    status: task.status,
    phase: cardPhaseOf(task, current, personal),
    queuePosition: task.status === 'queued' || task.status === 'paused' ? task.queuePosition : null,
    workspacePath: task.workspacePath,
    permissionMode: task.permissionMode,
    model: task.model,
    thoughtLevel: task.thoughtLevel,
    queuedAt: task.queuedAt,
    startedAt: task.startedAt,
    endedAt: task.endedAt,
    failureReason: task.failureReason,
    lastError: task.lastError,
    filesChanged: task.filesChanged,
    segments: tickets.filter((t) => t.segmentStartedAt !== null).length,
    ask: cardAskOf(task, asks),
    // Only while it runs: the segment holds its requests until the gateway answers again.
    gatewayUnreachableSince: task.status === 'running' || task.status === 'awaiting' ? (current?.gatewayUnreachableSince ?? null) : null,
    usageLimitResetAt: usageLimitResetOf(task, tickets),
    usage: totalUsage(tickets),
    unseen: unseen && (task.status === 'completed' || task.status === 'failed'),
    ...(refusals && refusals.denied > 0 ? { refusals } : {}),
    // Completed without the allowed action: not a plain success (the card offers Follow up).
    ...(notRun && task.status === 'completed' ? { allowedNotRun: notRun } : {}),
    followUpOfId: followUp?.followUpOf ?? null,
    followUpOfTitle: followUp?.ofTitle ?? null,
    afterTitle: task.afterTitle ?? null,
    ...(check ? { check } : {}),
    // A task with an open question needs input whatever its status says (src/panel/task-summary.ts: needsInput).
    outcome: outcomeOf({
      status: task.status === 'running' || task.status === 'awaiting' ? (cardAskOf(task, asks) ? 'needs_input' : task.status) : task.status,
      failureReason: task.failureReason,
      check,
      broughtHome,
      mergedIn,
    }),
    actions: {
      // The buttons offer exactly what the state machine allows (the store enforces the same table).
      pause: canTransition(task, 'pause'),
      continue: canTransition(task, 'continue'),
      edit: canEdit(task),
      cancel: canTransition(task, 'cancel'),
      delete: true,
      // docs/flows.md#follow-up, docs/flows.md#open-session
      followUp: finishedWithSession,
      // While it runs, its Terminal shows the session live.
      openSession: finishedWithSession,
    },
  };
}

/**
 * A task's usage with its follow-ups' (and theirs), which continue its work
 * (docs/flows.md#capacity-and-cost); null when it has no follow-up that used anything.
 */
export function withFollowUps(
  taskId: string,
  usageOf: (taskId: string) => SegmentUsage | null,
  links: ReadonlyMap<string, { followUpOf: string }>,
): SegmentUsage | null {
  const followers = new Map<string, string[]>();
  for (const [follower, link] of links) followers.set(link.followUpOf, [...(followers.get(link.followUpOf) ?? []), follower]);
  let total = usageOf(taskId);
  let added = false;
  const seen = new Set([taskId]);
  const queue = [...(followers.get(taskId) ?? [])];
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    if (seen.has(id)) continue;
    seen.add(id);
    const own = usageOf(id);
    if (own) {
      total = addSegmentUsage(total, own);
      added = true;
    }
    queue.push(...(followers.get(id) ?? []));
  }
  return added ? total : null;
}
