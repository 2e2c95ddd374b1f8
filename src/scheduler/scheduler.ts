/**
 * The scheduler (docs/flows.md#dispatch): runs only in the lease holder's window.
 *
 * - claim: queued + schedulable + unclaimed (or a zombie claim older than 10 min), in ONE locked
 *   store transaction, so two schedulers (windows, processes) never dispatch a task twice; a task
 *   that runs in place waits while another in-place task runs in its folder;
 *   a queued task whose CURRENT ticket is still ready/active in the ledger (a segment interrupted
 *   by a restart) counts as schedulable: it is dispatched again at once with that ticket;
 * - dispatch: to the window that has the task's workspace open, else the lease holder's window
 *   (the Dispatcher decides; see window-dispatcher.ts); the window's runtime marks the task
 *   running through the guarded transition (refused after Pause/Cancel);
 * - failed dispatch: the claim is released, the task stays queued, backoff 30 s doubling to
 *   15 min, persisted;
 * - stop(): claims still in flight are released (a crash leaves them to the 10-min zombie rule).
 */
import type { Clock } from '../core/clock';
import type { OffPeakTask } from '../core/types';
import { ZOMBIE_CLAIM_MS, type StoreReadTx, type StoreTx, type TaskStore } from '../store';
import { createSystemTimers, type TimerHandle, type Timers } from '../core/timers';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from './dispatch-backoff';

export type DispatchResult =
  /** A window accepted the task and marked it running. */
  | { status: 'started'; windowId?: string }
  /** The guarded markRunning refused (the task was paused/cancelled/changed meanwhile): nothing to retry. */
  | { status: 'refused'; reason: string }
  /** No window could take it now (transient): back off and retry. */
  | { status: 'failed'; error: string }
  /** The task can never run (e.g. its workspace is gone): the runtime already failed it. */
  | { status: 'fatal'; error: string };

export interface Dispatcher {
  dispatch(task: OffPeakTask): Promise<DispatchResult>;
}

export interface SchedulerOptions {
  store: TaskStore;
  dispatcher: Dispatcher;
  clock: Clock;
  /** Only the lease holder schedules. */
  isLeader: () => boolean;
  timers?: Timers;
  zombieAfterMs?: number;
  backoff?: Partial<BackoffPolicy>;
  /**
   * Safety net re-check when nothing else wakes the scheduler. Default 30 s. Infinity: none (the
   * caller ticks it on a heartbeat of its own); time-based dues (a backoff ending, a claim turning
   * zombie) still get their timer.
   */
  idleTickMs?: number;
  /** Claims per tick (default: all due). */
  maxClaimsPerTick?: number;
  log?: (line: string) => void;
}

export interface TickReport {
  skipped?: 'not_leader' | 'stopped' | 'busy';
  claimed: string[];
  started: string[];
  failed: string[];
  releasedZombies: number;
}

/**
 * The due tasks that may be claimed now: an in-place task (docs/flows.md#isolation) waits while
 * another in-place task runs (or is claimed) in its folder; a task on its own branch never waits.
 */
function claimable(tx: Pick<StoreReadTx, 'isolation'>, due: OffPeakTask[]): OffPeakTask[] {
  return due.filter((task) => tx.isolation.inPlaceHolder(task.id, task.workspaceKey) === undefined);
}

export class Scheduler {
  private readonly timers: Timers;
  private readonly zombieAfterMs: number;
  private readonly backoff: BackoffPolicy;
  private readonly idleTickMs: number;
  private readonly log: (line: string) => void;
  private readonly inFlight = new Set<string>();
  private readonly dispatches = new Set<Promise<void>>();
  private tickRunning: Promise<TickReport> | undefined;
  private tickAgain = false;
  private timer: TimerHandle | undefined;
  private running = false;
  /**
   * After a read found nothing to do: the DB generation it read, and the first moment time alone
   * could make something due (a backoff ending, a claim turning zombie). Until then, an unchanged
   * generation means nothing can be due, so a tick skips the read of the task table.
   */
  private quiet: { generation: string; until: number } | undefined;

  constructor(private readonly options: SchedulerOptions) {
    this.timers = options.timers ?? createSystemTimers();
    this.zombieAfterMs = options.zombieAfterMs ?? ZOMBIE_CLAIM_MS;
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.idleTickMs = options.idleTickMs ?? 30_000;
    this.log = options.log ?? (() => {});
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.wake();
  }

  /** Something may have become schedulable (service `wake`, a ready ticket, a new window): tick soon. */
  wake(): void {
    if (!this.running) return;
    if (this.tickRunning) {
      this.tickAgain = true;
      return;
    }
    this.schedule(0);
  }

  /** Task ids claimed by this scheduler whose dispatch has not answered yet. */
  get inFlightClaims(): readonly string[] {
    return [...this.inFlight];
  }

  /** One scheduling round now (single-flight). Resolves after the claims were made, not after the dispatches. */
  tick(): Promise<TickReport> {
    if (this.tickRunning) {
      this.tickAgain = true;
      return this.tickRunning;
    }
    const run = this.runTick().finally(() => {
      this.tickRunning = undefined;
      if (this.tickAgain) {
        this.tickAgain = false;
        this.schedule(0);
      } else {
        this.planNext();
      }
    });
    this.tickRunning = run;
    return run;
  }

  /** Resolves when every dispatch started by this scheduler has answered. */
  async idle(): Promise<void> {
    while (this.tickRunning || this.dispatches.size > 0) {
      await this.tickRunning?.catch(() => undefined);
      await Promise.allSettled([...this.dispatches]);
    }
  }

