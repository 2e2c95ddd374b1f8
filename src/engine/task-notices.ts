// Who tells the user that a task finished, failed or needs input, when several VS Code windows
// share one task DB. Each event must be notified once across all windows, not once per window
// and not never:
//   - a completed or failed result is claimed in the DB (tx.outcomes.claimNotice: one winner
//     across windows). The window that ran the task claims it at once, as it wrote the result;
//     that covers failures before the agent started (workspace gone, agent binary missing), which
//     that window writes too. The lease holder claims what is still unclaimed after a grace
//     period (the running window crashed or closed first), so no result goes unnotified while a
//     window is open; what finished while none was open keeps its "New" mark instead;
//   - a permission question lives only in the memory of the window whose agent asks, so that
//     window alone can notify it, once.
// vscode-free: the VS Code notifier (src/vscode/notifier.ts) shows what this decides.
import type { PendingAsk } from '../agent/questions/asks';
import type { RuntimeEvent } from '../agent/runtime/task-runtime';
import type { Clock } from '../core/clock';
import { shortTaskTitle } from '../core/task-title';
import { CoalescingRun } from '../core/single-flight';
import { outcomeOf, type Outcome } from '../core/outcome';
import { createSystemTimers, type TimerHandle, type Timers } from '../core/timers';
import { outcomeFactsOf } from '../service/outcome-facts';
import { changeConcerns, type TaskStore, type UnnotifiedOutcome } from '../store';

/** Questions the task's agent was denied (docs/flows.md#questions-park-the-task): a result notice says so. */
export interface NoticeRefusals {
  denied: number;
  automatic: number;
}

export type TaskNotice =
  /** `outcome`: completed, ready for review (its check passed) or check failed (src/core/outcome.ts). */
  | { kind: 'completed'; taskId: string; title: string; outcome: Outcome; refusals?: NoticeRefusals }
  | { kind: 'failed'; taskId: string; title: string; reason: string; refusals?: NoticeRefusals }
  | { kind: 'input-needed'; taskId: string; title: string; ask: PendingAsk };

export interface TaskNoticesOptions {
  store: TaskStore;
  windowId: string;
  isLeader: () => boolean;
  clock: Clock;
  timers?: Timers;
  /** How long the lease holder leaves an unclaimed result to the window that ran the task (default 10 s). */
  leaderGraceMs?: number;
  onNotice: (notice: TaskNotice) => void;
  log?: (line: string) => void;
}

export const DEFAULT_LEADER_GRACE_MS = 10_000;

/** "2 actions denied (1 automatically)", or '' when nothing was denied. */
export function refusalSentence(r: NoticeRefusals | undefined): string {
  if (!r || r.denied === 0) return '';
  return `${r.denied} action${r.denied === 1 ? '' : 's'} denied${r.automatic > 0 ? ` (${r.automatic} automatically)` : ''}`;
}

function noticeOf(
  outcome: UnnotifiedOutcome,
  refusals: NoticeRefusals | undefined,
  check: { state: string; round: number } | undefined,
): TaskNotice {
  const title = shortTaskTitle(outcome, outcome.taskId);
  const denied = refusals && refusals.denied > 0 ? { refusals } : {};
  return outcome.outcome === 'failed'
    ? { kind: 'failed', taskId: outcome.taskId, title, reason: outcome.failureReason ?? 'the task failed', ...denied }
    : { kind: 'completed', taskId: outcome.taskId, title, outcome: outcomeOf({ status: 'completed', check }), ...denied };
}

export class TaskNotices {
  /** Tasks this window's runtime was given to run: their results are this window's to notify. */
  private readonly ranHere = new Set<string>();
  private readonly timers: Timers;
  private readonly graceMs: number;
  private readonly log: (line: string) => void;
  private subscription: { dispose(): void } | undefined;
  private graceTimer: TimerHandle | undefined;
  private readonly scans = new CoalescingRun(
    () => this.scanOnce(),
    (e) => this.log(`notices: ${e instanceof Error ? e.message : String(e)}`),
  );
  private disposed = false;
  /** When this window started: results that ended earlier are not the lease holder's to notify. */
  private readonly startedAt: number;

