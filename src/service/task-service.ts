/**
 * The task service: one per window, the extension host's half of the admission protocol. A thin
 * facade that builds and wires the parts, each in its own module:
 *
 * - task-actions: the user's actions (create, pause, continue, edit, cancel, delete, History);
 * - bring-home: Merge, Apply, Discard and the worktree to open of a finished task;
 * - schedules: the user's actions on repeating schedules;
 * - sync-loop: the lease holder's status sync (long-poll, backoff, repairs);
 * - settle-outbox: releasing tickets, retried until the gateway acknowledges them;
 * - retaker: a new ticket with the same task id for a queued task that lost its own;
 * - task-lifecycle: the one writer of lifecycle changes, shared with the runtime;
 * - ticket-rules, lifecycle-rules: the pure rules all of them apply inside store transactions.
 *
 * vscode-free; clock, timers, gateway (base URL + key provider) and the agent stopper are injected.
 */
import type { Clock } from '../core/clock';
import { Emitter, type Event } from '../core/event';
import type { HistoryRow } from '../core/history';
import { historyRowsOf } from './history-archive';
import { newTaskId, newToken } from '../core/ids';
import type { OffPeakTask, TicketRecord } from '../core/types';
import type { GatewayClient } from '../gateway-client/client';
import type { TaskEdit, TaskStore } from '../store';
import { AvailabilitySnapshot, type AvailabilityOptions } from './availability';
import { Leadership, type LeadershipOptions } from './leadership';
import { Retaker } from './retaker';
import { SettleOutbox, type FlushReport } from './settle-outbox';
import { BackgroundWork, DEFAULT_SYNC_CONFIG, errorText, type SyncConfig } from './sync-config';
import { PollPacing, SyncLoop, type SyncReport } from './sync-loop';
import { TaskActions, type ContinueOutcome, type DeleteOptions, type TaskDeletion } from './task-actions';
import { planFollowUp, type FollowUpInput } from './follow-ups';
import { ScheduleActions } from './schedules';
import { PullRequests, type PullRequestsOptions } from './pull-requests';
import { BringHome } from './bring-home';
import path from 'node:path';
import { machineTimeZone } from '../core/zoned-time';
import { TaskLifecycle, type LifecycleWork } from './task-lifecycle';
import type { CreateTaskInput } from './ticket-rules';
import { createSystemTimers, type TimerHandle, type Timers } from '../core/timers';

export { DEFAULT_SYNC_CONFIG, type SyncConfig } from './sync-config';
export type { SyncReport } from './sync-loop';
export type { ContinueOutcome, DeleteOptions, TaskDeletion } from './task-actions';
export type { CreateTaskInput } from './ticket-rules';

export interface TaskServiceOptions {
  store: TaskStore;
  gateway: GatewayClient;
  clock: Clock;
  timers?: Timers;
  /** This window's lease holder id (random by default). */
  windowId?: string;
  newTaskId?: () => string;
  /**
   * The window's lifecycle writer, shared with its runtime (built first, so neither refers to the
   * other); a service of its own when omitted.
   */
  lifecycle?: TaskLifecycle;
  /** Stops a task's agent if one runs in this window (best effort; the runtime provides it). */
  stopAgent?: (taskId: string) => void | Promise<void>;
  sync?: Partial<SyncConfig>;
  lease?: LeadershipOptions;
  availability?: AvailabilityOptions;
  /** The zone schedules' rules are read in (default: the machine's). */
  timeZone?: () => string;
  /** A task's private runtime folder, removed with the task (default: the engine's, `runtime/tasks/<id>` beside the DB). */
  taskPrivateDir?: (taskId: string) => string;
  log?: (line: string) => void;
  /** Pull requests (docs/flows.md#pull-requests): the settings, the user's forge token, the forge API (tests: the fixture's). */
  pullRequests?: Omit<PullRequestsOptions, 'store' | 'privateDirOf'>;
}

export interface ServiceEvents {
  /** Something became schedulable (a ready/active ticket on a queued task): the scheduler should look. */
  wake: [taskId: string];
  /** A sync cycle failed as a whole (the gateway is down, answers 5xx, times out...). */
  syncError: [error: Error];
  /** A sync cycle finished. */
  synced: [report: SyncReport];
  /** A task was deleted (its row is gone): its files can go too. */
  deleted: [deletion: TaskDeletion];
}

