/**
 * The task service (docs/flows.md): the extension host's
 * half of the admission protocol. vscode-free; clock, timers, gateway (base URL + key provider)
 * and the agent stopper are injected.
 *
 * - create: availability -> take (random task id) -> ledger row -> INSERT the task;
 * - sync (lease holder only): settle outbox first, then status of due live tickets in batches of
 *   <= 100, applied per state, repairing dead tickets of queued tasks;
 * - pause / continue / edit / cancel / delete / delete-from-History;
 * - the settle outbox on the ticket ledger, surviving task deletion and restarts;
 * - hooks for the runtime (segment started/admitted/expired/ended, terminal settle).
 */
import type { Clock } from '../core/clock';
import { deriveHistoryRow, type HistoryRow } from '../core/history';
import { newTaskId, newToken } from '../core/ids';
import { NON_TERMINAL_STATUSES, PERMISSION_MODES, isTerminalStatus, type OffPeakTask, type SegmentEndReason, type ServerTicketState, type TaskStatus, type TicketRecord } from '../core/types';
import type { GatewayClient, TakeResult } from '../gateway-client/client';
import { isGatewayError, type GatewayError } from '../gateway-client/errors';
import { SettleReasonSchema, isLiveTicketState, type SettleReason, type TicketStatusEntry } from '../protocol/gateway';
import { changeConcerns, type NewTaskInput, type StoreTx, type TaskEdit, type TaskStore, type TerminalDetails } from '../store';
import { AvailabilitySnapshot, type AvailabilityOptions } from './availability';
import { ServiceError, toServiceError } from './errors';
import { Leadership, type LeadershipOptions } from './leadership';
import { Emitter, type Event } from '../core/event';
import { createSystemTimers, type TimerHandle, type Timers } from '../core/timers';

export interface SyncConfig {
  /** Tickets per status request (the protocol allows at most 100). */
  batchSize: number;
  /** Next poll of a live ticket whose answer carried no hint. */
  fallbackPollMs: number;
  /** Tickets due within this window are polled together with the due ones. */
  coalesceMs: number;
  /** Whole-cycle failure backoff: first delay, doubling, capped. */
  backoffMs: number;
  backoffMaxMs: number;
  /** Settle retry backoff per ticket. */
  settleBackoffMs: number;
  settleBackoffMaxMs: number;
  /** Retake retry backoff per ticketless queued task. */
  retakeBackoffMs: number;
  retakeBackoffMaxMs: number;
  /** Long-poll hold (`wait_ms`) when all due tickets fit in one request; 0 = never long-poll. */
  longPollMs: number;
  /** How long cancel waits for the agent stopper before moving on. */
  stopAgentTimeoutMs: number;
}

export const DEFAULT_SYNC_CONFIG: SyncConfig = {
  batchSize: 100,
  fallbackPollMs: 5 * 60_000,
  coalesceMs: 5_000,
  backoffMs: 10_000,
  backoffMaxMs: 5 * 60_000,
  settleBackoffMs: 10_000,
  settleBackoffMaxMs: 5 * 60_000,
  retakeBackoffMs: 10_000,
  retakeBackoffMaxMs: 5 * 60_000,
  longPollMs: 25_000,
  stopAgentTimeoutMs: 5_000,
};

/** The task's form: what the user fills in (the store's insert input minus ids and snapshots). */
export type CreateTaskInput = Pick<NewTaskInput, 'title' | 'prompt' | 'permissionMode' | 'model' | 'thoughtLevel' | 'workspacePath' | 'workspaceIdentity'>;

export interface TaskServiceOptions {
  store: TaskStore;
  gateway: GatewayClient;
  clock: Clock;
  timers?: Timers;
  /** This window's lease holder id (random by default). */
  windowId?: string;
  newTaskId?: () => string;
  /** Stops a task's agent if one runs in this window (best effort; the runtime provides it). */
  stopAgent?: (taskId: string) => void | Promise<void>;
  sync?: Partial<SyncConfig>;
  lease?: LeadershipOptions;
  availability?: AvailabilityOptions;
  log?: (line: string) => void;
}

export interface SyncReport {
  skipped?: 'not_leader' | 'stopped';
  statusRequests: number;
  ticketsPolled: number;
  settleAttempts: number;
  settled: number;
  retakes: number;
  woke: string[];
  error?: string;
}

export type ContinueOutcome = 'reused' | 'retaken' | 'retake_pending';

export interface ServiceEvents {
  /** Something became schedulable (a ready/active ticket on a queued task): the scheduler should look. */
  wake: [taskId: string];
  /** A sync cycle failed as a whole (the gateway is down, answers 5xx, times out...). */
  syncError: [error: Error];
  /** A sync cycle finished. */
  synced: [report: SyncReport];
  /** A task was deleted (its row is gone): its files can go too. */
  deleted: [task: OffPeakTask];
}

/** Floor between two long-polls of a queued ticket (see pollDelay). */
const LONG_POLL_REPOLL_MS = 1_000;
/** Prefix of a task's last_error while its retake keeps failing (cleared by the next success). */
const RETAKE_FAILED = 'retake failed:';

const NON_TERMINAL: readonly TaskStatus[] = NON_TERMINAL_STATUSES;
const LIVE_SERVER = ['queued', 'ready', 'active'] as const;

/** A settle answer that means "acknowledged" (docs/flows.md#settle: 2xx or 4xx) vs worth retrying. */
function settleAcknowledgedBy(e: GatewayError): boolean {
  const s = e.status;
  return s !== undefined && s >= 400 && s < 500 && s !== 401 && s !== 403 && s !== 408 && s !== 429;
}

function isTransportFailure(e: unknown): boolean {
  return isGatewayError(e) && (e.kind === 'network' || e.kind === 'timeout' || e.kind === 'server_error' || e.kind === 'aborted');
}

function backoff(base: number, max: number, attempt: number): number {
  return Math.min(max, base * 2 ** Math.max(0, Math.min(attempt, 30)));
}

function settleReasonOf(stored: string | null): SettleReason {
  const parsed = SettleReasonSchema.safeParse(stored);
  return parsed.success ? parsed.data : 'abandoned';
}