  constructor(private readonly options: TaskNoticesOptions) {
    this.startedAt = options.clock.now();
    this.timers = options.timers ?? createSystemTimers();
    this.graceMs = options.leaderGraceMs ?? DEFAULT_LEADER_GRACE_MS;
    this.log = options.log ?? (() => {});
  }

  start(): void {
    this.subscription = this.options.store.onDidChange((change) => {
      if (changeConcerns(change, 'tasks')) this.scan();
    });
    this.scan();
  }

  /** This window's runtime is about to run (or fail to start) the task. */
  noteRunHere(taskId: string): void {
    this.ranHere.add(taskId);
  }

  /** A runtime event of this window: a permission question is notified here and only here. */
  runtimeEvent(event: RuntimeEvent): void {
    if (event.type !== 'input-needed' || this.disposed) return;
    const task = this.options.store.read((tx) => tx.tasks.get(event.taskId));
    this.emit({ kind: 'input-needed', taskId: event.taskId, title: shortTaskTitle(task, event.taskId), ask: event.ask });
  }

  /**
   * Its pull request was merged on the forge (docs/flows.md#pull-requests): told by the window that
   * recorded it (the lease holder, once), in the outcome's words, "merged in #123".
   */
  pullRequestMerged(taskId: string): void {
    if (this.disposed) return;
    const notice = this.options.store.read((tx) => {
      const task = tx.tasks.get(taskId);
      if (!task) return undefined;
      const facts = outcomeFactsOf(tx).get(taskId);
      const outcome = outcomeOf({ status: task.status, failureReason: task.failureReason, check: tx.checks.get(taskId), ...facts });
      return { kind: 'completed' as const, taskId, title: shortTaskTitle(task, taskId), outcome };
    });
    if (notice) this.emit(notice);
  }

  /** Looks for unclaimed results and claims those this window should notify (single-flight). */
  scan(): void {
    if (!this.disposed) this.scans.request();
  }

  /** Resolves when no scan or claim is in flight. */
  idle(): Promise<void> {
    return this.scans.idle();
  }

  dispose(): void {
    this.disposed = true;
    this.subscription?.dispose();
    this.timers.clearTimeout(this.graceTimer);
  }

  private async scanOnce(): Promise<void> {
    const { store, clock } = this.options;
    const unclaimed = store.read((tx) => tx.outcomes.unnotified());
    const now = clock.now();
    let nextDue: number | undefined;
    const claimNow: UnnotifiedOutcome[] = [];
    for (const outcome of unclaimed) {
      if (this.ranHere.has(outcome.taskId)) {
        claimNow.push(outcome);
        continue;
      }
      // The lease holder stands in only for a window that went away while this one was open: a
      // result that ended before this window started waits for the user with its "New" mark
      // (a window opened after a week away does not replay a week of toasts).
      if (!this.options.isLeader() || (outcome.endedAt ?? 0) < this.startedAt) continue;
      const due = (outcome.endedAt ?? now) + this.graceMs;
      if (due <= now) claimNow.push(outcome);
      else nextDue = nextDue === undefined ? due : Math.min(nextDue, due);
    }
    if (claimNow.length > 0 && !this.disposed) {
      // One transaction for all of them: each claim still has exactly one winner across windows.
      const won = await store.mutate((tx) => claimNow.filter((o) => tx.outcomes.claimNotice(o.taskId, this.options.windowId)));
      for (const o of claimNow) this.ranHere.delete(o.taskId);
      const { refusals, checks } = store.read((tx) => ({ refusals: tx.questions.denials(), checks: tx.checks.all() }));
      for (const o of won) this.emit(noticeOf(o, refusals.get(o.taskId), checks.get(o.taskId)));
    }
    this.timers.clearTimeout(this.graceTimer);
    this.graceTimer = undefined;
    if (nextDue !== undefined && !this.disposed)
      this.graceTimer = this.timers.setTimeout(() => this.scan(), Math.max(0, nextDue - clock.now()));
  }

  private emit(notice: TaskNotice): void {
    try {
      this.options.onNotice(notice);
    } catch (e) {
      this.log(`notices: a listener failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
