// The gateway's ticket authority (docs/flows.md#server-ticket-states): takes, the FIFO queue, the
// promote timer, the ready/active/expired lifecycle, quotas, settle, and per-request admission of
// model calls. The status reads are in ticket-status.ts, what a user may still take in user-room.ts.
// No HTTP here: the server maps these calls to routes, tests can drive them with a ManualClock.
import { randomBytes } from 'node:crypto';
import { durationWords, type Clock } from '../../core/clock';
import type {
  AvailabilityResponse,
  ClientConfigsResponse,
  SettleReason,
  SettleResponse,
  TakeResponse,
  TicketStatusEntry,
} from '../../protocol/gateway';
import type { GatewayUser } from '../http/auth';
import { isEligible, isExposed, type AuthorityPolicy } from './authority-policy';
import { errors } from '../http/errors';
import type { GatewayMetrics } from '../http/metrics';
import { LiveTicketExists, type GatewayTicketRow, type TicketStore } from '../stores/store';
import { TicketStatusReader } from './ticket-status';
import { effectiveTicket, TicketStatusView } from './ticket-view';
import { takeAvailability, userRoom } from './user-room';
import type { OffPeakWindows } from './windows';

export interface TickResult {
  expired: string[];
  promoted: string[];
  /** Finished tickets deleted by retention in this tick (pruning runs at most hourly). */
  pruned: number;
}

const PRUNE_EVERY_MS = 3_600_000;

export interface Admission {
  ticket: GatewayTicketRow;
  /** True when this request moved the ticket from ready to active. */
  activated: boolean;
  /** Frees the model-request slot; safe to call more than once. */
  release(): Promise<void>;
}

/** What changed: these tickets; `queueMoved` when a ticket left the queue (positions behind it shift). */
export interface TicketChange {
  ticketIds: readonly string[];
  queueMoved: boolean;
  /** Another instance changed tickets, which ones is not known here: every poll re-checks. */
  unknown: boolean;
}

type ChangeListener = (change: TicketChange) => void;

export function newTicketId(): string {
  return `tkt_${randomBytes(16).toString('base64url')}`;
}

export class TicketAuthority {
  private inFlight = 0;
  private lastPruneAt = Number.NEGATIVE_INFINITY;
  /** Demo pacing: when each ready ticket first asked for admission (entries only while admissionHoldMs > 0). */
  private readonly admissionHeldSince = new Map<string, number>();
  private readonly listeners = new Set<ChangeListener>();

  constructor(
    private readonly store: TicketStore,
    private readonly clock: Clock,
    readonly windows: OffPeakWindows,
    readonly policy: AuthorityPolicy,
    private readonly metrics?: GatewayMetrics,
    private readonly makeTicketId: () => string = newTicketId,
  ) {
    this.views = new TicketStatusView(store, windows, policy, (now) => this.promotionGate?.promotionBlockedUntil(now) ?? null);
    this.statusReader = new TicketStatusReader(store, this.views);
    // Another instance's change can answer this instance's long-polls.
    this.unwatch = store.onExternalChange(() => this.emitChange([], false, true));
  }

  private readonly unwatch: () => void;
  private readonly views: TicketStatusView;
  private readonly statusReader: TicketStatusReader;
  /** The account's usage limits (docs/flows.md#usage-limits): while they say so, nothing is promoted. */
  promotionGate: { promotionBlockedUntil(now: number): number | null } | undefined;

  /** Stops listening to the store (before it closes). */
  stop(): void {
    this.unwatch();
  }

  /** Model requests this instance forwards right now (the shared limit is counted by the store). */
  get modelRequestsInFlight(): number {
    return this.inFlight;
  }

  now(): number {
    return this.clock.now();
  }

