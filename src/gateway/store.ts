// Ticket storage behind an interface: SQLite (better-sqlite3, WAL) is the embedded default, the
// in-memory store serves unit tests. Both keep an index of LIVE tickets in memory (the gateway is
// the single writer of its store), so status, admission and the promote timer never scan tables.
import type { SettleReason, TicketState } from '../protocol/gateway';

export interface TicketRecord {
  ticketId: string;
  /** FIFO order: strictly increasing in take order. */
  seq: number;
  userId: string;
  taskId: string;
  state: TicketState;
  takenAt: number;
  readyAt: number | null;
  readyDeadline: number | null;
  activeAt: number | null;
  activeUntil: number | null;
  expiredAt: number | null;
  expiredFrom: 'ready' | 'active' | null;
  settledAt: number | null;
  settleReason: SettleReason | null;
  settledFrom: 'queued' | 'ready' | 'active' | 'expired' | null;
}

export type NewTicket = Pick<TicketRecord, 'ticketId' | 'userId' | 'taskId' | 'takenAt'>;
export type TicketPatch = Partial<Omit<TicketRecord, 'ticketId' | 'seq' | 'userId' | 'taskId' | 'takenAt'>>;

export interface TicketStore {
  /** Inserts a queued ticket and assigns its FIFO sequence number. */
  insert(ticket: NewTicket): TicketRecord;
  get(ticketId: string): TicketRecord | undefined;
  /** Applies `patch` only if the ticket is currently in one of `fromStates`; returns the new record or undefined. */
  update(ticketId: string, fromStates: readonly TicketState[], patch: TicketPatch): TicketRecord | undefined;
  /** The task's live (queued/ready/active) ticket of this user, if any. */
  liveForTask(userId: string, taskId: string): TicketRecord | undefined;
  /** Live tickets of one user. */
  liveForUser(userId: string): TicketRecord[];
  /** Queued tickets in FIFO order (at most `limit`). */
  queued(limit: number): TicketRecord[];
  /** 1-based position of a queued ticket in the FIFO queue. */
  queuePosition(ticket: TicketRecord): number;
  /** Ready and active tickets (they hold segment capacity). */
  holdingCapacity(): TicketRecord[];
  countByState(): Record<TicketState, number>;
  /** Take times (ascending) of a user's tickets taken at or after `since`. */
  takeTimesSince(userId: string, since: number): number[];
  /**
   * Deletes expired/settled tickets that ended before `endedBefore` and were taken before
   * `takenBefore` (so quota history inside the window stays); returns how many.
   */
  pruneFinished(endedBefore: number, takenBefore: number): number;
  /** Runs `fn` atomically (one SQLite transaction). */
  transaction<T>(fn: () => T): T;
  /** Cheap liveness probe for /healthz. */
  ping(): void;
  close(): void;
}

const LIVE = new Set<TicketState>(['queued', 'ready', 'active']);

/** The in-memory index of live tickets shared by both stores. */
export class LiveTicketIndex {
  private readonly live = new Map<string, TicketRecord>();
  private readonly byTask = new Map<string, string>();
  /** Queued tickets' sequence numbers, ascending; with `queuedBySeq` for the records. */
  private readonly queueSeqs: number[] = [];
  private readonly queuedBySeq = new Map<number, TicketRecord>();

  private static taskKey(userId: string, taskId: string): string {
    return `${userId}\u0000${taskId}`;
  }

  get(ticketId: string): TicketRecord | undefined {
    return this.live.get(ticketId);
  }

  /** Records the ticket's new version: adds, moves within or drops from the live index. */
  put(ticket: TicketRecord): void {
    const previous = this.live.get(ticket.ticketId);
    if (previous?.state === 'queued' && ticket.state !== 'queued') this.removeQueued(previous.seq);
    if (!LIVE.has(ticket.state)) {
      if (previous) {
        this.live.delete(ticket.ticketId);
        const key = LiveTicketIndex.taskKey(ticket.userId, ticket.taskId);
        if (this.byTask.get(key) === ticket.ticketId) this.byTask.delete(key);
      }
      return;
    }
    this.live.set(ticket.ticketId, ticket);
    this.byTask.set(LiveTicketIndex.taskKey(ticket.userId, ticket.taskId), ticket.ticketId);
    if (ticket.state === 'queued') {
      if (previous?.state !== 'queued') this.insertQueued(ticket.seq);
      this.queuedBySeq.set(ticket.seq, ticket);
    }
  }

  liveForTask(userId: string, taskId: string): TicketRecord | undefined {
    const id = this.byTask.get(LiveTicketIndex.taskKey(userId, taskId));
    return id === undefined ? undefined : this.live.get(id);
  }

