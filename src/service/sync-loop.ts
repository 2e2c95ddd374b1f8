/**
 * The status sync loop, run by the lease holder only: each cycle flushes the settle outbox, retakes
 * for ticketless queued tasks, then asks the gateway for the status of the due live tickets in
 * batches of at most 100 and applies each answer through the ticket rules. Cycles are planned from
 * the DB (no timer when there is nothing to do), long-poll when every live ticket fits in one
 * request, and back off as a whole when the gateway fails.
 */
import type { Clock } from '../core/clock';
import { NON_TERMINAL_STATUSES, type OffPeakTask, type ServerTicketState } from '../core/types';
import type { GatewayClient } from '../gateway-client/client';
import { LIVE_TICKET_STATES } from '../protocol/gateway';
import { isGatewayError } from '../gateway-client/errors';
import { changeConcerns, type StoreReadTx, type TaskStore } from '../store';
import { anyScheduleDue, fireDueSchedules, scheduleWakeAt } from './schedule-firing';
import type { AvailabilitySnapshot } from './availability';
import type { Leadership } from './leadership';
import type { Retaker } from './retaker';
import type { SettleOutbox } from './settle-outbox';
import { backoff, errorText, isTransportFailure, type SyncConfig } from './sync-config';
import { applyStatusEntry, detachDeadTicket, ticketKnownDead, type StatusRuleContext } from './ticket-rules';
import { applyChainGate, chainGateOf } from './chains';
import type { TimerHandle, Timers } from '../core/timers';

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

/** Floor between two long-polls of a queued ticket (see PollPacing.delay). */
const LONG_POLL_REPOLL_MS = 1_000;

/** How soon a live ticket is polled again; shared by the loop, the retaker and the user actions. */
export class PollPacing {
  /** False once the gateway refused `wait_ms`. */
  longPoll: boolean;
  /** More live tickets than one status call holds: plain polls on the gateway's hints. */
  liveTicketsFitOneLongPoll = true;

  constructor(config: Pick<SyncConfig, 'longPollMs'>) {
    this.longPoll = config.longPollMs > 0;
  }

  /**
   * A queued ticket under long-poll is asked again almost at once: the gateway holds that
   * request until the ticket changes, so a promotion reaches the scheduler within moments instead
   * of after the gateway's plain-poll hint. The short floor keeps a gateway that answers
   * long-polls at once from being hammered.
   */
  readonly delay = (state: string, hintMs: number): number =>
    this.longPoll && this.liveTicketsFitOneLongPoll && state === 'queued' ? Math.min(hintMs, LONG_POLL_REPOLL_MS) : hintMs;
}

export interface SyncLoopOptions {
  store: TaskStore;
  gateway: GatewayClient;
  clock: Clock;
  timers: Timers;
  config: SyncConfig;
  leadership: Leadership;
  availability: AvailabilitySnapshot;
  pacing: PollPacing;
  outbox: SettleOutbox;
  retaker: Retaker;
  /** The id of a task a schedule's occurrence queues. */
  newTaskId: () => string;
  /** Aborted when the service stops. */
  signal: () => AbortSignal;
  onWake: (taskId: string) => void;
  onSyncError: (error: Error) => void;
  onSynced: (report: SyncReport) => void;
  log: (line: string) => void;
}

export class SyncLoop {
  private running = false;
  private cycleTimer: TimerHandle | undefined;
  private cycleInflight: Promise<SyncReport> | undefined;
  private replanAfterCycle = false;
  /** The DB generation at which the last plan found nothing to do (no live ticket, nothing queued). */
  private idleAtGeneration: string | undefined;
  private cycleFailures = 0;
  private backoffUntil = 0;
  /** Aborts the long-poll in flight so the next one includes a ticket that just appeared. */
  private longPollRestart: AbortController | undefined;
  /** The live tickets known when the long-poll in flight started (a new one restarts it). */
  private longPollIds = new Set<string>();
  private disposables: { dispose(): void }[] = [];
  private scheduleWakeMemo: { generation: TaskStore['generation']; at: number | null } | undefined;
  /** When the planned cycle is due on the wall clock (undefined: no timer). */
  private plannedAt: number | undefined;

  constructor(private readonly options: SyncLoopOptions) {}

  /** The rules' view of the gateway's answers: this loop's pacing and the gateway's clock. */
  get ruleContext(): StatusRuleContext {
    const sc = this.options.gateway.serverClock;
    return { pollDelay: this.options.pacing.delay, fallbackPollMs: this.options.config.fallbackPollMs, toLocal: (ms) => sc.toLocal(ms) };
  }

