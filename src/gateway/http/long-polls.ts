// The status long-polls waiting for a change, indexed by the tickets they watch: a change wakes
// only the polls of the changed tickets (plus, when the queue moved, those watching a queued
// ticket, whose position may have changed), and each user may hold at most `maxPerUser` of them;
// the status route that holds one and then answers.
import type { ServerResponse } from 'node:http';
import type { StatusResponse } from '../../protocol/gateway';
import type { TicketAuthority, TicketChange } from '../authority/authority';
import type { GatewayUser } from './auth';
import type { Counter } from './metrics';
import { sendSerialized } from './responses';
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

export interface StatusWait {
  authority: TicketAuthority;
  longPolls: LongPollRegistry;
  /** Counts polls answered at once because their user already holds the most allowed. */
  overCap: Counter;
}

/** A status request: whose tickets, which ones (each once), how long it may wait, and the states its client last saw. */
export interface StatusAsk {
  user: GatewayUser;
  ids: string[];
  waitMs: number;
  knownStates: Record<string, string> | undefined;
}

/**
 * Holds a status long-poll until any of `ids` changes state (or queue position) from the first
 * read, `waitMs` passes, the client hangs up, or the gateway shuts down. Answers at once when
 * `knownStates` shows the client missed a change that happened before the poll arrived. The
 * caller then sends the current status.
 */
export async function waitForStatusChange(
  { authority, longPolls, overCap }: StatusWait,
  res: ServerResponse,
  { user, ids, waitMs, knownStates }: StatusAsk,
): Promise<void> {
  // A change during the (asynchronous) first read, another instance's included, must still
  // wake this poll: a listener notes it until the poll is in the waiter index.
  let changedDuringRead = false;
  const stopNoting = authority.onChange(() => {
    changedDuringRead = true;
  });
  let first: StatusResponse;
  try {
    first = await authority.status(user, ids);
  } finally {
    stopNoting();
  }
  // Something the client has not seen yet happened before this poll arrived: answer now.
  if (knownStates && first.tickets.some((t) => t.ticket_id in knownStates && knownStates[t.ticket_id] !== t.state)) return;
  // Long-poll: answer when any ticket's state (or queue position) differs from the first read.
  const fingerprint = (answer: StatusResponse) => JSON.stringify(answer.tickets.map((t) => ({ ...t, next_poll_after_ms: 0 })));
  const initial = fingerprint(first);
  await new Promise<void>((resolve) => {
    let done = false;
    let checking = false;
    let again = false;
    let remove = () => {};
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      remove();
      res.off('close', finish);
      resolve();
    };
    // One status read at a time per poll; changes during a read trigger one more read after it.
    const recheck = () => {
      if (done) return;
      if (checking) {
        again = true;
        return;
      }
      checking = true;
      void (async () => {
        try {
          do {
            again = false;
            if (fingerprint(await authority.status(user, ids)) !== initial) finish();
          } while (again && !done);
        } catch {
          finish();
        } finally {
          checking = false;
        }
      })();
    };
    const watchesQueue = first.tickets.some((t) => t.state === 'queued');
    const registered = longPolls.add(user.id, ids, watchesQueue, { recheck, finish });
    if (!registered) {
      // The user already holds the most long-polls allowed: this one is answered now.
      overCap.inc();
      resolve();
      return;
    }
    remove = registered;
    const timer = setTimeout(finish, waitMs);
    res.on('close', finish);
    if (changedDuringRead) recheck();
  });
}

/**
 * POST /ticket/status once its body is read: a long-poll of at most `maxWaitMs` (none while the
 * gateway shuts down), then the current status.
 */
export async function answerStatus(
  at: StatusWait & { maxWaitMs: number; closing: boolean },
  res: ServerResponse,
  ask: StatusAsk,
): Promise<void> {
  const wait = Math.min(ask.waitMs, at.maxWaitMs);
  if (wait > 0 && !at.closing) await waitForStatusChange(at, res, { ...ask, waitMs: wait });
  if (res.destroyed) return;
  sendSerialized(res, 200, await at.authority.statusJson(ask.user, ask.ids));
}