  liveForUser(userId: string): TicketRecord[] {
    return [...this.live.values()].filter((t) => t.userId === userId);
  }

  queued(limit: number): TicketRecord[] {
    return this.queueSeqs.slice(0, limit).map((seq) => this.queuedBySeq.get(seq) as TicketRecord);
  }

  queuePosition(ticket: TicketRecord): number {
    return lowerBound(this.queueSeqs, ticket.seq) + 1;
  }

  holdingCapacity(): TicketRecord[] {
    return [...this.live.values()].filter((t) => t.state === 'ready' || t.state === 'active');
  }

  countLive(): Record<'queued' | 'ready' | 'active', number> {
    const counts = { queued: this.queueSeqs.length, ready: 0, active: 0 };
    for (const t of this.live.values()) if (t.state === 'ready' || t.state === 'active') counts[t.state] += 1;
    return counts;
  }

  private insertQueued(seq: number): void {
    // Sequence numbers only grow, so this is an append except when a store reloads out of order.
    const at = lowerBound(this.queueSeqs, seq);
    this.queueSeqs.splice(at, 0, seq);
  }

  private removeQueued(seq: number): void {
    const at = lowerBound(this.queueSeqs, seq);
    if (this.queueSeqs[at] === seq) this.queueSeqs.splice(at, 1);
    this.queuedBySeq.delete(seq);
  }
}

function lowerBound(sorted: number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The live-ticket queries both stores answer from their in-memory index. */
export abstract class IndexedTicketStore {
  protected index = new LiveTicketIndex();

  liveForTask(userId: string, taskId: string): TicketRecord | undefined {
    return this.index.liveForTask(userId, taskId);
  }

  liveForUser(userId: string): TicketRecord[] {
    return this.index.liveForUser(userId);
  }

  queued(limit: number): TicketRecord[] {
    return this.index.queued(limit);
  }

  queuePosition(ticket: TicketRecord): number {
    return this.index.queuePosition(ticket);
  }

  holdingCapacity(): TicketRecord[] {
    return this.index.holdingCapacity();
  }
}

/** Volatile store for unit tests and `--store memory`; everything is lost on exit. */
export class MemoryTicketStore extends IndexedTicketStore implements TicketStore {
  private readonly all = new Map<string, TicketRecord>();
  private nextSeq = 1;

  insert(ticket: NewTicket): TicketRecord {
    if (this.all.has(ticket.ticketId)) throw new Error(`duplicate ticket id ${ticket.ticketId}`);
    const record: TicketRecord = { ...emptyTicket(), ...ticket, seq: this.nextSeq++, state: 'queued' };
    this.all.set(record.ticketId, record);
    this.index.put(record);
    return record;
  }

  get(ticketId: string): TicketRecord | undefined {
    return this.all.get(ticketId);
  }

  update(ticketId: string, fromStates: readonly TicketState[], patch: TicketPatch): TicketRecord | undefined {
    const current = this.all.get(ticketId);
    if (!current || !fromStates.includes(current.state)) return undefined;
    const next = { ...current, ...patch };
    this.all.set(ticketId, next);
    this.index.put(next);
    return next;
  }

  countByState(): Record<TicketState, number> {
    const counts: Record<TicketState, number> = { queued: 0, ready: 0, active: 0, expired: 0, settled: 0 };
    for (const t of this.all.values()) counts[t.state] += 1;
    return counts;
  }

  takeTimesSince(userId: string, since: number): number[] {
    return [...this.all.values()]
      .filter((t) => t.userId === userId && t.takenAt >= since)
      .map((t) => t.takenAt)
      .sort((a, b) => a - b);
  }

  pruneFinished(endedBefore: number, takenBefore: number): number {
    let removed = 0;
    for (const t of [...this.all.values()]) {
      const ended = t.settledAt ?? t.expiredAt;
      if ((t.state === 'expired' || t.state === 'settled') && ended !== null && ended < endedBefore && t.takenAt < takenBefore) {
        this.all.delete(t.ticketId);
        removed += 1;
      }
    }
    return removed;
  }

  transaction<T>(fn: () => T): T {
    return fn();
  }

  ping(): void {}

  close(): void {}
}

export function emptyTicket(): Omit<TicketRecord, 'ticketId' | 'userId' | 'taskId' | 'takenAt' | 'seq' | 'state'> {
  return {
    readyAt: null,
    readyDeadline: null,
    activeAt: null,
    activeUntil: null,
    expiredAt: null,
    expiredFrom: null,
    settledAt: null,
    settleReason: null,
    settledFrom: null,
  };
}
