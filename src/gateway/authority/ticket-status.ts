// The status answer of the ticket authority: a pure read of the user's own tickets (unknown and
// foreign ones read as `not_found`), and the same answer serialized with each entry's JSON reused
// while it is unchanged.
import type { TicketStatusEntry } from '../../protocol/gateway';
import type { GatewayUser } from '../http/auth';
import { storeGetMany, type GatewayTicketRow, type TicketStore } from '../stores/store';
import type { TicketStatusView } from './ticket-view';

export class TicketStatusReader {
  /**
   * Serialized status entries by ticket record (records are immutable: a change makes a new
   * object, so identity is the version). Reused while the entry's time-dependent parts (state
   * as of now, position, poll hint) are unchanged: JSON.stringify dominates a 100-ticket status.
   */
  private readonly entryJson = new WeakMap<
    GatewayTicketRow,
    { state: string; position: number; nextPoll: number | null; held: number; json: string }
  >();

  constructor(
    private readonly store: TicketStore,
    private readonly views: TicketStatusView,
  ) {}

  /** The answer to POST /ticket/status as of `now`. */
  async status(
    user: GatewayUser,
    ticketIds: readonly string[],
    now: number,
  ): Promise<{ server_time: number; tickets: TicketStatusEntry[]; next_poll_after_ms: number | null }> {
    const { entries } = await this.ownEntries(user, ticketIds, now);
    const tickets = ticketIds.map(
      (id, i): TicketStatusEntry => entries[i] ?? { ticket_id: id, state: 'not_found', next_poll_after_ms: null },
    );
    let next: number | null = null;
    for (const t of tickets)
      if (t.next_poll_after_ms !== null && (next === null || t.next_poll_after_ms < next)) next = t.next_poll_after_ms;
    return { server_time: now, tickets, next_poll_after_ms: next };
  }

  /** The same answer as `status`, serialized (byte-identical to JSON.stringify of it). */
  async statusJson(user: GatewayUser, ticketIds: readonly string[], now: number): Promise<string> {
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
      if (
        cached &&
        cached.state === entry.state &&
        cached.position === position &&
        cached.nextPoll === entry.next_poll_after_ms &&
        cached.held === held
      ) {
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
  private async ownEntries(
    user: GatewayUser,
    ticketIds: readonly string[],
    now: number,
  ): Promise<{ stored: (GatewayTicketRow | undefined)[]; entries: (TicketStatusEntry | undefined)[] }> {
    const stored = await storeGetMany(this.store, ticketIds);
    const own = stored.filter((t): t is GatewayTicketRow => t !== undefined && t.userId === user.id);
    const ownEntries = await this.views.entries(own, now);
    let o = 0;
    const entries = stored.map((t) => (t !== undefined && t.userId === user.id ? ownEntries[o++] : undefined));
    return { stored, entries };
  }
}