  /** Listens to the lease ticks and to other windows' writes; the lease holder plans cycles. */
  start(): void {
    if (this.running) return;
    this.running = true;
    const { leadership, store } = this.options;
    // The lease tick re-plans as a safety net; with nothing to do and no row changed since, it has nothing to find.
    const onTick = (leader: boolean) => {
      if (!leader) {
        this.idleAtGeneration = undefined;
        this.clearCycleTimer();
        return;
      }
      try {
        store.checkForExternalChange();
      } catch {
        this.idleAtGeneration = undefined; // store closing or unreadable: plan() reports it
      }
      // A wall clock that jumped past the planned time (the machine slept; timers do not count sleep) plans again now.
      const overdue = this.plannedAt !== undefined && this.options.clock.now() >= this.plannedAt;
      if (this.idleAtGeneration === undefined || this.idleAtGeneration !== store.generation || this.cycleInflight || overdue) this.plan();
    };
    this.disposables.push(leadership.onDidTick(onTick));
    // Another window's write (a create, a cancel) may add work: the leader re-plans.
    this.disposables.push(
      store.onDidChange((change) => {
        if (change.origin === 'external' && changeConcerns(change, 'tasks', 'tickets') && leadership.isLeader)
          this.plan({ restartLongPoll: true });
      }),
    );
  }

  stop(): void {
    if (!this.running) return;
    this.running = false;
    this.clearCycleTimer();
    for (const d of this.disposables) d.dispose();
    this.disposables = [];
  }

