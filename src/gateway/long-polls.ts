// The status long-polls waiting for a change, indexed by the tickets they watch: a change wakes
// only the polls of the changed tickets (plus, when the queue moved, those watching a queued
// ticket, whose position may have changed), and each user may hold at most `maxPerUser` of them.
import type { TicketChange } from './authority';
import type { Counter } from './metrics';
import { PerUserLimit } from './user-limits';

export interface LongPollWaiter {
  /** Re-reads the watched tickets and answers if something the client cares about changed. */
  recheck(): void;
  /** Answers now (shutdown). */
  finish(): void;
}

interface Entry {
  waiter: LongPollWaiter;
  ticketIds: readonly string[];
  watchesQueue: boolean;
}

export class LongPollRegistry {
  private readonly byTicket = new Map<string, Set<Entry>>();
  private readonly queueWatchers = new Set<Entry>();
  private readonly entries = new Set<Entry>();
  private readonly perUser: PerUserLimit;

  constructor(
    maxPerUser: number,
    private readonly rechecks?: Counter,
  ) {
    this.perUser = new PerUserLimit(maxPerUser);
  }

  /**
   * Registers a waiting poll; returns its removal function, or null when the user already holds
   * the maximum (the caller answers at once instead of waiting).
   */
  add(userId: string, ticketIds: readonly string[], watchesQueue: boolean, waiter: LongPollWaiter): (() => void) | null {
    const release = this.perUser.tryAcquire(userId);
    if (!release) return null;
    const entry: Entry = { waiter, ticketIds, watchesQueue };
    this.entries.add(entry);
    if (watchesQueue) this.queueWatchers.add(entry);
    for (const id of ticketIds) {
      let set = this.byTicket.get(id);
      if (!set) this.byTicket.set(id, (set = new Set()));
      set.add(entry);
    }
    return () => {
      if (!this.entries.delete(entry)) return;
      release();
      this.queueWatchers.delete(entry);
      for (const id of ticketIds) {
        const set = this.byTicket.get(id);
        set?.delete(entry);
        if (set?.size === 0) this.byTicket.delete(id);
      }
    };
  }

  /** Wakes the polls the change may concern: O(polls watching the changed tickets). */
  notify(change: TicketChange): void {
    const affected = new Set<Entry>(change.unknown ? this.entries : change.queueMoved ? this.queueWatchers : []);
    for (const id of change.ticketIds) for (const entry of this.byTicket.get(id) ?? []) affected.add(entry);
    for (const entry of affected) {
      if (!this.entries.has(entry)) continue; // answered by an earlier recheck in this loop
      this.rechecks?.inc();
      entry.waiter.recheck();
    }
  }

  finishAll(): void {
    for (const entry of [...this.entries]) entry.waiter.finish();
  }

  get size(): number {
    return this.entries.size;
  }
}