export class TaskService {
  // A listener's failure must never break a sync cycle or a user action: it is logged.
  private readonly events: { [K in keyof ServiceEvents]: Emitter<ServiceEvents[K][0]> } = {
    wake: new Emitter((e) => this.listenerFailed('wake', e)),
    syncError: new Emitter((e) => this.listenerFailed('syncError', e)),
    synced: new Emitter((e) => this.listenerFailed('synced', e)),
    deleted: new Emitter((e) => this.listenerFailed('deleted', e)),
  };
  readonly onDidWake: Event<string> = this.events.wake.event;
  readonly onSyncError: Event<Error> = this.events.syncError.event;
  readonly onDidSync: Event<SyncReport> = this.events.synced.event;
  readonly onDidDelete: Event<TaskDeletion> = this.events.deleted.event;
  readonly availability: AvailabilitySnapshot;
  readonly leadership: Leadership;
  readonly config: SyncConfig;
  readonly lifecycle: TaskLifecycle;
  /** Repeating schedules: create, edit, pause, delete (the lease holder's sync fires them). */
  readonly schedules: ScheduleActions;
  /** Bringing a finished task's work home: Merge, Apply, Discard, its worktree (docs/flows.md#bring-it-home). */
  readonly bringHome: BringHome;
  readonly pullRequests: PullRequests;

  private readonly store: TaskStore;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly log: (line: string) => void;
  private readonly background: BackgroundWork;
  private readonly outbox: SettleOutbox;
  private readonly retaker: Retaker;
  private readonly sync: SyncLoop;
  private readonly actions: TaskActions;

  private running = false;
  private abort = new AbortController();

  constructor(private readonly options: TaskServiceOptions) {
    const { store, gateway, clock } = options;
    this.store = store;
    this.clock = clock;
    this.timers = options.timers ?? createSystemTimers();
    this.log = options.log ?? (() => {});
    const log = this.log;
    this.config = { ...DEFAULT_SYNC_CONFIG, ...options.sync };
    this.availability = new AvailabilitySnapshot(gateway, clock, this.timers, options.availability);
    this.leadership = new Leadership(store, this.timers, options.windowId ?? `window-${newToken()}`, { clock, ...options.lease });
    this.lifecycle = options.lifecycle ?? new TaskLifecycle(store, log);
    this.background = new BackgroundWork(log);
    const pacing = new PollPacing(this.config);
    const signal = () => this.abort.signal;
    const onWake = (taskId: string) => this.notify('wake', taskId);
    // The loops call each other through these arrows: queued work re-plans the sync loop.
    this.outbox = new SettleOutbox({
      store,
      gateway,
      clock,
      config: this.config,
      availability: this.availability,
      background: this.background,
      signal,
      log,
      onQueued: () => this.sync.plan(),
    });
    this.retaker = new Retaker({
      store,
      gateway,
      clock,
      config: this.config,
      availability: this.availability,
      outbox: this.outbox,
      pollDelay: pacing.delay,
      onReady: onWake,
      log,
    });
    this.sync = new SyncLoop({
      store,
      gateway,
      clock,
      timers: this.timers,
      config: this.config,
      leadership: this.leadership,
      availability: this.availability,
      pacing,
      outbox: this.outbox,
      retaker: this.retaker,
      signal,
      onWake,
      log,
      newTaskId: options.newTaskId ?? newTaskId,
      onSyncError: (error) => this.notify('syncError', error),
      onSynced: (report) => this.notify('synced', report),
    });
    this.actions = new TaskActions({
      store,
      gateway,
      clock,
      availability: this.availability,
      lifecycle: this.lifecycle,
      outbox: this.outbox,
      retaker: this.retaker,
      sync: this.sync,
      background: this.background,
      newTaskId: options.newTaskId,
      log,
      onWake,
      stopAgent: (taskId) => this.stopAgentBestEffort(taskId),
      onDeleted: (deletion) => this.notify('deleted', deletion),
    });
    this.schedules = new ScheduleActions({
      store,
      timeZone: options.timeZone ?? machineTimeZone,
      newScheduleId: newTaskId,
      plan: () => this.sync.plan(),
    });
    const privateDirOf = options.taskPrivateDir ?? ((taskId: string) => path.join(store.directory, 'runtime', 'tasks', taskId));
    this.bringHome = new BringHome({ store, privateDirOf });
    this.pullRequests = new PullRequests({
      ...options.pullRequests,
      store,
      privateDirOf,
      clock,
      log,
      track: (work) => this.background.track(work),
      followUp: (ofTaskId, input) => this.followUp(ofTaskId, input),
    });
    // The lease holder alone follows the pull requests, as it alone syncs (docs/flows.md#pull-requests).
    this.leadership.onDidTick((leader) => {
      if (!leader || !this.running) return;
      this.background.track(this.pullRequests.follow.lookDue());
      this.background.track(this.pullRequests.pushFinishedFollowUps());
    });
    // Whoever wrote the change (a user action or the runtime), its follow-up work runs here.
    this.lifecycle.onDidQueueWork((work) => this.onLifecycleWork(work));
  }

  // ------------------------------------------------------------------ lifecycle of the service