  /** The cycle in flight, if any. */
  get inflight(): Promise<SyncReport> | undefined {
    return this.cycleInflight;
  }

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
    return this.planTarget().due;
  }

  /** `schedulesOnly`: the only thing ahead is a schedule's next occurrence (the lease tick need not re-plan while the DB is unchanged). */
  private planTarget(): { due: number | undefined; schedulesOnly: boolean } {
    const now = this.options.clock.now();
    return this.options.store.read((tx) => {
      let due: number | undefined;
      const consider = (t: number) => {
        if (due === undefined || t < due) due = t;
      };
      const live = new Set(tx.tickets.list({ settleState: 'none', serverState: [...LIVE_TICKET_STATES] }).map((t) => t.ticketId));
      for (const task of tx.tasks.list({ status: NON_TERMINAL_STATUSES })) {
        if (task.serverTicketId) {
          if (live.has(task.serverTicketId) || !tx.tickets.get(task.serverTicketId)) consider(task.nextPollAt ?? now);
          else if (task.status === 'queued') consider(now); // dead ticket still attached: repair now
        } else if (task.status === 'queued') {
          const gate = chainGateOf(tx, task).kind;
          if (gate === 'skip') consider(now);
          else if (gate === 'go') consider(takeDueAt(task, this.options.retaker, now));
          // 'wait': the followed task's end is a write to the DB, which plans again
        }
      }
      for (const p of tx.tickets.list({ settleState: 'pending' })) consider(p.nextSettleAt ?? now);
      const schedulesOnly = due === undefined;
      // One timer for every schedule too: set for the earliest next occurrence (docs/flows.md#schedules-and-chains).
      const wake = this.scheduleWake(tx);
      if (wake !== null) consider(wake);
      return { due, schedulesOnly: schedulesOnly && due !== undefined };
    });
  }

  /** The schedules' next occurrence, computed again only when the DB changed (the idle lease tick reads no schedule). */
  private scheduleWake(tx: StoreReadTx): number | null {
    const generation = this.options.store.generation;
    if (this.scheduleWakeMemo && this.scheduleWakeMemo.generation === generation && generation !== undefined)
      return this.scheduleWakeMemo.at;
    const at = scheduleWakeAt(tx);
    this.scheduleWakeMemo = { generation, at };
    return at;
  }

  /** `restartLongPoll`: a new live ticket must not wait for the long-poll in flight to time out. */
  plan(options: { restartLongPoll?: boolean } = {}): void {
    const { clock, config, store, timers } = this.options;
    if (!this.running || !this.options.leadership.isLeader) {
      this.clearCycleTimer();
      return;
    }
    if (this.cycleInflight) {
      this.replanAfterCycle = true;
      if (options.restartLongPoll && this.longPollRestart && this.liveTicketOutsideLongPoll()) this.longPollRestart.abort();
      return;
    }
    let due: number | undefined;
    let schedulesOnly = false;
    this.idleAtGeneration = undefined;
    try {
      ({ due, schedulesOnly } = this.planTarget());
    } catch (e) {
      this.options.log(`sync planning failed: ${errorText(e)}`);
      due = clock.now() + config.backoffMs;
    }
    this.clearCycleTimer();
    if (due === undefined) {
      this.idleAtGeneration = store.generation;
      return;
    }
    if (schedulesOnly) this.idleAtGeneration = store.generation;
    const at = Math.max(due, this.backoffUntil);
    this.plannedAt = at;
    this.cycleTimer = timers.setTimeout(
      () => {
        this.cycleTimer = undefined;
        void this.syncNow();
      },
      Math.max(0, at - clock.now()),
    );
  }

  /** Whether a live ticket exists that the long-poll in flight does not watch (cheap: one read). */
  private liveTicketOutsideLongPoll(): boolean {
    return this.options.store.read((tx) =>
      tx.tickets.list({ settleState: 'none', serverState: [...LIVE_TICKET_STATES] }).some((t) => !this.longPollIds.has(t.ticketId)),
    );
  }

  private clearCycleTimer(): void {
    this.options.timers.clearTimeout(this.cycleTimer);
    this.cycleTimer = undefined;
    this.plannedAt = undefined;
  }

  private async runCycle(): Promise<SyncReport> {
    const { store, clock, config, pacing, retaker, gateway, availability } = this.options;
    const report: SyncReport = { statusRequests: 0, ticketsPolled: 0, settleAttempts: 0, settled: 0, retakes: 0, woke: [] };
    if (!this.running) return { ...report, skipped: 'stopped' };
    if (!this.options.leadership.isLeader) return { ...report, skipped: 'not_leader' };
    let failure: unknown;
    try {
      // 1. the settle outbox first
      const flush = await this.options.outbox.flush();
      report.settleAttempts += flush.attempts;
      report.settled += flush.acked;
      if (flush.transportFailure) failure = flush.transportFailure;

      // 2. what is due: a schedule's occurrence queues its task first (one transaction), then
      // live tickets to poll, ticketless queued tasks to retake
      const now = clock.now();
      const scheduleWake = store.read((tx) => this.scheduleWake(tx));
      if (scheduleWake !== null && scheduleWake <= now && store.read((tx) => anyScheduleDue(tx, now))) {
        const fired = await store.mutate((tx) => fireDueSchedules(tx, this.options.newTaskId));
        for (const f of fired)
          this.options.log(`schedule ${f.scheduleId}: ${f.occurrenceKey} ${f.outcome}${f.taskId ? ` as task ${f.taskId}` : ''}`);
      }
      const horizon = now + config.coalesceMs;
      let liveAtStart = new Set<string>();
      const { due, retakes, stale, chained } = store.read((tx) => {
        const live = new Map(tx.tickets.list({ settleState: 'none', serverState: [...LIVE_TICKET_STATES] }).map((t) => [t.ticketId, t]));
        pacing.liveTicketsFitOneLongPoll = live.size <= config.batchSize;
        liveAtStart = new Set(live.keys());
        const dueList: { taskId: string; ticketId: string; knownState?: ServerTicketState }[] = [];
        const retakeList: string[] = [];
        const staleList: { taskId: string; ticketId: string }[] = [];
        const chainedList: string[] = [];
        for (const task of tx.tasks.list({ status: NON_TERMINAL_STATUSES })) {
          if (task.serverTicketId) {
            // a queued task still pointing at a ticket the ledger knows is over (the gateway said
            // so, or its deadline passed, e.g. while the window was closed): repair, never stall
            if (task.status === 'queued' && ticketKnownDead(tx, task.serverTicketId)) {
              staleList.push({ taskId: task.id, ticketId: task.serverTicketId });
              continue;
            }
            const isLive = live.has(task.serverTicketId) || !tx.tickets.get(task.serverTicketId);
            if (isLive && (task.nextPollAt ?? 0) <= horizon)
              dueList.push({ taskId: task.id, ticketId: task.serverTicketId, knownState: live.get(task.serverTicketId)?.serverState });
          } else if (task.status === 'queued') {
            const gate = chainGateOf(tx, task).kind;
            if (gate === 'skip' || (gate === 'go' && task.afterTaskId)) chainedList.push(task.id);
            else if (gate === 'go' && takeDueAt(task, retaker, now) <= now) retakeList.push(task.id);
          }
        }
        return { due: dueList, retakes: retakeList, stale: staleList, chained: chainedList };
      });
      if (chained.length > 0) {
        // A chain that broke skips its task; one that goes may take its ticket now (docs/flows.md#schedules-and-chains).
        const going = await store.mutate((tx) => chained.filter((id) => applyChainGate(tx, id)?.kind === 'go'));
        retakes.push(
          ...store.read((tx) =>
            going.filter((id) => {
              const t = tx.tasks.get(id);
              return t !== undefined && takeDueAt(t, retaker, now) <= now;
            }),
          ),
        );
      }
      if (stale.length > 0) {
        const cleared = await store.mutate((tx) =>
          stale.filter((st) => detachDeadTicket(tx, st.taskId, st.ticketId)).map((st) => st.taskId),
        );
        retakes.push(...cleared);
      }

      // (stopping at the first transport failure: the gateway is unreachable, the cycle backs off)
      for (const taskId of retakes) {
        if (failure) break;
        report.retakes += 1;
        const r = await retaker.retakeDetailed(taskId);
        if (!r.ok && isTransportFailure(r.error)) failure = r.error;
      }

      // 3. status in batches of at most 100, stopping at the first failure of the gateway
      const unique = [...new Map(due.map((d) => [d.ticketId, d])).values()];
      for (let i = 0; i < unique.length && !failure; i += config.batchSize) {
        const batch = unique.slice(i, i + config.batchSize);
        const waitMs = pacing.longPoll && unique.length <= config.batchSize ? config.longPollMs : undefined;
        try {
          report.statusRequests += 1;
          report.ticketsPolled += batch.length;
          const known: Record<string, ServerTicketState> = {};
          for (const b of batch) if (b.knownState) known[b.ticketId] = b.knownState;
          const restart = waitMs !== undefined ? (this.longPollRestart = new AbortController()) : undefined;
          if (restart) this.longPollIds = liveAtStart;
          let answer: Awaited<ReturnType<SyncLoop['statusWithFallback']>>;
          try {
            answer = await this.statusWithFallback(
              batch.map((b) => b.ticketId),
              waitMs,
              known,
              restart?.signal,
            );
          } catch (e) {
            // Restarted on purpose (a ticket appeared): not a failure; the next cycle starts at once.
            if (restart?.signal.aborted && !this.options.signal().aborted) break;
            throw e;
          } finally {
            if (this.longPollRestart === restart) this.longPollRestart = undefined;
          }
          const taskOf = new Map(batch.map((b) => [b.ticketId, b.taskId]));
          // Queued tickets carry how the off-peak windows stand: keep it for the cards.
          const queued = answer.tickets.find((entry) => entry.state === 'queued');
          if (queued) availability.noteOffPeakWindow(gateway.offPeakWindowOf(queued));
          const ctx = this.ruleContext;
          const applied = await store.mutate((tx) => {
            const woke: string[] = [];
            const retake: string[] = [];
            for (const entry of answer.tickets) {
              const taskId = taskOf.get(entry.ticket_id);
              if (!taskId) continue;
              const r = applyStatusEntry(tx, taskId, entry, ctx);
              if (r === 'woke') woke.push(taskId);
              if (r === 'retake') retake.push(taskId);
            }
            return { woke, retake };
          });
          for (const id of applied.woke) {
            report.woke.push(id);
            this.options.onWake(id);
          }
          for (const id of applied.retake) {
            if (failure) break; // the rest stay ticketless and are retaken by a later cycle
            report.retakes += 1;
            retaker.clearBackoff(id);
            const r = await retaker.retakeDetailed(id);
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
      const delay = backoff(config.backoffMs, config.backoffMaxMs, this.cycleFailures - 1);
      this.backoffUntil = clock.now() + delay;
      report.error = errorText(failure);
      this.options.log(`sync cycle failed (${this.cycleFailures} in a row), next try in ${Math.round(delay / 1000)} s: ${report.error}`);
      this.options.onSyncError(failure instanceof Error ? failure : new Error(String(failure)));
      // The panel's "gateway cannot be reached" comes from the availability snapshot: tell it.
      if (isTransportFailure(failure)) availability.noteGatewayUnreachable();
    } else {
      this.cycleFailures = 0;
      this.backoffUntil = 0;
      if (report.statusRequests + report.settleAttempts + report.retakes > 0) availability.noteGatewayAnswered();
    }
    this.options.onSynced(report);
    return report;
  }

  private async statusWithFallback(
    ids: string[],
    waitMs: number | undefined,
    knownStates: Record<string, ServerTicketState>,
    restart?: AbortSignal,
  ) {
    const { gateway, pacing } = this.options;
    const signal = this.options.signal();
    try {
      return await gateway.status(ids, { waitMs, knownStates, signal: restart ? AbortSignal.any([signal, restart]) : signal });
    } catch (e) {
      // A gateway that does not offer long-poll refuses wait_ms: stop asking for it.
      if (waitMs !== undefined && isGatewayError(e) && e.kind === 'rejected' && e.status === 400) {
        pacing.longPoll = false;
        this.options.log('the gateway refused wait_ms; long-poll disabled');
        return await gateway.status(ids, { signal });
      }
      throw e;
    }
  }
}

/**
 * When a ticketless queued task takes its ticket: at once, after its retake backoff, and never
 * before its "not before" time (docs/flows.md#schedules-and-chains).
 */
function takeDueAt(task: OffPeakTask, retaker: Retaker, now: number): number {
  return Math.max(retaker.dueAt(task.id) ?? now, task.notBefore ?? now);
}