  /** Called after any ticket changed (state, or queue positions); long-polls listen here. */
  onChange(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emitChange(ticketIds: readonly string[], queueMoved = false, unknown = false): void {
    const change: TicketChange = { ticketIds, queueMoved, unknown };
    for (const listener of [...this.listeners]) listener(change);
  }

  configs(user: GatewayUser): ClientConfigsResponse {
    const eligible = isEligible(this.policy, user);
    return {
      server_time: this.now(),
      exposure: { enabled: isExposed(this.policy, user) },
      allowed_models: this.policy.models.map((m) => ({ id: m.id, display_name: m.display_name })),
      default_model: this.policy.defaultModel,
      plan: {
        name: user.plan,
        eligible,
        upgrade_hint: eligible ? null : this.policy.upgradeHint,
        upgrade_url: eligible ? null : this.policy.upgradeUrl,
      },
      off_peak: { time_zone: this.windows.timeZone, description: this.windows.describe() },
    };
  }

  async availability(user: GatewayUser): Promise<AvailabilityResponse> {
    const now = this.now();
    const answer = await takeAvailability(this.store, this.policy, user, now);
    const opensAt = this.windows.opensAt(now);
    if (opensAt !== undefined) answer.window_opens_at = opensAt;
    return answer;
  }

  /**
   * POST /ticket: retry-safe per task_id; 3101 not eligible; 3103 a limit is reached. With the
   * rollout off only new tasks are refused: a take for a task this gateway has given tickets to
   * continues it (its next segment).
   */
  async take(user: GatewayUser, taskId: string): Promise<TakeResponse> {
    const now = this.now();
    if (!isExposed(this.policy, user) && !(await this.store.hasTicketForTask(user.id, taskId)))
      throw errors.notEligible('off-peak tasks are not available for this account');
    if (!isEligible(this.policy, user))
      throw errors.notEligible(
        `the "${user.plan}" plan does not include off-peak tasks${this.policy.upgradeHint ? `: ${this.policy.upgradeHint}` : ''}`,
      );
    let changed: string[] = [];
    // Refusals leave the transaction normally (no rollback needed) and are thrown after it.
    const result = await this.store.transaction(async (): Promise<{ ticket: GatewayTicketRow; reused: boolean } | { refusal: Error }> => {
      // Every instance's takes of this user queue here, so the limits below see each other's inserts.
      await this.store.lockUser(user.id);
      changed = await this.expireDue(now);
      const existing = await this.store.liveForTask(user.id, taskId);
      if (existing) return { ticket: existing, reused: true };
      const room = await userRoom(this.store, this.policy, user, now);
      if (room.liveLeft === 0) {
        return { refusal: errors.limitReached(`at most ${this.policy.maxLiveTicketsPerUser} live tickets per user`, room.liveNextAt, now) };
      }
      if (room.quotaLeft === 0) {
        return {
          refusal: errors.limitReached(
            `at most ${this.policy.takesPerWindow} ticket${this.policy.takesPerWindow === 1 ? '' : 's'} per ${durationWords(this.policy.quotaWindowMs)}`,
            room.quotaNextAt,
            now,
          ),
        };
      }
      try {
        const inserted = await this.store.insert({ ticketId: this.makeTicketId(), userId: user.id, taskId, takenAt: now });
        changed.push(inserted.ticketId);
        return { ticket: inserted, reused: false };
      } catch (error) {
        // The unique key on a live (user, task) held: a concurrent take won; answer with its ticket.
        if (!(error instanceof LiveTicketExists)) throw error;
        const winner = await this.store.liveForTask(user.id, taskId);
        if (!winner) throw error;
        return { ticket: winner, reused: true };
      }
    });
    if (changed.length > 0) this.emitChange(changed);
    if ('refusal' in result) throw result.refusal;
    if (!result.reused) this.metrics?.count.takes.inc();
    const ticket = result.ticket;
    const entry = await this.views.entry(ticket, now);
    return {
      server_time: now,
      ticket_id: ticket.ticketId,
      task_id: ticket.taskId,
      state: ticket.state as 'queued' | 'ready' | 'active',
      position: entry.state === 'queued' ? entry.position : null,
      ready_deadline: ticket.state === 'ready' ? ticket.readyDeadline : null,
      active_until: ticket.state === 'active' ? ticket.activeUntil : null,
      next_poll_after_ms: entry.next_poll_after_ms ?? this.policy.maxPollMs,
      reused: result.reused,
    };
  }

  /** POST /ticket/status: a pure read (never promotes); unknown and foreign tickets are `not_found`. */
  status(
    user: GatewayUser,
    ticketIds: readonly string[],
  ): Promise<{ server_time: number; tickets: TicketStatusEntry[]; next_poll_after_ms: number | null }> {
    return this.statusReader.status(user, ticketIds, this.now());
  }

  /** The same answer as `status`, serialized (byte-identical to JSON.stringify of it). */
  statusJson(user: GatewayUser, ticketIds: readonly string[]): Promise<string> {
    return this.statusReader.statusJson(user, ticketIds, this.now());
  }

  /** POST /ticket/:id/settle: idempotent; the first settle's reason and time are the answer forever. */
  async settle(user: GatewayUser, ticketId: string, reason: SettleReason): Promise<SettleResponse> {
    const now = this.now();
    const found = await this.store.get(ticketId);
    if (!found || found.userId !== user.id) throw errors.notFound(`no ticket ${ticketId}`);
    let changed = false;
    let leftQueue = false;
    const settled = await this.store.transaction(async (): Promise<GatewayTicketRow | undefined> => {
      const ticket = await this.store.get(ticketId);
      if (!ticket || ticket.state === 'settled') return ticket;
      const from = effectiveTicket(ticket, now).state as 'queued' | 'ready' | 'active' | 'expired';
      const next = await this.store.update(ticketId, [ticket.state], {
        state: 'settled',
        settledAt: now,
        settleReason: reason,
        settledFrom: from,
      });
      changed = next !== undefined;
      leftQueue = from === 'queued';
      return next;
    });
    if (!settled || settled.state !== 'settled') throw errors.internal(`ticket ${ticketId} could not be settled`);
    if (changed) {
      this.metrics?.count.settles.inc();
      this.emitChange([ticketId], leftQueue);
    }
    return {
      server_time: now,
      ticket_id: settled.ticketId,
      state: 'settled',
      settled_at: settled.settledAt as number,
      reason: settled.settleReason as SettleReason,
      settled_from: settled.settledFrom as 'queued' | 'ready' | 'active' | 'expired',
    };
  }

  /**
   * One run of the promote timer: expire what is due, then — only inside the off-peak windows —
   * promote queued tickets in FIFO order while ready + active stays within the segment capacity.
   */
  async tick(): Promise<TickResult> {
    const result = await this.store.transaction(async (): Promise<TickResult> => {
      // One promoter at a time across instances: capacity is counted and filled in one step.
      if (!(await this.store.lockPromoter())) return { expired: [], promoted: [], pruned: 0 };
      // Read the time as the promoter: promotions then carry times in promotion order.
      const now = this.now();
      const expired = await this.expireDue(now);
      const promoted: string[] = [];
      if (this.windows.isOpen(now) && (this.promotionGate?.promotionBlockedUntil(now) ?? null) === null) {
        const room = this.policy.segmentCapacity - (await this.store.holdingCapacity()).length;
        const holdMs = this.policy.queueHoldMs ?? 0;
        for (const ticket of room > 0 ? await this.store.queued(room) : []) {
          if (now < ticket.takenAt + holdMs) break; // FIFO: the ones behind were taken later
          const next = await this.store.update(ticket.ticketId, ['queued'], {
            state: 'ready',
            readyAt: now,
            readyDeadline: now + this.policy.readyTtlMs,
          });
          if (next) promoted.push(next.ticketId);
        }
      }
      let pruned = 0;
      if (this.policy.retentionMs > 0 && now - this.lastPruneAt >= PRUNE_EVERY_MS) {
        this.lastPruneAt = now;
        pruned = await this.store.pruneFinished(now - this.policy.retentionMs, now - this.policy.quotaWindowMs);
      }
      return { expired, promoted, pruned };
    });
    this.metrics?.count.promotions.inc(result.promoted.length);
    if (result.expired.length > 0 || result.promoted.length > 0)
      this.emitChange([...result.expired, ...result.promoted], result.promoted.length > 0);
    return result;
  }

  /**
   * The fine valve for one model request. Unknown, foreign, expired or settled ticket: 3102.
   * Still queued, or no model-request capacity now: 3105 with a wait. A ready ticket becomes
   * active on its first admitted request and keeps its active window from then on.
   */
  async admit(user: GatewayUser, ticketId: string | undefined): Promise<Admission> {
    const now = this.now();
    const ticket = await this.admissible(user, ticketId, now);
    // The slot is shared by every instance on the store: the check in `admissible` is advisory.
    const releaseSlot = await this.store.modelSlots.tryAcquire(
      user.id,
      ticket.ticketId,
      this.policy.maxConcurrentModelRequests,
      this.policy.maxModelRequestsPerUser,
    );
    if (releaseSlot === 'user')
      throw errors.notAdmitted(
        `at most ${this.policy.maxModelRequestsPerUser} model requests of one user at once`,
        this.policy.busyRetryAfterMs,
      );
    if (releaseSlot === 'total') throw errors.notAdmitted('no model-request capacity right now', this.policy.busyRetryAfterMs);
    let current = ticket;
    let activated = false;
    if (ticket.state === 'ready') {
      try {
        const next = await this.store.transaction(() =>
          this.store.update(ticket.ticketId, ['ready'], { state: 'active', activeAt: now, activeUntil: now + this.policy.activeWindowMs }),
        );
        if (next) {
          current = next;
          activated = true;
          this.admissionHeldSince.delete(ticket.ticketId);
        } else {
          // A concurrent first request (maybe on another instance) activated it: use its window.
          const latest = await this.store.get(ticket.ticketId);
          if (!latest || effectiveTicket(latest, now).state !== 'active') throw this.rejectInvalid('ticket changed');
          current = latest;
        }
      } catch (error) {
        await releaseSlot();
        throw error;
      }
    }
    this.inFlight += 1;
    this.metrics?.count.admissions.inc();
    if (activated) this.emitChange([current.ticketId]);
    let released = false;
    return {
      ticket: current,
      activated,
      release: async () => {
        if (released) return;
        released = true;
        this.inFlight -= 1;
        await releaseSlot();
      },
    };
  }

  /**
   * The checks of `admit` without taking a slot or activating anything: throws 3102 or 3105, or
   * returns the ticket as of `now` (ready or active).
   */
  async admissible(user: GatewayUser, ticketId: string | undefined, now = this.now()): Promise<GatewayTicketRow> {
    if (!ticketId) throw this.rejectInvalid('missing X-Off-Peak-Ticket-ID header');
    const stored = await this.store.get(ticketId);
    if (!stored || stored.userId !== user.id) throw this.rejectInvalid('unknown ticket');
    const ticket = effectiveTicket(stored, now);
    if (ticket.state === 'expired' || ticket.state === 'settled') {
      if (stored.state !== ticket.state) {
        // Persist the time-based expiry now so capacity frees without waiting for the timer.
        this.emitChange(await this.store.transaction(() => this.expireDue(now)));
      }
      throw this.rejectInvalid(`ticket ${ticket.state}`);
    }
    if (ticket.state === 'queued') {
      throw errors.notAdmitted('ticket is still queued: wait for off-peak capacity', this.views.queuedPollMs(now));
    }
    const holdMs = this.policy.admissionHoldMs ?? 0;
    if (ticket.state === 'ready' && holdMs > 0) {
      // Counted from the ticket's first model request, so every segment shows the wait however long its agent took to start.
      const since = this.admissionHeldSince.get(ticket.ticketId) ?? now;
      this.admissionHeldSince.set(ticket.ticketId, since);
      if (now < since + holdMs) throw errors.notAdmitted('ticket is ready; admission is held a moment (demo pacing)', since + holdMs - now);
    }
    if (this.inFlight >= this.policy.maxConcurrentModelRequests) {
      throw errors.notAdmitted('no model-request capacity right now', this.policy.busyRetryAfterMs);
    }
    return ticket;
  }

  private rejectInvalid(message: string) {
    return errors.ticketInvalid(message);
  }

  /** Persists time-based expiries of ready and active tickets; returns their ids. */
  private async expireDue(now: number): Promise<string[]> {
    const expired: string[] = [];
    for (const ticket of await this.store.holdingCapacity()) {
      const effective = effectiveTicket(ticket, now);
      if (effective.state !== 'expired') continue;
      const next = await this.store.update(ticket.ticketId, [ticket.state], {
        state: 'expired',
        expiredAt: effective.expiredAt,
        expiredFrom: effective.expiredFrom,
      });
      if (next) {
        expired.push(next.ticketId);
        this.metrics?.count.expirations.inc({ from: effective.expiredFrom ?? 'ready' });
      }
    }
    return expired;
  }

  /** Current counts for /metrics. */
  async counts(): Promise<{ byState: Record<string, number>; queueLength: number; inFlight: number }> {
    const byState = await this.store.countByState();
    return { byState, queueLength: byState.queued, inFlight: this.inFlight };
  }
}
