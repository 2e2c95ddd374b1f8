// How a stored ticket reads at a given instant: a passed deadline reads as expired before the
// promote timer persists it, and the status entry a client sees carries its next poll hint.
import type { QueuedTicketStatus, SettleReason, TicketStatusEntry } from '../../protocol/gateway';
import type { AuthorityPolicy } from './authority-policy';
import { storeQueuePositions, type GatewayTicketRow, type TicketStore } from '../stores/store';
import type { OffPeakWindows } from './windows';

/** The ticket as of `now`: deadlines passed read as expired even before the timer persists it. */
export function effectiveTicket(ticket: GatewayTicketRow, now: number): GatewayTicketRow {
  if (ticket.state === 'ready' && ticket.readyDeadline !== null && now >= ticket.readyDeadline) {
    return { ...ticket, state: 'expired', expiredAt: ticket.readyDeadline, expiredFrom: 'ready' };
  }
  if (ticket.state === 'active' && ticket.activeUntil !== null && now >= ticket.activeUntil) {
    return { ...ticket, state: 'expired', expiredAt: ticket.activeUntil, expiredFrom: 'active' };
  }
  return ticket;
}

export class TicketStatusView {
  constructor(
    private readonly store: TicketStore,
    private readonly windows: OffPeakWindows,
    private readonly policy: AuthorityPolicy,
    /** Until when nothing is promoted (the account's usage limits), or null. */
    private readonly promotionHeldUntil: (now: number) => number | null = () => null,
  ) {}

  /** Poll hint (and 3105 Retry-After) for a queued ticket: sooner while the windows are open. */
  queuedPollMs(now: number): number {
    if (this.windows.isOpen(now)) return this.policy.queuedPollMs;
    const openAt = this.windows.nextOpenAt(now);
    if (openAt === null) return this.policy.maxPollMs;
    return Math.min(this.policy.maxPollMs, Math.max(this.policy.queuedPollMs, openAt - now));
  }

  private untilPoll(deadline: number, now: number): number {
    return Math.min(this.policy.maxPollMs, Math.max(1000, deadline - now));
  }

  /** The status entry of one of the user's tickets. */
  async entry(stored: GatewayTicketRow, now: number): Promise<TicketStatusEntry> {
    const t = effectiveTicket(stored, now);
    return this.entryOf(t, now, t.state === 'queued' ? await this.store.queuePosition(t) : 0);
  }

  /** The status entries of several of the user's tickets, with the queue positions read in one step. */
  async entries(stored: readonly GatewayTicketRow[], now: number): Promise<TicketStatusEntry[]> {
    const tickets = stored.map((ticket) => effectiveTicket(ticket, now));
    const queued = tickets.filter((t) => t.state === 'queued');
    const positions = queued.length > 0 ? await storeQueuePositions(this.store, queued) : [];
    let q = 0;
    return tickets.map((t) => this.entryOf(t, now, t.state === 'queued' ? positions[q++] : 0));
  }

  /** `t` is already effective; `position` is its queue position when queued. Plain literals, no spreads: this is the hot path of status. */
  private entryOf(t: GatewayTicketRow, now: number, position: number): TicketStatusEntry {
    switch (t.state) {
      case 'queued': {
        const entry: QueuedTicketStatus = {
          ticket_id: t.ticketId,
          task_id: t.taskId,
          taken_at: t.takenAt,
          state: 'queued',
          position,
          next_poll_after_ms: this.queuedPollMs(now),
        };
        const opensAt = this.windows.opensAt(now);
        if (opensAt !== undefined) entry.window_opens_at = opensAt;
        const held = this.promotionHeldUntil(now);
        if (held !== null) entry.promotion_held_until = held;
        return entry;
      }
      case 'ready':
        return {
          ticket_id: t.ticketId,
          task_id: t.taskId,
          taken_at: t.takenAt,
          state: 'ready',
          ready_at: t.readyAt as number,
          ready_deadline: t.readyDeadline as number,
          next_poll_after_ms: this.untilPoll(t.readyDeadline as number, now),
        };
      case 'active':
        return {
          ticket_id: t.ticketId,
          task_id: t.taskId,
          taken_at: t.takenAt,
          state: 'active',
          ready_at: t.readyAt as number,
          active_at: t.activeAt as number,
          active_until: t.activeUntil as number,
          next_poll_after_ms: this.untilPoll(t.activeUntil as number, now),
        };
      case 'expired':
        return {
          ticket_id: t.ticketId,
          task_id: t.taskId,
          taken_at: t.takenAt,
          state: 'expired',
          expired_at: t.expiredAt as number,
          expired_from: t.expiredFrom ?? 'ready',
          next_poll_after_ms: null,
        };
      case 'settled':
        return {
          ticket_id: t.ticketId,
          task_id: t.taskId,
          taken_at: t.takenAt,
          state: 'settled',
          settled_at: t.settledAt as number,
          reason: t.settleReason as SettleReason,
          next_poll_after_ms: null,
        };
    }
  }
}
