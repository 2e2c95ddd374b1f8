// How a stored ticket reads at a given instant: a passed deadline reads as expired before the
// promote timer persists it, and the status entry a client sees carries its next poll hint.
import type {
  ActiveTicketStatus,
  ExpiredTicketStatus,
  QueuedTicketStatus,
  ReadyTicketStatus,
  SettleReason,
  SettledTicketStatus,
  TicketState,
  TicketStatusEntry,
} from '../../protocol/gateway';
import type { AuthorityPolicy } from './authority-policy';
import { storeQueuePositions, type GatewayTicketRow, type TicketStore } from '../stores/store';
import type { OffPeakWindows } from './windows';

/** When a ready or active ticket's time runs out (its ready deadline, its segment's end), or null in any other state. */
function runsOutAt(ticket: GatewayTicketRow): number | null {
  if (ticket.state === 'ready') return ticket.readyDeadline;
  return ticket.state === 'active' ? ticket.activeUntil : null;
}

/** The ticket as of `now`: deadlines passed read as expired even before the timer persists it. */
export function effectiveTicket(ticket: GatewayTicketRow, now: number): GatewayTicketRow {
  const runsOut = runsOutAt(ticket);
  if (runsOut === null || now < runsOut) return ticket;
  return { ...ticket, state: 'expired', expiredAt: runsOut, expiredFrom: ticket.state as 'ready' | 'active' };
}

/** Every field a stored ticket's status entry may carry, with its type; which ones a state has is the protocol's. */
type EntryFields = { state: TicketState } & Partial<
  Omit<QueuedTicketStatus, 'state'> &
    Omit<ReadyTicketStatus, 'state'> &
    Omit<ActiveTicketStatus, 'state'> &
    Omit<ExpiredTicketStatus, 'state'> &
    Omit<SettledTicketStatus, 'state'>
>;

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

  /**
   * `t` is already effective; `position` is its queue position when queued. One literal holds the
   * fields every entry opens with, and the state's own are added to it in the order clients read
   * them: this is the hot path of status, and a spread here made building entries many times slower.
   */
  private entryOf(t: GatewayTicketRow, now: number, position: number): TicketStatusEntry {
    const entry: EntryFields = { ticket_id: t.ticketId, task_id: t.taskId, taken_at: t.takenAt, state: t.state };
    switch (t.state) {
      case 'queued': {
        entry.position = position;
        entry.next_poll_after_ms = this.queuedPollMs(now);
        const opensAt = this.windows.opensAt(now);
        if (opensAt !== undefined) entry.window_opens_at = opensAt;
        const held = this.promotionHeldUntil(now);
        if (held !== null) entry.promotion_held_until = held;
        return entry as QueuedTicketStatus;
      }
      case 'ready':
        entry.ready_at = t.readyAt as number;
        entry.ready_deadline = t.readyDeadline as number;
        break;
      case 'active':
        entry.ready_at = t.readyAt as number;
        entry.active_at = t.activeAt as number;
        entry.active_until = t.activeUntil as number;
        break;
      case 'expired':
        entry.expired_at = t.expiredAt as number;
        entry.expired_from = t.expiredFrom ?? 'ready';
        break;
      case 'settled':
        entry.settled_at = t.settledAt as number;
        entry.reason = t.settleReason as SettleReason;
        break;
    }
    // A ready or active ticket changes when its time runs out at the latest; a finished one never does.
    const runsOut = runsOutAt(t);
    entry.next_poll_after_ms = runsOut === null ? null : this.untilPoll(runsOut, now);
    return entry as TicketStatusEntry;
  }
}