  /** Clean exit: stop ticking and release the claims still in flight. */
  async stop(): Promise<void> {
    this.running = false;
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await this.tickRunning?.catch(() => undefined);
    const ids = [...this.inFlight];
    if (ids.length === 0) return;
    await this.options.store
      .mutate((tx) => ids.forEach((id) => tx.tasks.releaseClaim(id)))
      .catch((err: unknown) => this.log(`scheduler: could not release claims on exit: ${(err as Error).message}`));
  }

  private schedule(delayMs: number): void {
    if (!this.running) return;
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    if (!Number.isFinite(delayMs)) return; // nothing due and no safety-net tick
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      void this.tick();
    }, delayMs);
  }

  private planNext(): void {
    if (!this.running) return;
    const now = this.options.clock.now();
    let due = now + this.idleTickMs;
    // Only the lease holder schedules (a new holder is woken); the others need not read backoffs.
    if (this.quiet || !this.options.isLeader()) {
      // the read that found nothing due also found when time alone makes something due
      this.schedule(Math.max(0, Math.min(due, this.quiet?.until ?? due) - now));
      return;
    }
    try {
      const backoffEnd = this.options.store.read((tx) => tx.dispatch.nextEnd());
      if (backoffEnd !== undefined && backoffEnd < due) due = backoffEnd;
    } catch {
      // a read failure only costs a slower tick
    }
    this.schedule(Math.max(0, due - now));
  }

  private async runTick(): Promise<TickReport> {
    const report: TickReport = { claimed: [], started: [], failed: [], releasedZombies: 0 };
    if (!this.running) return { ...report, skipped: 'stopped' };
    if (!this.options.isLeader()) return { ...report, skipped: 'not_leader' };
    // Reading first keeps an idle scheduler from taking the file lock and writing every tick.
    const store = this.options.store;
    if (
      this.quiet &&
      !store.checkForExternalChange() &&
      this.quiet.generation === store.generation &&
      this.options.clock.now() < this.quiet.until
    )
      return report;
    this.quiet = undefined;
    const zombie = { zombieAfterMs: this.zombieAfterMs };
    const idle = store.read((tx) => {
      if (tx.tasks.countZombieClaims(zombie) > 0 || claimable(tx, tx.tasks.dueForDispatch(zombie)).length > 0) return undefined;
      const oldestClaim = tx.tasks.oldestClaimAt();
      const ends = [tx.dispatch.nextEnd(), oldestClaim === undefined ? undefined : oldestClaim + this.zombieAfterMs];
      return { until: Math.min(...ends.map((t) => t ?? Infinity)) };
    });
    if (idle) {
      const generation = store.generation;
      if (generation !== undefined) this.quiet = { generation, until: idle.until };
      return report;
    }

    const claimed = await this.options.store.mutate((tx) => this.claimDue(tx, report));
    report.claimed = claimed.map((t) => t.id);
    for (const task of claimed) {
      this.inFlight.add(task.id);
      const dispatch = this.dispatchOne(task, report).finally(() => {
        this.inFlight.delete(task.id);
        this.dispatches.delete(dispatch);
      });
      this.dispatches.add(dispatch);
    }
    return report;
  }

  /** One transaction: release zombie claims, then claim what is due through the one guarded claim. */
  private claimDue(tx: StoreTx, report: TickReport): OffPeakTask[] {
    const zombie = { zombieAfterMs: this.zombieAfterMs };
    report.releasedZombies = tx.tasks.releaseZombieClaims(zombie);
    const claimed: OffPeakTask[] = [];
    const limit = this.options.maxClaimsPerTick ?? Infinity;
    for (const task of tx.tasks.dueForDispatch(zombie)) {
      if (claimed.length >= limit) break;
      // One in-place agent per folder: checked per task, so a claim made just above counts.
      if (claimable(tx, [task]).length === 0) continue;
      if (tx.tasks.claim(task.id, zombie)) claimed.push({ ...task, claimRunning: true, claimedAt: tx.now });
    }
    return claimed;
  }

  private async dispatchOne(task: OffPeakTask, report: TickReport): Promise<void> {
    let result: DispatchResult;
    try {
      result = await this.options.dispatcher.dispatch(task);
    } catch (err) {
      result = { status: 'failed', error: (err as Error).message || String(err) };
    }
    try {
      if (result.status === 'started') {
        report.started.push(task.id);
        if (this.options.store.read((tx) => tx.dispatch.get(task.id) !== undefined)) {
          await this.options.store.mutate((tx) => tx.dispatch.clear(task.id));
        }
      } else if (result.status === 'failed') {
        report.failed.push(task.id);
        const backoff = await this.options.store.mutate((tx) => {
          tx.tasks.releaseClaim(task.id, { error: result.error });
          return tx.dispatch.recordFailure(task.id, result.error, (failures) => backoffDelay(this.backoff, failures));
        });
        this.log(
          `scheduler: dispatch of ${task.id} failed (${result.error}); retry after ${new Date(backoff.nextDispatchAt).toISOString()}`,
        );
        // The backoff's end is a time-based due: plan for it now, not at whatever tick comes next.
        if (!this.tickRunning) this.planNext();
      } else {
        // refused / fatal: nothing to retry; make sure no claim is left behind.
        await this.options.store.mutate((tx) => {
          tx.tasks.releaseClaim(task.id);
          tx.dispatch.clear(task.id);
        });
      }
    } catch (err) {
      this.log(`scheduler: could not record the dispatch of ${task.id}: ${(err as Error).message}`);
    }
  }
}