  /** Starts competing for the lease; the holder plans sync cycles from the DB. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    this.sync.start();
    await this.leadership.start();
  }

  /** Stops timers, aborts a long-poll, hands the lease back, waits for in-flight work. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.sync.stop();
    this.abort.abort();
    await this.idle();
    await this.leadership.stop();
    this.availability.dispose();
  }

  /** Resolves when no sync cycle, settle or retake started by this service is in flight. */
  async idle(): Promise<void> {
    for (;;) {
      await this.leadership.idle();
      await this.availability.idle();
      const cycle = this.sync.inflight;
      const pending = [...this.background.inFlight(), ...(cycle ? [cycle] : [])];
      if (pending.length === 0) return;
      await Promise.allSettled(pending);
    }
  }

  get isLeader(): boolean {
    return this.leadership.isLeader;
  }

  // ------------------------------------------------------------------ reads for the UI

  getTask(taskId: string): OffPeakTask | undefined {
    return this.store.read((tx) => tx.tasks.get(taskId));
  }

  listTasks(): OffPeakTask[] {
    return this.store.read((tx) => tx.tasks.list());
  }

  /** The ledger rows of a task (also after the task was deleted, until settled). */
  ticketsOf(taskId: string): TicketRecord[] {
    return this.store.read((tx) => tx.tickets.forTask(taskId));
  }

  /** History: derived from the task rows, never stored; 0 or 1 row per task. */
  history(): HistoryRow[] {
    const now = this.clock.now();
    return this.store.read((tx) => historyRowsOf(tx, now));
  }

  // ------------------------------------------------------------------ user actions (task-actions)

  create(input: CreateTaskInput): Promise<OffPeakTask> {
    return this.actions.create(input);
  }

  /**
   * "Follow up…": a new task whose first segment resumes the finished task's session with these
   * instructions, in its folder, with its agent (docs/flows.md#follow-up).
   */
  async followUp(ofTaskId: string, input: FollowUpInput): Promise<OffPeakTask> {
    const { form, link } = this.store.read((tx) => planFollowUp(tx, ofTaskId, input));
    return await this.actions.create(form, link);
  }

  pause(taskId: string): Promise<OffPeakTask> {
    return this.actions.pause(taskId);
  }

  continue(taskId: string): Promise<{ task: OffPeakTask; ticket: ContinueOutcome; error?: string }> {
    return this.actions.continue(taskId);
  }

  edit(taskId: string, patch: TaskEdit): Promise<OffPeakTask> {
    return this.actions.edit(taskId, patch);
  }

  cancel(taskId: string): Promise<OffPeakTask> {
    return this.actions.cancel(taskId);
  }

  delete(taskId: string, options: DeleteOptions = {}): Promise<boolean> {
    return this.actions.delete(taskId, options);
  }

  deleteFromHistory(taskId: string): ReturnType<TaskActions['deleteFromHistory']> {
    return this.actions.deleteFromHistory(taskId);
  }

  /** A panel showed these results: their "New" mark goes in every window. Returns how many were unseen. */
  markSeen(taskIds: readonly string[]): Promise<number> {
    return this.store.mutate((tx) => tx.outcomes.markSeen(taskIds));
  }

  // ------------------------------------------------------------------ loops (sync-loop, settle-outbox)

  /** Runs one sync cycle now if this window holds the lease (single-flight). */
  syncNow(): Promise<SyncReport> {
    return this.sync.syncNow();
  }

  /** When the next cycle is due, from the DB; undefined when there is nothing to do. */
  nextDueAt(): number | undefined {
    return this.sync.nextDueAt();
  }

  /** Sends due outbox rows (or just `only`); see SettleOutbox.flush. */
  flushOutbox(only?: string[]): Promise<FlushReport> {
    return this.outbox.flush(only);
  }

  // ------------------------------------------------------------------ helpers

  private onLifecycleWork(work: LifecycleWork): Promise<boolean> | undefined {
    if (work.kind === 'settle') {
      this.outbox.settleSoon(work.ticketIds);
      return undefined;
    }
    const retaken = this.retaker.retake(work.taskId).then((ok) => {
      this.sync.plan({ restartLongPoll: true });
      return ok;
    });
    this.background.track(retaken);
    return retaken;
  }

  /** A listener's failure must never break a sync cycle or a user action. */
  private notify<K extends keyof ServiceEvents>(event: K, ...[value]: ServiceEvents[K]): void {
    (this.events[event] as Emitter<ServiceEvents[K][0]>).fire(value);
  }

  private listenerFailed(event: keyof ServiceEvents, e: unknown): void {
    this.log(`a ${event} listener failed: ${errorText(e)}`);
  }

  private async stopAgentBestEffort(taskId: string): Promise<void> {
    const stop = this.options.stopAgent;
    if (!stop) return;
    let timer: TimerHandle | undefined;
    try {
      await Promise.race([
        Promise.resolve().then(() => stop(taskId)),
        new Promise<void>((resolve) => {
          timer = this.timers.setTimeout(resolve, this.config.stopAgentTimeoutMs);
        }),
      ]);
    } catch (e) {
      this.log(`stopping the agent of ${taskId} failed (the task is cancelled anyway): ${errorText(e)}`);
    } finally {
      this.timers.clearTimeout(timer);
    }
  }
}
