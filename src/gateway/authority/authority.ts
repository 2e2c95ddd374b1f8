// The gateway's ticket authority (docs/flows.md#server-ticket-states): takes, the FIFO queue, the
// promote timer, the ready/active/expired lifecycle, quotas, settle, and per-request admission of
// model calls.
// No HTTP here: the server maps these calls to routes, tests can drive them with a ManualClock.
import { randomBytes } from 'node:crypto';
import { durationWords, type Clock } from '../../core/clock';
import type { AvailabilityResponse, ClientConfigsResponse, SettleReason, SettleResponse, TakeResponse, TicketStatusEntry } from '../../protocol/gateway';
import type { GatewayUser } from '../http/auth';
import type { AuthorityPolicy } from './authority-policy';
import { errors } from '../http/errors';
import type { GatewayMetrics } from '../http/metrics';
import { LiveTicketExists, storeGetMany, type GatewayTicketRow, type TicketStore } from '../stores/store';
import { effectiveTicket, TicketStatusView } from './ticket-view';
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
  /**
   * Serialized status entries by ticket record (records are immutable: a change makes a new
   * object, so identity is the version). Reused while the entry's time-dependent parts (state
   * as of now, position, poll hint) are unchanged: JSON.stringify dominates a 100-ticket status.
   */
  private readonly entryJson = new WeakMap<GatewayTicketRow, { state: string; position: number; nextPoll: number | null; held: number; json: string }>();

  constructor(
    private readonly store: TicketStore,
    private readonly clock: Clock,
    readonly windows: OffPeakWindows,
    readonly policy: AuthorityPolicy,
    private readonly metrics?: GatewayMetrics,
    private readonly makeTicketId: () => string = newTicketId,
  ) {
    this.views = new TicketStatusView(store, windows, policy, (now) => this.promotionGate?.promotionBlockedUntil(now) ?? null);
    // Another instance's change can answer this instance's long-polls.
    this.unwatch = store.onExternalChange(() => this.emitChange([], false, true));
  }

  private readonly unwatch: () => void;
  private readonly views: TicketStatusView;
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

  private isEligible(user: GatewayUser): boolean {
    return this.policy.eligiblePlans.includes(user.plan);
  }

  private isExposed(user: GatewayUser): boolean {
    return this.policy.exposureEnabled && user.exposure;
  }

  configs(user: GatewayUser): ClientConfigsResponse {
    const eligible = this.isEligible(user);
    return {
      server_time: this.now(),
      exposure: { enabled: this.isExposed(user) },
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

  /** Room left for `user`: quota and live-ticket limits, with when it grows again. */
  private async room(user: GatewayUser, now: number): Promise<{ quotaLeft: number; quotaNextAt: number | null; liveLeft: number; liveNextAt: number | null }> {
    const times = await this.store.takeTimesSince(user.id, now - this.policy.quotaWindowMs + 1);
    const quotaLeft = Math.max(0, this.policy.takesPerWindow - times.length);
    // The oldest take that must age out before one more fits.
    const blocking = times[times.length - this.policy.takesPerWindow];
    const quotaNextAt = quotaLeft === 0 && blocking !== undefined ? blocking + this.policy.quotaWindowMs : null;
    const live = (await this.store.liveForUser(user.id)).map((t) => effectiveTicket(t, now)).filter((t) => t.state === 'queued' || t.state === 'ready' || t.state === 'active');
    const liveLeft = Math.max(0, this.policy.maxLiveTicketsPerUser - live.length);
    const deadlines = live.map((t) => (t.state === 'ready' ? t.readyDeadline : t.state === 'active' ? t.activeUntil : null)).filter((d): d is number => d !== null);
    const liveNextAt = liveLeft === 0 && deadlines.length > 0 ? Math.min(...deadlines) : null;
    return { quotaLeft, quotaNextAt, liveLeft, liveNextAt };
  }

  async availability(user: GatewayUser): Promise<AvailabilityResponse> {
    const now = this.now();
    const answer = await this.takeAvailability(user, now);
    const opensAt = this.windows.opensAt(now);
    if (opensAt !== undefined) answer.window_opens_at = opensAt;
    return answer;
  }

  private async takeAvailability(user: GatewayUser, now: number): Promise<AvailabilityResponse> {
    if (!this.isExposed(user)) return { server_time: now, can_take: false, can_take_number: 0, next_take_at: null, reason: 'disabled' };
    if (!this.isEligible(user)) return { server_time: now, can_take: false, can_take_number: 0, next_take_at: null, reason: 'not_eligible' };
    const room = await this.room(user, now);
    const number = Math.min(room.quotaLeft, room.liveLeft);
    if (number > 0) return { server_time: now, can_take: true, can_take_number: number, next_take_at: null, reason: null };
    if (room.quotaLeft === 0) {
      // Both limits may bind: the later of the two times is when a take can succeed.
      const next = room.liveLeft === 0 && room.liveNextAt !== null && room.quotaNextAt !== null ? Math.max(room.quotaNextAt, room.liveNextAt) : room.liveLeft === 0 ? null : room.quotaNextAt;
      return { server_time: now, can_take: false, can_take_number: 0, next_take_at: next, reason: 'quota' };
    }
    return { server_time: now, can_take: false, can_take_number: 0, next_take_at: room.liveNextAt, reason: 'live_limit' };
  }

  /**
   * POST /ticket: retry-safe per task_id; 3101 not eligible; 3103 a limit is reached. With the
   * rollout off only new tasks are refused: a take for a task this gateway has given tickets to
   * continues it (its next segment).
   */
  async take(user: GatewayUser, taskId: string): Promise<TakeResponse> {
    const now = this.now();
    if (!this.isExposed(user) && !(await this.store.hasTicketForTask(user.id, taskId))) throw errors.notEligible('off-peak tasks are not available for this account');
    if (!this.isEligible(user)) throw errors.notEligible(`the "${user.plan}" plan does not include off-peak tasks${this.policy.upgradeHint ? `: ${this.policy.upgradeHint}` : ''}`);
    let changed: string[] = [];
    // Refusals leave the transaction normally (no rollback needed) and are thrown after it.
    const result = await this.store.transaction(async (): Promise<{ ticket: GatewayTicketRow; reused: boolean } | { refusal: Error }> => {
      // Every instance's takes of this user queue here, so the limits below see each other's inserts.
      await this.store.lockUser(user.id);
      changed = await this.expireDue(now);
      const existing = await this.store.liveForTask(user.id, taskId);
      if (existing) return { ticket: existing, reused: true };
      const room = await this.room(user, now);
      if (room.liveLeft === 0) {
        return { refusal: errors.limitReached(`at most ${this.policy.maxLiveTicketsPerUser} live tickets per user`, room.liveNextAt, now) };
      }
      if (room.quotaLeft === 0) {
        return { refusal: errors.limitReached(`at most ${this.policy.takesPerWindow} ticket${this.policy.takesPerWindow === 1 ? '' : 's'} per ${durationWords(this.policy.quotaWindowMs)}`, room.quotaNextAt, now) };
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
    if (!result.reused) this.metrics?.takes.inc();
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
  async status(user: GatewayUser, ticketIds: readonly string[]): Promise<{ server_time: number; tickets: TicketStatusEntry[]; next_poll_after_ms: number | null }> {
    const now = this.now();
    const { entries } = await this.ownEntries(user, ticketIds, now);
    const tickets = ticketIds.map((id, i): TicketStatusEntry => entries[i] ?? { ticket_id: id, state: 'not_found', next_poll_after_ms: null });
    let next: number | null = null;
    for (const t of tickets) if (t.next_poll_after_ms !== null && (next === null || t.next_poll_after_ms < next)) next = t.next_poll_after_ms;
    return { server_time: now, tickets, next_poll_after_ms: next };
  }

  /** The same answer as `status`, serialized (byte-identical to JSON.stringify of it). */
  async statusJson(user: GatewayUser, ticketIds: readonly string[]): Promise<string> {
    const now = this.now();
    const parts: string[] = [];
    let next: number | null = null;
    const { stored, entries } = await this.ownEntries(user, ticketIds, now);
    for (const [i, id] of ticketIds.entries()) {
      const ticket = stored[i];
      const entry = entries[i];
      if (!ticket || !entry) {
        parts.push(JSON.stringify({ ticket_id: id, state: 'not_found', next_poll_after_ms: null }));
        continue;
      }
      const position = entry.state === 'queued' ? entry.position : 0;
      const held = entry.state === 'queued' ? (entry.promotion_held_until ?? 0) : 0;
      const cached = this.entryJson.get(ticket);
      if (cached && cached.state === entry.state && cached.position === position && cached.nextPoll === entry.next_poll_after_ms && cached.held === held) {
        parts.push(cached.json);
      } else {
        const json = JSON.stringify(entry);
        this.entryJson.set(ticket, { state: entry.state, position, nextPoll: entry.next_poll_after_ms, held, json });
        parts.push(json);
      }
      if (entry.next_poll_after_ms !== null && (next === null || entry.next_poll_after_ms < next)) next = entry.next_poll_after_ms;
    }
    return `{"server_time":${now},"tickets":[${parts.join(',')}],"next_poll_after_ms":${next}}`;
  }

  /**
   * The stored tickets of `ticketIds` and, for the user's own, their status entries (undefined for
   * unknown and foreign ones): one store read for all, then the queue positions in one step.
   */
  private async ownEntries(user: GatewayUser, ticketIds: readonly string[], now: number): Promise<{ stored: (GatewayTicketRow | undefined)[]; entries: (TicketStatusEntry | undefined)[] }> {
    const stored = await storeGetMany(this.store, ticketIds);
    const own = stored.filter((t): t is GatewayTicketRow => t !== undefined && t.userId === user.id);
    const ownEntries = await this.views.entries(own, now);
    let o = 0;
    const entries = stored.map((t) => (t !== undefined && t.userId === user.id ? ownEntries[o++] : undefined));
    return { stored, entries };
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
      const next = await this.store.update(ticketId, [ticket.state], { state: 'settled', settledAt: now, settleReason: reason, settledFrom: from });
      changed = next !== undefined;
      leftQueue = from === 'queued';
      return next;
    });
    if (!settled || settled.state !== 'settled') throw errors.internal(`ticket ${ticketId} could not be settled`);
    if (changed) {
      this.metrics?.settles.inc();
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
          const next = await this.store.update(ticket.ticketId, ['queued'], { state: 'ready', readyAt: now, readyDeadline: now + this.policy.readyTtlMs });
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
    this.metrics?.promotions.inc(result.promoted.length);
    if (result.expired.length > 0 || result.promoted.length > 0) this.emitChange([...result.expired, ...result.promoted], result.promoted.length > 0);
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
    const releaseSlot = await this.store.modelSlots.tryAcquire(user.id, ticket.ticketId, this.policy.maxConcurrentModelRequests, this.policy.maxModelRequestsPerUser);
    if (releaseSlot === 'user') throw errors.notAdmitted(`at most ${this.policy.maxModelRequestsPerUser} model requests of one user at once`, this.policy.busyRetryAfterMs);
    if (releaseSlot === 'total') throw errors.notAdmitted('no model-request capacity right now', this.policy.busyRetryAfterMs);
    let current = ticket;
    let activated = false;
    if (ticket.state === 'ready') {
      try {
        const next = await this.store.transaction(() => this.store.update(ticket.ticketId, ['ready'], { state: 'active', activeAt: now, activeUntil: now + this.policy.activeWindowMs }));
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
    this.metrics?.admissions.inc();
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
      const next = await this.store.update(ticket.ticketId, [ticket.state], { state: 'expired', expiredAt: effective.expiredAt, expiredFrom: effective.expiredFrom });
      if (next) {
        expired.push(next.ticketId);
        this.metrics?.expirations.inc({ from: effective.expiredFrom ?? 'ready' });
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