function message(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).slice(0, 500);
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
  readonly onDidDelete: Event<OffPeakTask> = this.events.deleted.event;
  readonly availability: AvailabilitySnapshot;
  readonly leadership: Leadership;
  readonly config: SyncConfig;

  private readonly store: TaskStore;
  private readonly gateway: GatewayClient;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly makeTaskId: () => string;
  private readonly log: (line: string) => void;

  private running = false;
  private cycleTimer: TimerHandle | undefined;
  private cycleInflight: Promise<SyncReport> | undefined;
  private replanAfterCycle = false;
  /** The DB generation at which the last plan found nothing to do (no live ticket, nothing queued). */
  private idleAtGeneration: string | undefined;
  private cycleFailures = 0;
  private backoffUntil = 0;
  private longPoll: boolean;
  /** Aborts the long-poll in flight so the next one includes a ticket that just appeared. */
  private longPollRestart: AbortController | undefined;
  /** The live tickets known when the long-poll in flight started (a new one restarts it). */
  private longPollIds = new Set<string>();
  private liveTicketsFitOneLongPoll = true;
  private abort = new AbortController();
  private readonly background = new Set<Promise<unknown>>();
  private readonly settlesInflight = new Set<string>();
  private readonly retakesInflight = new Map<string, Promise<{ ok: boolean; error?: unknown }>>();
  /** Ticketless queued tasks: when to try the retake again (in memory; a restart retries at once). */
  private readonly retakeNotBefore = new Map<string, { at: number; attempts: number }>();
  private disposables: { dispose(): void }[] = [];

  constructor(private readonly options: TaskServiceOptions) {
    this.store = options.store;
    this.gateway = options.gateway;
    this.clock = options.clock;
    this.timers = options.timers ?? createSystemTimers();
    this.makeTaskId = options.newTaskId ?? newTaskId;
    this.log = options.log ?? (() => {});
    this.config = { ...DEFAULT_SYNC_CONFIG, ...options.sync };
    this.longPoll = this.config.longPollMs > 0;
    this.availability = new AvailabilitySnapshot(this.gateway, this.clock, this.timers, options.availability);
    this.leadership = new Leadership(this.store, this.timers, options.windowId ?? `window-${newToken()}`, { clock: this.clock, ...options.lease });
  }

  // ------------------------------------------------------------------ lifecycle

  /** Starts competing for the lease; the holder plans sync cycles from the DB. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    // The lease tick re-plans as a safety net; with nothing to do and no row changed since, it has nothing to find.
    const onTick = (leader: boolean) => {
      if (!leader) {
        this.idleAtGeneration = undefined;
        this.clearCycleTimer();
        return;
      }
      try {
        this.store.checkForExternalChange();
      } catch {
        this.idleAtGeneration = undefined; // store closing or unreadable: plan() reports it
      }
      if (this.idleAtGeneration === undefined || this.idleAtGeneration !== this.store.generation || this.cycleInflight) this.plan();
    };
    this.disposables.push(this.leadership.onDidTick(onTick));
    // Another window's write (a create, a cancel) may add work: the leader re-plans.
    this.disposables.push(
      this.store.onDidChange((change) => {
        if (change.origin === 'external' && changeConcerns(change, 'tasks', 'tickets') && this.leadership.isLeader) this.plan({ restartLongPoll: true });
      }),
    );
    await this.leadership.start();
  }

  /** Stops timers, aborts a long-poll, hands the lease back, waits for in-flight work. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.clearCycleTimer();
    this.abort.abort();
    for (const d of this.disposables) d.dispose();
    this.disposables = [];
    await this.idle();
    await this.leadership.stop();
    this.availability.dispose();
  }

  /** Resolves when no sync cycle, settle or retake started by this service is in flight. */
  async idle(): Promise<void> {
    for (;;) {
      await this.leadership.idle();
      await this.availability.idle();
      const pending = [...this.background, ...(this.cycleInflight ? [this.cycleInflight] : [])];
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

  /** History (docs/flows.md#cancel-delete-history): derived from the task rows, never stored; 0 or 1 row per task. */
  history(): HistoryRow[] {
    const now = this.clock.now();
    return this.store
      .read((tx) => tx.tasks.list({ historyVisible: true }))
      .map((t) => deriveHistoryRow(t, now))
      .filter((r): r is HistoryRow => r !== undefined)
      .sort((a, b) => b.triggeredAt - a.triggeredAt);
  }

  // ------------------------------------------------------------------ create (docs/flows.md#create)

  async create(input: CreateTaskInput): Promise<OffPeakTask> {
    validateCreate(input);
    if (!(await this.gateway.hasApiKey())) throw new ServiceError('no_api_key', 'Cannot create the task: no gateway API key is set.');

    if (!this.availability.isFresh()) await this.availability.refresh();
    const a = this.availability.state;
    if (a.status === 'disabled') {
      if (a.reason === 'not_eligible') throw new ServiceError('not_eligible', 'Cannot create the task: your plan is not eligible for off-peak tasks.');
      throw new ServiceError(
        'limit_reached',
        `Cannot create the task: no off-peak ticket can be taken${a.nextTakeAt ? ` until ${new Date(a.nextTakeAt).toISOString()}` : ' right now'}.`,
        { nextTakeAt: a.nextTakeAt },
      );
    }
    if (a.status === 'error' || a.status === 'unknown') {
      throw new ServiceError('gateway_unavailable', `Cannot create the task now: ${a.status === 'error' ? a.message : 'availability unknown'}`);
    }

    const taskId = this.makeTaskId();
    let take: TakeResult;
    try {
      take = await this.takeRetrySafe(taskId);
    } catch (e) {
      if (isGatewayError(e) && e.kind === 'limit_reached') this.availability.noteLimitReached(e.nextTakeAt);
      throw toServiceError('create the task', e);
    }

    // The ledger row first, persisted on its own: if the INSERT below fails, the outbox still
    // knows the ticket and settles it (an orphan ticket).
    try {
      await this.store.mutate((tx) => tx.tickets.insert(this.ledgerInput(tx, taskId, take)));
    } catch (e) {
      const owner = this.safeRead((tx) => tx.tickets.get(take.ticketId)?.taskId);
      if (owner !== undefined && owner !== taskId) {
        // The answer names a ticket another task holds: never settle someone else's ticket.
        throw new ServiceError('gateway_rejected', `Cannot create the task: the gateway answered with ticket ${take.ticketId}, which belongs to another task.`, { cause: e });
      }
      this.track(this.settleUnrecorded(take.ticketId));
      throw toServiceError('create the task', e);
    }

    const live = isLiveTicketState(take.state);
    let task: OffPeakTask;
    try {
      task = await this.store.mutate((tx) => {
        const inserted = tx.tasks.insert({
          id: taskId,
          title: input.title,
          prompt: input.prompt,
          permissionMode: input.permissionMode,
          model: input.model ?? null,
          thoughtLevel: input.thoughtLevel ?? null,
          workspacePath: input.workspacePath,
          workspaceIdentity: input.workspaceIdentity ?? null,
          serverTicketId: live ? take.ticketId : null,
          registeredAt: live ? tx.now : null,
          schedulable: take.state === 'ready' || take.state === 'active',
          queuePosition: take.state === 'queued' ? take.position : null,
          nextPollAt: live ? tx.now + this.pollDelay(take.state, take.nextPollAfterMs) : null,
        });
        if (!live) this.retireDeadTicket(tx, take.ticketId, take.state);
        return inserted;
      });
    } catch (e) {
      await this.store
        .mutate((tx) => {
          tx.tickets.endSegment(take.ticketId, 'orphan', message(e));
          tx.tickets.requestSettle(take.ticketId, 'orphan');
        })
        .catch(() => this.track(this.settleUnrecorded(take.ticketId)));
      this.settleSoon([take.ticketId]);
      throw toServiceError('create the task', e);
    }

    if (!live) {
      // An abnormal take answer (docs/flows.md#create): the task exists without a ticket; retake now, and
      // if that fails the sync keeps retrying. Never left stalled.
      this.track(this.retake(taskId));
    } else if (task.schedulable) {
      this.notify('wake', taskId);
    }
    this.plan({ restartLongPoll: true });
    return task;
  }

  // ------------------------------------------------------------------ pause / continue / edit (docs/flows.md#pause-continue-edit)

  /** queued & unclaimed -> paused. Only local dispatch stops; the ticket keeps its place. */
  async pause(taskId: string): Promise<OffPeakTask> {
    const ok = await this.store.mutate((tx) => tx.tasks.pause(taskId));
    if (!ok) throw this.refusal(taskId, 'pause', 'only a queued task that is not being dispatched can be paused');
    return this.getTask(taskId)!;
  }

  /**
   * paused -> queued. An alive ticket is reused at no cost; a dead or missing one is retaken
   * with the same task id. A failed status check counts as alive (no quota spent on a guess;
   * the sync repairs it if it was dead after all).
   */
  async continue(taskId: string): Promise<{ task: OffPeakTask; ticket: ContinueOutcome; error?: string }> {
    const task = this.getTask(taskId);
    if (!task) throw new ServiceError('not_found', `No task ${taskId}.`);
    if (task.status !== 'paused') throw new ServiceError('not_allowed', `Cannot continue a ${task.status} task: only a paused task can be continued.`);

    const ticketId = task.serverTicketId;
    const ledger = ticketId ? this.store.read((tx) => tx.tickets.get(ticketId)) : undefined;
    let entry: TicketStatusEntry | undefined;
    let alive: boolean;
    if (!ticketId) alive = false;
    else if (ledger && (ledger.settleState !== 'none' || !isLiveTicketState(ledger.serverState))) alive = false;
    else {
      try {
        entry = (await this.gateway.status([ticketId])).tickets[0];
        alive = isLiveTicketState(entry.state);
      } catch (e) {
        this.log(`continue ${taskId}: status check failed, treating the ticket as alive: ${message(e)}`);
        alive = true;
      }
    }

    const ok = await this.store.mutate((tx) => {
      if (!tx.tasks.continue(taskId)) return false;
      if (entry && ticketId) this.applyEntry(tx, taskId, entry);
      if (!alive && ticketId) {
        if (!entry) this.retireDeadTicket(tx, ticketId, undefined);
        tx.tasks.clearTicket(taskId, ticketId);
      }
      return true;
    });
    if (!ok) throw this.refusal(taskId, 'continue', 'only a paused task can be continued');

    if (alive) {
      const now = this.getTask(taskId)!;
      if (now.schedulable) this.notify('wake', taskId);
      this.plan();
      return { task: now, ticket: 'reused' };
    }
    const retaken = await this.retake(taskId);
    this.plan({ restartLongPoll: true });
    const after = this.getTask(taskId)!;
    return retaken ? { task: after, ticket: 'retaken' } : { task: after, ticket: 'retake_pending', error: after.lastError ?? undefined };
  }

  /** Edits the form of a queued or paused task. The workspace cannot be changed. */
  async edit(taskId: string, patch: TaskEdit): Promise<OffPeakTask> {
    for (const key of Object.keys(patch)) {
      if (key.startsWith('workspace')) throw new ServiceError('invalid_input', 'The workspace of a task cannot be changed.');
    }
    let ok: boolean;
    try {
      ok = await this.store.mutate((tx) => tx.tasks.edit(taskId, patch));
    } catch (e) {
      throw toServiceError('edit the task', e);
    }
    if (!ok) throw this.refusal(taskId, 'edit', 'only a queued or paused task can be edited');
    return this.getTask(taskId)!;
  }

  // ------------------------------------------------------------------ cancel / delete / History (docs/flows.md#cancel-delete-history)

  /**
   * Cancel: the terminal state first (so a late agent result cannot overwrite it), then stop the
   * agent best-effort, then settle asynchronously through the outbox. Idempotent on a terminal task.
   */
  async cancel(taskId: string): Promise<OffPeakTask> {
    const result = await this.store.mutate((tx) => {
      const task = tx.tasks.get(taskId);
      if (!task) return { kind: 'not_found' as const };
      if (isTerminalStatus(task.status)) return { kind: 'terminal' as const, task };
      if (!tx.tasks.cancel(taskId)) return { kind: 'refused' as const };
      return { kind: 'cancelled' as const, task: tx.tasks.get(taskId)!, settles: this.queueSettlesForTask(tx, taskId, 'cancelled') };
    });
    if (result.kind === 'not_found') throw new ServiceError('not_found', `No task ${taskId}.`);
    if (result.kind === 'refused') throw this.refusal(taskId, 'cancel', 'the task changed meanwhile');
    if (result.kind === 'terminal') return result.task;
    await this.stopAgentBestEffort(taskId);
    this.settleSoon(result.settles);
    return result.task;
  }

  /**
   * Delete: a live task is cancelled first; then the row goes. Its unsettled tickets stay in the
   * ledger (no cascade) until the gateway acknowledges them. Deleting a missing task is a no-op.
   */
  async delete(taskId: string): Promise<boolean> {
    const task = this.getTask(taskId);
    if (!task) return false;
    if (!isTerminalStatus(task.status)) await this.cancel(taskId);
    const { settles, deleted } = await this.store.mutate((tx) => {
      const ids = this.queueSettlesForTask(tx, taskId, 'deleted');
      return { settles: ids, deleted: tx.tasks.delete(taskId) };
    });
    this.settleSoon(settles);
    if (deleted) this.notify('deleted', task);
    return true;
  }

  /**
   * Hide the task's History row: a tombstone only (no confirmation, no undo; the task, session
   * and ledger are untouched). Idempotent, keeping the first time; nothing is written for a task
   * that never started (it has no History row).
   */
  async deleteFromHistory(taskId: string): Promise<{ hidden: boolean; historyDeletedAt: number | null; reason?: 'never_started' | 'already_hidden' }> {
    const written = await this.store.mutate((tx) => tx.tasks.deleteHistory(taskId));
    const task = this.getTask(taskId);
    if (!task) throw new ServiceError('not_found', `No task ${taskId}.`);
    if (written) return { hidden: true, historyDeletedAt: task.historyDeletedAt };
    if (task.startedAt === null) return { hidden: false, historyDeletedAt: null, reason: 'never_started' };
    return { hidden: true, historyDeletedAt: task.historyDeletedAt, reason: 'already_hidden' };
  }

  // ------------------------------------------------------------------ runtime hooks

  /** The runner launched the agent on this ticket. */
  async onSegmentStarted(_taskId: string, ticketId: string): Promise<void> {
    await this.store.mutate((tx) => tx.tickets.startSegment(ticketId));
  }

  /** The gateway admitted the segment's first model request (card: "running", not "waiting for admission"). */
  async onAdmitted(ticketId: string, at?: number): Promise<void> {
    await this.store.mutate((tx) => tx.tickets.markAdmitted(ticketId, at ?? tx.now));
  }

  /** The segment ended for another reason than expiry or a terminal state (e.g. interrupted). */
  async onSegmentEnded(_taskId: string, ticketId: string, reason: SegmentEndReason, error?: string): Promise<void> {
    await this.store.mutate((tx) => tx.tickets.endSegment(ticketId, reason, error ?? null));
  }

  /**
   * 3102 (or an expired status) ended the segment: requeue (keeping session and started_at),
   * settle the old ticket through the outbox, retake with the same task id. Resolves to whether
   * a new ticket was attached (if not, the sync keeps retrying).
   */
  async onSegmentExpired(taskId: string, ticketId: string): Promise<boolean> {
    const requeued = await this.store.mutate((tx) => {
      tx.tickets.endSegment(ticketId, 'expired');
      tx.tickets.updateServerState(ticketId, { serverState: 'expired', nextPollAt: null });
      tx.tickets.requestSettle(ticketId, 'segment_end');
      const task = tx.tasks.get(taskId);
      if (!task || isTerminalStatus(task.status)) return false;
      tx.tasks.requeue(taskId);
      tx.tasks.clearTicket(taskId, ticketId);
      return tx.tasks.get(taskId)!.status === 'queued';
    });
    this.settleSoon([ticketId]);
    if (!requeued) return false;
    const ok = await this.retake(taskId);
    this.plan({ restartLongPoll: true });
    return ok;
  }

  /** The runtime wrote a terminal state itself: end the open segment and settle every ticket. */
  async markSettleForTerminal(taskId: string): Promise<void> {
    const settles = await this.store.mutate((tx) => {
      const task = tx.tasks.get(taskId);
      const reason: SettleReason = task?.status === 'completed' ? 'completed' : task?.status === 'failed' ? 'failed' : task?.status === 'cancelled' ? 'cancelled' : 'abandoned';
      return this.queueSettlesForTask(tx, taskId, reason);
    });
    this.settleSoon(settles);
  }

  /** running -> completed, and its tickets into the settle outbox, in one mutation. */
  async completeTask(taskId: string, details: TerminalDetails = {}): Promise<boolean> {
    return this.finish(taskId, 'completed', details);
  }

  /** running (or an undispatchable queued) -> failed, and its tickets into the settle outbox. */
  async failTask(taskId: string, details: TerminalDetails = {}): Promise<boolean> {
    return this.finish(taskId, 'failed', details);
  }

  private async finish(taskId: string, outcome: 'completed' | 'failed', details: TerminalDetails): Promise<boolean> {
    const result = await this.store.mutate((tx) => {
      const applied = outcome === 'completed' ? tx.tasks.complete(taskId, details) : tx.tasks.fail(taskId, details);
      return { applied, settles: applied ? this.queueSettlesForTask(tx, taskId, outcome) : [] };
    });
    this.settleSoon(result.settles);
    return result.applied;
  }

  // ------------------------------------------------------------------ sync (docs/flows.md#sync)

  /** Runs one sync cycle now if this window holds the lease (single-flight). */
  syncNow(): Promise<SyncReport> {
    if (this.cycleInflight) return this.cycleInflight;
    this.clearCycleTimer();
    const run = this.runCycle().finally(() => {
      this.cycleInflight = undefined;
      if (this.replanAfterCycle || this.running) {
        this.replanAfterCycle = false;
        this.plan();
      }
    });
    this.cycleInflight = run;
    return run;
  }

  /** When the next cycle is due, from the DB; undefined when there is nothing to do (no timer, no requests). */
  nextDueAt(): number | undefined {
    const now = this.clock.now();
    return this.store.read((tx) => {
      let due: number | undefined;
      const consider = (t: number) => {
        if (due === undefined || t < due) due = t;
      };
      const live = new Set(tx.tickets.list({ settleState: 'none', serverState: [...LIVE_SERVER] }).map((t) => t.ticketId));
      for (const task of tx.tasks.list({ status: NON_TERMINAL })) {
        if (task.serverTicketId) {
          if (live.has(task.serverTicketId) || !tx.tickets.get(task.serverTicketId)) consider(task.nextPollAt ?? now);
          else if (task.status === 'queued') consider(now); // dead ticket still attached: repair now
        } else if (task.status === 'queued') {
          consider(this.retakeNotBefore.get(task.id)?.at ?? now);
        }
      }
      for (const p of tx.tickets.list({ settleState: 'pending' })) consider(p.nextSettleAt ?? now);
      return due;
    });
  }

  /** Whether a live ticket exists that the long-poll in flight does not watch (cheap: one read). */
  private liveTicketOutsideLongPoll(): boolean {
    return this.store.read((tx) => tx.tickets.list({ settleState: 'none', serverState: [...LIVE_SERVER] }).some((t) => !this.longPollIds.has(t.ticketId)));
  }

  /** `restartLongPoll`: a new live ticket must not wait for the long-poll in flight to time out. */
  private plan(options: { restartLongPoll?: boolean } = {}): void {
    if (!this.running || !this.leadership.isLeader) {
      this.clearCycleTimer();
      return;
    }
    if (this.cycleInflight) {
      this.replanAfterCycle = true;
      if (options.restartLongPoll && this.longPollRestart && this.liveTicketOutsideLongPoll()) this.longPollRestart.abort();
      return;
    }
    let due: number | undefined;
    this.idleAtGeneration = undefined;
    try {
      due = this.nextDueAt();
    } catch (e) {
      this.log(`sync planning failed: ${message(e)}`);
      due = this.clock.now() + this.config.backoffMs;
    }
    this.clearCycleTimer();
    if (due === undefined) {
      this.idleAtGeneration = this.store.generation;
      return;
    }
    const at = Math.max(due, this.backoffUntil);
    this.cycleTimer = this.timers.setTimeout(
      () => {
        this.cycleTimer = undefined;
        void this.syncNow();
      },
      Math.max(0, at - this.clock.now()),
    );
  }

  private clearCycleTimer(): void {
    this.timers.clearTimeout(this.cycleTimer);
    this.cycleTimer = undefined;
  }

  private async runCycle(): Promise<SyncReport> {
    const report: SyncReport = { statusRequests: 0, ticketsPolled: 0, settleAttempts: 0, settled: 0, retakes: 0, woke: [] };
    if (!this.running) return { ...report, skipped: 'stopped' };
    if (!this.leadership.isLeader) return { ...report, skipped: 'not_leader' };
    let failure: unknown;
    try {
      // 1. the settle outbox first
      const flush = await this.flushOutbox();
      report.settleAttempts += flush.attempts;
      report.settled += flush.acked;
      if (flush.transportFailure) failure = flush.transportFailure;

      // 2. what is due: live tickets to poll, ticketless queued tasks to retake
      const now = this.clock.now();
      const horizon = now + this.config.coalesceMs;
      let liveAtStart = new Set<string>();
      const { due, retakes, stale } = this.store.read((tx) => {
        const live = new Map(tx.tickets.list({ settleState: 'none', serverState: [...LIVE_SERVER] }).map((t) => [t.ticketId, t]));
        // More live tickets than one status call holds: plain polls on the gateway's hints.
        this.liveTicketsFitOneLongPoll = live.size <= this.config.batchSize;
        liveAtStart = new Set(live.keys());
        const dueList: { taskId: string; ticketId: string; knownState?: ServerTicketState }[] = [];
        const retakeList: string[] = [];
        const staleList: { taskId: string; ticketId: string }[] = [];
        for (const task of tx.tasks.list({ status: NON_TERMINAL })) {
          if (task.serverTicketId) {
            const isLive = live.has(task.serverTicketId) || !tx.tickets.get(task.serverTicketId);
            if (isLive && (task.nextPollAt ?? 0) <= horizon) dueList.push({ taskId: task.id, ticketId: task.serverTicketId, knownState: live.get(task.serverTicketId)?.serverState });
            // a queued task still pointing at a ticket the ledger knows is dead: repair, never stall
            if (!isLive && task.status === 'queued') staleList.push({ taskId: task.id, ticketId: task.serverTicketId });
          } else if (task.status === 'queued' && (this.retakeNotBefore.get(task.id)?.at ?? 0) <= now) {
            retakeList.push(task.id);
          }
        }
        return { due: dueList, retakes: retakeList, stale: staleList };
      });
      if (stale.length > 0) {
        const cleared = await this.store.mutate((tx) => stale.filter((st) => tx.tasks.clearTicket(st.taskId, st.ticketId)).map((st) => st.taskId));
        retakes.push(...cleared);
      }

      // (stopping at the first transport failure: the gateway is unreachable, the cycle backs off)
      for (const taskId of retakes) {
        if (failure) break;
        report.retakes += 1;
        const r = await this.retakeDetailed(taskId);
        if (!r.ok && isTransportFailure(r.error)) failure = r.error;
      }

      // 3. status in batches of at most 100, stopping at the first failure of the gateway
      const unique = [...new Map(due.map((d) => [d.ticketId, d])).values()];
      for (let i = 0; i < unique.length && !failure; i += this.config.batchSize) {
        const batch = unique.slice(i, i + this.config.batchSize);
        const waitMs = this.longPoll && unique.length <= this.config.batchSize ? this.config.longPollMs : undefined;
        try {
          report.statusRequests += 1;
          report.ticketsPolled += batch.length;
          const known: Record<string, ServerTicketState> = {};
          for (const b of batch) if (b.knownState) known[b.ticketId] = b.knownState;
          const restart = waitMs !== undefined ? (this.longPollRestart = new AbortController()) : undefined;
          if (restart) this.longPollIds = liveAtStart;
          let answer: Awaited<ReturnType<TaskService['statusWithFallback']>>;
          try {
            answer = await this.statusWithFallback(batch.map((b) => b.ticketId), waitMs, known, restart?.signal);
          } catch (e) {
            // Restarted on purpose (a ticket appeared): not a failure; the next cycle starts at once.
            if (restart?.signal.aborted && !this.abort.signal.aborted) break;
            throw e;
          } finally {
            if (this.longPollRestart === restart) this.longPollRestart = undefined;
          }
          const taskOf = new Map(batch.map((b) => [b.ticketId, b.taskId]));
          // Queued tickets carry how the off-peak windows stand: keep it for the cards.
          const queued = answer.tickets.find((entry) => entry.state === 'queued');
          if (queued) this.availability.noteOffPeakWindow(this.gateway.offPeakWindowOf(queued));
          const applied = await this.store.mutate((tx) => {
            const woke: string[] = [];
            const retake: string[] = [];
            for (const entry of answer.tickets) {
              const taskId = taskOf.get(entry.ticket_id);
              if (!taskId) continue;
              const r = this.applyEntry(tx, taskId, entry);
              if (r === 'woke') woke.push(taskId);
              if (r === 'retake') retake.push(taskId);
            }
            return { woke, retake };
          });
          for (const id of applied.woke) {
            report.woke.push(id);
            this.notify('wake', id);
          }
          for (const id of applied.retake) {
            if (failure) break; // the rest stay ticketless and are retaken by a later cycle
            report.retakes += 1;
            this.retakeNotBefore.delete(id);
            const r = await this.retakeDetailed(id);
            if (!r.ok && isTransportFailure(r.error)) failure = r.error;
          }
        } catch (e) {
          failure = e;
        }
      }
    } catch (e) {
      failure = e;
    }

    if (failure) {
      this.cycleFailures += 1;
      const delay = backoff(this.config.backoffMs, this.config.backoffMaxMs, this.cycleFailures - 1);
      this.backoffUntil = this.clock.now() + delay;
      report.error = message(failure);
      this.log(`sync cycle failed (${this.cycleFailures} in a row), next try in ${Math.round(delay / 1000)} s: ${report.error}`);
      this.notify('syncError', failure instanceof Error ? failure : new Error(String(failure)));
    } else {
      this.cycleFailures = 0;
      this.backoffUntil = 0;
    }
    this.notify('synced', report);
    return report;
  }

  private async statusWithFallback(ids: string[], waitMs: number | undefined, knownStates: Record<string, ServerTicketState>, restart?: AbortSignal) {
    try {
      const signal = restart ? AbortSignal.any([this.abort.signal, restart]) : this.abort.signal;
      return await this.gateway.status(ids, { waitMs, knownStates, signal });
    } catch (e) {
      // A gateway that does not offer long-poll refuses wait_ms: stop asking for it.
      if (waitMs !== undefined && isGatewayError(e) && e.kind === 'rejected' && e.status === 400) {
        this.longPoll = false;
        this.log('the gateway refused wait_ms; long-poll disabled');
        return await this.gateway.status(ids, { signal: this.abort.signal });
      }
      throw e;
    }
  }

  /**
   * How long until a ticket is polled again. A queued ticket under long-poll is asked again
   * almost at once: the gateway holds that request until the ticket changes, so a promotion
   * reaches the scheduler within moments instead of after the gateway's plain-poll hint. The
   * short floor keeps a gateway that answers long-polls at once from being hammered.
   */
  private pollDelay(state: string, hintMs: number): number {
    return this.longPoll && this.liveTicketsFitOneLongPoll && state === 'queued' ? Math.min(hintMs, LONG_POLL_REPOLL_MS) : hintMs;
  }

  /**
   * Applies one status entry for a task's ticket, inside a mutation (docs/flows.md#sync, step 4). Returns what the caller must do next.
   */
  private applyEntry(tx: StoreTx, taskId: string, entry: TicketStatusEntry): 'woke' | 'retake' | 'none' {
    const ticketId = entry.ticket_id;
    const sc = this.gateway.serverClock;
    const nextPollAt = tx.now + this.pollDelay(entry.state, entry.next_poll_after_ms ?? this.config.fallbackPollMs);
    if (!tx.tickets.get(ticketId)) {
      // a ticket the ledger does not know yet (written by an older build): record it now
      tx.tickets.insert({ ticketId, taskId, serverState: entry.state, nextPollAt });
    }
    const task = tx.tasks.get(taskId);
    const current = task && !isTerminalStatus(task.status) && task.serverTicketId === ticketId ? task : undefined;

    switch (entry.state) {
      case 'queued':
        tx.tickets.updateServerState(ticketId, { serverState: 'queued', queuePosition: entry.position, nextPollAt });
        if (current) tx.tasks.applySnapshot(taskId, ticketId, { schedulable: false, queuePosition: entry.position, nextPollAt });
        return 'none';
      case 'ready': {
        tx.tickets.updateServerState(ticketId, { serverState: 'ready', queuePosition: null, readyDeadline: sc.toLocal(entry.ready_deadline), nextPollAt });
        if (!current) return 'none';
        tx.tasks.applySnapshot(taskId, ticketId, { schedulable: true, queuePosition: null, nextPollAt });
        return current.status === 'queued' && !current.schedulable ? 'woke' : 'none';
      }
      case 'active': {
        tx.tickets.updateServerState(ticketId, { serverState: 'active', queuePosition: null, expiresAt: sc.toLocal(entry.active_until), nextPollAt });
        if (!current) return 'none';
        // Active clears the position. A queued task whose ticket is still active
        // (after a restart) may be dispatched again at once with it (issue 5), so it is schedulable.
        const requeued = current.status === 'queued';
        tx.tasks.applySnapshot(taskId, ticketId, requeued ? { schedulable: true, queuePosition: null, nextPollAt } : { queuePosition: null, nextPollAt });
        return requeued && !current.schedulable ? 'woke' : 'none';
      }
      case 'expired':
      case 'settled':
      case 'not_found': {
        this.retireDeadTicket(tx, ticketId, entry.state);
        if (!current) return 'none';
        if (current.status === 'queued') {
          // expired, settled or not_found: same task id, new ticket
          tx.tasks.clearTicket(taskId, ticketId);
          return 'retake';
        }
        // paused: wait for Continue (it retakes); running: the agent's next model call gets
        // 3102 and the runtime ends the segment. Stop polling a dead ticket either way.
        tx.tasks.applySnapshot(taskId, ticketId, { schedulable: false, queuePosition: null, nextPollAt: null });
        return 'none';
      }
    }
  }

  /** Ledger bookkeeping for a ticket the gateway says is over. */
  private retireDeadTicket(tx: StoreTx, ticketId: string, state: 'expired' | 'settled' | 'not_found' | 'queued' | 'ready' | 'active' | undefined): void {
    switch (state) {
      case 'settled':
        tx.tickets.updateServerState(ticketId, { serverState: 'settled', nextPollAt: null });
        tx.tickets.markSettled(ticketId); // the gateway already released it
        tx.tickets.endSegment(ticketId, 'retaken');
        return;
      case 'not_found':
        tx.tickets.updateServerState(ticketId, { serverState: 'not_found', nextPollAt: null });
        tx.tickets.abandonSettle(ticketId, 'not_found'); // nothing left to release
        tx.tickets.endSegment(ticketId, 'retaken');
        return;
      case 'expired':
        tx.tickets.updateServerState(ticketId, { serverState: 'expired', nextPollAt: null });
        tx.tickets.requestSettle(ticketId, 'segment_end');
        tx.tickets.endSegment(ticketId, 'expired');
        return;
      default:
        // state unknown (a dead ticket we did not just ask about): settle it to be sure
        tx.tickets.requestSettle(ticketId, 'segment_end');
        tx.tickets.endSegment(ticketId, 'retaken');
    }
  }

  // ------------------------------------------------------------------ take / retake

  /** Take, retrying once at once on a lost answer: the take is retry-safe per task id. */
  private async takeRetrySafe(taskId: string): Promise<TakeResult> {
    try {
      return await this.gateway.take(taskId);
    } catch (e) {
      if (!isGatewayError(e) || !(e.retryable && e.kind !== 'no_capacity')) throw e;
      this.log(`take for ${taskId} failed (${e.kind}); retrying once with the same task id`);
      return await this.gateway.take(taskId);
    }
  }

  private ledgerInput(tx: StoreTx, taskId: string, take: TakeResult) {
    return {
      ticketId: take.ticketId,
      taskId,
      serverState: take.state,
      queuePosition: take.state === 'queued' ? take.position : null,
      nextPollAt: isLiveTicketState(take.state) ? tx.now + this.pollDelay(take.state, take.nextPollAfterMs) : null,
    };
  }

  /**
   * Retake for a queued (or just continued) task with the same task id; single-flight per task.
   * On failure the task stays queued without a ticket and the sync retries with backoff.
   */
  private async retake(taskId: string): Promise<boolean> {
    return (await this.retakeDetailed(taskId)).ok;
  }

  private retakeDetailed(taskId: string): Promise<{ ok: boolean; error?: unknown }> {
    const existing = this.retakesInflight.get(taskId);
    if (existing) return existing;
    const run = this.doRetake(taskId).finally(() => this.retakesInflight.delete(taskId));
    this.retakesInflight.set(taskId, run);
    return run;
  }

  private async doRetake(taskId: string): Promise<{ ok: boolean; error?: unknown }> {
    const fail = async (e: unknown): Promise<{ ok: false; error: unknown }> => {
      const prev = this.retakeNotBefore.get(taskId)?.attempts ?? 0;
      let at = this.clock.now() + backoff(this.config.retakeBackoffMs, this.config.retakeBackoffMaxMs, prev);
      if (isGatewayError(e) && e.kind === 'limit_reached') {
        this.availability.noteLimitReached(e.nextTakeAt);
        if (e.nextTakeAt !== undefined) at = Math.max(e.nextTakeAt, this.clock.now() + 1_000);
      }
      this.retakeNotBefore.set(taskId, { at, attempts: prev + 1 });
      const text = `${RETAKE_FAILED} ${message(e)}`;
      await this.store.mutate((tx) => tx.tasks.setLastError(taskId, text, { onlyWithoutTicket: true })).catch(() => undefined);
      this.log(`${taskId}: ${text}`);
      return { ok: false, error: e };
    };

    let take: TakeResult;
    try {
      take = await this.gateway.take(taskId);
    } catch (e) {
      return fail(e);
    }
    let outcome: 'attached' | 'ready' | 'dead' | 'gone' | 'conflict';
    try {
      outcome = await this.store.mutate((tx) => {
        const known = tx.tickets.get(take.ticketId);
        if (known && known.settleState !== 'none') {
          // Another task's ticket can never be this task's.
          if (known.taskId !== taskId || !isLiveTicketState(take.state)) return 'conflict' as const;
          // We had given this ticket up (a not_found/settled/expired status answer, a pending
          // settle), yet the gateway — the admission truth — hands it back live for this very
          // task: take it back rather than stall. If it really is over, the next status answer
          // retires it again.
          tx.tickets.revive(take.ticketId, take.state);
        }
        tx.tickets.insert(this.ledgerInput(tx, taskId, take));
        if (known) tx.tickets.updateServerState(take.ticketId, { serverState: take.state, queuePosition: take.state === 'queued' ? take.position : null });
        const task = tx.tasks.get(taskId);
        if (!task || isTerminalStatus(task.status)) {
          // cancelled or deleted while the take was in flight
          tx.tickets.requestSettle(take.ticketId, task?.status === 'completed' ? 'completed' : task?.status === 'failed' ? 'failed' : task ? 'cancelled' : 'deleted');
          return 'gone' as const;
        }
        if (!isLiveTicketState(take.state)) {
          this.retireDeadTicket(tx, take.ticketId, take.state);
          return 'dead' as const;
        }
        const previous = task.serverTicketId;
        if (previous && previous !== take.ticketId) this.retireDeadTicket(tx, previous, undefined);
        const schedulable = take.state === 'ready' || take.state === 'active';
        tx.tasks.setTicket(taskId, take.ticketId, {
          schedulable,
          queuePosition: take.state === 'queued' ? take.position : null,
          nextPollAt: tx.now + this.pollDelay(take.state, take.nextPollAfterMs),
        });
        tx.tasks.clearLastError(taskId, RETAKE_FAILED);
        return schedulable && task.status === 'queued' ? ('ready' as const) : ('attached' as const);
      });
    } catch (e) {
      return fail(e);
    }
    if (outcome === 'gone') {
      this.settleSoon([take.ticketId]);
      return { ok: false };
    }
    if (outcome === 'dead' || outcome === 'conflict') {
      if (outcome === 'dead') this.settleSoon([take.ticketId]);
      return fail(new Error(`the gateway answered the take with a ${outcome === 'dead' ? `${take.state} ticket` : 'ticket already retired'}`));
    }
    this.retakeNotBefore.delete(taskId);
    if (outcome === 'ready') this.notify('wake', taskId);
    return { ok: true };
  }

  // ------------------------------------------------------------------ settle outbox (docs/flows.md#settle)

  /** End the task's open segment and put every not-yet-queued ticket of it in the outbox. */
  private queueSettlesForTask(tx: StoreTx, taskId: string, reason: SettleReason): string[] {
    const endReason: SegmentEndReason = reason === 'completed' || reason === 'failed' || reason === 'cancelled' || reason === 'deleted' ? reason : 'interrupted';
    const ids: string[] = [];
    for (const t of tx.tickets.forTask(taskId)) {
      if (t.segmentStartedAt !== null && t.segmentEndedAt === null) tx.tickets.endSegment(t.ticketId, endReason);
      if (t.settleState === 'none') tx.tickets.requestSettle(t.ticketId, reason);
      if (t.settleState === 'none' || t.settleState === 'pending') ids.push(t.ticketId);
    }
    return ids;
  }

  /** Try these outbox rows now, in the background (any window: they are this window's user actions). */
  private settleSoon(ticketIds: string[]): void {
    if (ticketIds.length === 0) return;
    this.track(this.flushOutbox(ticketIds));
    this.plan();
  }

  /**
   * Sends due outbox rows (or just `only`). 2xx/4xx -> acknowledged; 5xx/network/timeout ->
   * kept pending with a per-ticket backoff (persisted, so it survives restarts). Stops at the
   * first transport failure: the gateway is unreachable, no point hammering it.
   */
  async flushOutbox(only?: string[]): Promise<{ attempts: number; acked: number; transportFailure?: unknown }> {
    let attempts = 0;
    let acked = 0;
    const seen = new Set<string>();
    for (let round = 0; round < 50; round++) {
      const rows = this.store.read((tx) =>
        only ? only.map((id) => tx.tickets.get(id)).filter((t): t is TicketRecord => t !== undefined && t.settleState === 'pending') : tx.tickets.pendingSettles(100),
      );
      const todo = rows.filter((r) => !seen.has(r.ticketId) && !this.settlesInflight.has(r.ticketId));
      if (todo.length === 0) break;
      for (const row of todo) {
        seen.add(row.ticketId);
        this.settlesInflight.add(row.ticketId);
        attempts += 1;
        try {
          await this.gateway.settle(row.ticketId, settleReasonOf(row.settleReason), this.abort.signal);
          await this.acknowledgeSettle(row);
          acked += 1;
        } catch (e) {
          if (isGatewayError(e) && settleAcknowledgedBy(e)) {
            await this.acknowledgeSettle(row);
            acked += 1;
          } else {
            const at = this.clock.now() + backoff(this.config.settleBackoffMs, this.config.settleBackoffMaxMs, row.settleAttempts);
            await this.store.mutate((tx) => tx.tickets.recordSettleFailure(row.ticketId, `settle failed: ${message(e)}`, at)).catch(() => undefined);
            if (isTransportFailure(e)) {
              this.settlesInflight.delete(row.ticketId);
              return { attempts, acked, transportFailure: e };
            }
          }
        } finally {
          this.settlesInflight.delete(row.ticketId);
        }
      }
      if (only) break;
    }
    if (acked > 0 && this.availability.state.status === 'disabled') void this.availability.refresh();
    return { attempts, acked };
  }

  private async acknowledgeSettle(row: TicketRecord): Promise<void> {
    await this.store.mutate((tx) => {
      tx.tickets.markSettled(row.ticketId);
      const task = tx.tasks.get(row.taskId);
      if (task && isTerminalStatus(task.status)) {
        const open = tx.tickets.forTask(row.taskId).some((t) => t.settleState === 'none' || t.settleState === 'pending');
        if (!open) tx.tasks.markSettled(row.taskId);
      }
    });
  }

  /** Last resort when even the ledger write failed: one direct settle attempt. */
  private async settleUnrecorded(ticketId: string): Promise<void> {
    try {
      await this.gateway.settle(ticketId, 'orphan');
    } catch (e) {
      this.log(`could not settle unrecorded ticket ${ticketId}: ${message(e)}`);
    }
  }

  // ------------------------------------------------------------------ helpers

  /** A listener's failure must never break a sync cycle or a user action. */
  private notify<K extends keyof ServiceEvents>(event: K, ...[value]: ServiceEvents[K]): void {
    (this.events[event] as Emitter<ServiceEvents[K][0]>).fire(value);
  }

  private listenerFailed(event: keyof ServiceEvents, e: unknown): void {
    this.log(`a ${event} listener failed: ${message(e)}`);
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
      this.log(`stopping the agent of ${taskId} failed (the task is cancelled anyway): ${message(e)}`);
    } finally {
      this.timers.clearTimeout(timer);
    }
  }

  private safeRead<T>(fn: Parameters<TaskStore['read']>[0] extends (tx: infer X) => unknown ? (tx: X) => T : never): T | undefined {
    try {
      return this.store.read(fn);
    } catch {
      return undefined;
    }
  }

  private refusal(taskId: string, action: string, why: string): ServiceError {
    const task = this.getTask(taskId);
    if (!task) return new ServiceError('not_found', `No task ${taskId}.`);
    return new ServiceError('not_allowed', `Cannot ${action} a ${task.status} task: ${why}.`);
  }

  private track<T>(p: Promise<T>): void {
    const tracked = p.catch((e) => this.log(`background work failed: ${message(e)}`));
    this.background.add(tracked);
    void tracked.finally(() => this.background.delete(tracked));
  }
}

function validateCreate(input: CreateTaskInput): void {
  const bad = (m: string) => new ServiceError('invalid_input', m);
  if (!input || typeof input !== 'object') throw bad('Task input is missing.');
  if (typeof input.prompt !== 'string' || input.prompt.trim() === '') throw bad('The prompt must not be empty.');
  if (typeof input.title !== 'string') throw bad('The title must be a string.');
  if (typeof input.workspacePath !== 'string' || input.workspacePath.trim() === '') throw bad('The workspace path must not be empty.');
  if (!PERMISSION_MODES.includes(input.permissionMode)) throw bad(`The permission mode must be one of ${PERMISSION_MODES.join(', ')}.`);
  // Checked before the take, so bad input never spends a ticket.
  for (const [name, value] of [
    ['model', input.model],
    ['thought level', input.thoughtLevel],
    ['workspace identity', input.workspaceIdentity],
  ] as const) {
    if (value !== undefined && value !== null && typeof value !== 'string') throw bad(`The ${name} must be text.`);
  }
}
