// Ticket storage behind an interface: SQLite (better-sqlite3, WAL) is the embedded default, the
// in-memory store serves unit tests and demos, MySQL/MariaDB (mysql-store.ts) lets several gateway
// instances share one queue. The two one-process stores keep an index of LIVE tickets in memory
// (their gateway is the only writer), so status, admission and the promote timer never scan tables.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { SettleReason, TicketState } from '../../protocol/gateway';
import { MemoryAccountLimitStore, type AccountLimitStore } from '../model/account-limit-store';
import { PerUserLimit } from '../http/user-limits';

/** One ticket as the gateway stores it (the extension's own ledger row is core's `TicketRecord`). */
export interface GatewayTicketRow {
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

export type NewTicket = Pick<GatewayTicketRow, 'ticketId' | 'userId' | 'taskId' | 'takenAt'>;
export type TicketPatch = Partial<Omit<GatewayTicketRow, 'ticketId' | 'seq' | 'userId' | 'taskId' | 'takenAt'>>;

/**
 * The gateway's storage seam. Asynchronous because a shared database (MySQL) answers over the
 * network; the embedded stores answer at once. Writes happen inside `transaction`.
 */
export interface TicketStore {
  /** Inserts a queued ticket and assigns its FIFO sequence number. Throws LiveTicketExists when the task already has a live ticket. */
  insert(ticket: NewTicket): Promise<GatewayTicketRow>;
  get(ticketId: string): Promise<GatewayTicketRow | undefined>;
  /**
   * `get` of several tickets at once, in the order asked (the status route). Optional: without
   * it callers run `get` per id (storeGetMany). The embedded stores answer in one step.
   */
  getMany?(ticketIds: readonly string[]): Promise<(GatewayTicketRow | undefined)[]>;
  /** Applies `patch` only if the ticket is currently in one of `fromStates`; returns the new record or undefined. */
  update(ticketId: string, fromStates: readonly TicketState[], patch: TicketPatch): Promise<GatewayTicketRow | undefined>;
  /** The task's live (queued/ready/active) ticket of this user, if any. */
  liveForTask(userId: string, taskId: string): Promise<GatewayTicketRow | undefined>;
  /**
   * Whether this user has a ticket for this task in the store, in any state (finished ones too,
   * while retention keeps them): a take for such a task continues it.
   */
  hasTicketForTask(userId: string, taskId: string): Promise<boolean>;
  /** Live tickets of one user. */
  liveForUser(userId: string): Promise<GatewayTicketRow[]>;
  /** Queued tickets in FIFO order (at most `limit`). Inside a promote transaction the shared store locks them. */
  queued(limit: number): Promise<GatewayTicketRow[]>;
  /** 1-based position of a queued ticket in the FIFO queue. */
  queuePosition(ticket: GatewayTicketRow): Promise<number>;
  /** `queuePosition` of several queued tickets at once. Optional, like `getMany` (storeQueuePositions). */
  queuePositions?(tickets: readonly GatewayTicketRow[]): Promise<number[]>;
  /** Ready and active tickets (they hold segment capacity), in FIFO order. */
  holdingCapacity(): Promise<GatewayTicketRow[]>;
  countByState(): Promise<Record<TicketState, number>>;
  /** Take times (ascending) of a user's tickets taken at or after `since`. */
  takeTimesSince(userId: string, since: number): Promise<number[]>;
  /**
   * Deletes expired/settled tickets that ended before `endedBefore` and were taken before
   * `takenBefore` (so quota history inside the window stays); returns how many.
   */
  pruneFinished(endedBefore: number, takenBefore: number): Promise<number>;
  /** Runs `fn` atomically. Transactions of one store never interleave their writes. */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Inside a transaction: serializes this user's takes with every other gateway instance's, so
   * the quota and live-ticket checks and the insert are one step (no-op for one-process stores).
   */
  lockUser(userId: string): Promise<void>;
  /**
   * Inside a transaction: becomes the one promoter until the transaction ends; false when another
   * instance is promoting right now (then this tick does nothing).
   */
  lockPromoter(): Promise<boolean>;
  /** Model-request slots shared by every instance on this store. */
  readonly modelSlots: ModelSlots;
  /** Where the account's usage-limit hold is kept (docs/flows.md#usage-limits); absent: the store cannot keep one. */
  accountLimitStore?(): AccountLimitStore;
  /** Calls `listener` when another instance changed tickets (shared stores only); returns an unsubscribe. */
  onExternalChange(listener: () => void): () => void;
  /** Cheap liveness probe for /healthz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The tickets of `ids` in order, in one step when the store can. */
export function storeGetMany(store: TicketStore, ids: readonly string[]): Promise<(GatewayTicketRow | undefined)[]> {
  return store.getMany ? store.getMany(ids) : Promise.all(ids.map((id) => store.get(id)));
}

/** The queue positions of queued `tickets` in order, in one step when the store can. */
export function storeQueuePositions(store: TicketStore, tickets: readonly GatewayTicketRow[]): Promise<number[]> {
  return store.queuePositions ? store.queuePositions(tickets) : Promise.all(tickets.map((t) => store.queuePosition(t)));
}

/** Thrown by `insert` when the (user, task) already has a live ticket (the unique key held). */
export class LiveTicketExists extends Error {
  constructor(taskId: string) {
    super(`task ${taskId} has a live ticket`);
  }
}

/** Counts model requests forwarded upstream right now, across every instance sharing the store. */
export interface ModelSlots {
  /**
   * Takes a slot if fewer than `max` are held in all and fewer than `maxPerUser` by this user:
   * returns its release, or which limit is full.
   */
  tryAcquire(userId: string, ticketId: string, max: number, maxPerUser: number): Promise<(() => Promise<void>) | 'total' | 'user'>;
}

/** Slots of one process: counters. */
export class LocalModelSlots implements ModelSlots {
  private held = 0;
  private perUser: PerUserLimit | undefined;

  tryAcquire(userId: string, _ticketId: string, max: number, maxPerUser: number): Promise<(() => Promise<void>) | 'total' | 'user'> {
    if (this.held >= max) return Promise.resolve('total');
    if (this.perUser?.max !== maxPerUser) this.perUser = new PerUserLimit(maxPerUser);
    const releaseUser = this.perUser.tryAcquire(userId);
    if (!releaseUser) return Promise.resolve('user');
    this.held += 1;
    let released = false;
    return Promise.resolve(() => {
      if (!released) {
        released = true;
        this.held -= 1;
        releaseUser();
      }
      return Promise.resolve();
    });
  }
}

/** Runs async critical sections one at a time (the one-process stores' transactions). */
export class AsyncMutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

const LIVE = new Set<TicketState>(['queued', 'ready', 'active']);

/** The in-memory index of live tickets shared by both stores. */
export class LiveTicketIndex {
  private readonly live = new Map<string, GatewayTicketRow>();
  private readonly byTask = new Map<string, string>();
  /** Queued tickets' sequence numbers, ascending; with `queuedBySeq` for the records. */
  private readonly queueSeqs: number[] = [];
  private readonly queuedBySeq = new Map<number, GatewayTicketRow>();

  private static taskKey(userId: string, taskId: string): string {
    return `${userId}\u0000${taskId}`;
  }

  get(ticketId: string): GatewayTicketRow | undefined {
    return this.live.get(ticketId);
  }

  /** Records the ticket's new version: adds, moves within or drops from the live index. */
  put(ticket: GatewayTicketRow): void {
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

  liveForTask(userId: string, taskId: string): GatewayTicketRow | undefined {
    const id = this.byTask.get(LiveTicketIndex.taskKey(userId, taskId));
    return id === undefined ? undefined : this.live.get(id);
  }

  liveForUser(userId: string): GatewayTicketRow[] {
    return [...this.live.values()].filter((t) => t.userId === userId);
  }

  queued(limit: number): GatewayTicketRow[] {
    return this.queueSeqs.slice(0, limit).map((seq) => this.queuedBySeq.get(seq) as GatewayTicketRow);
  }

  queuePosition(ticket: GatewayTicketRow): number {
    return lowerBound(this.queueSeqs, ticket.seq) + 1;
  }

  holdingCapacity(): GatewayTicketRow[] {
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

/**
 * The live-ticket queries both one-process stores answer from their in-memory index, and what
 * else they share: one process is the only writer, so a mutex is enough to serialize
 * transactions and the locks other instances would need are no-ops.
 */
export abstract class IndexedTicketStore {
  protected index = new LiveTicketIndex();
  readonly modelSlots: ModelSlots = new LocalModelSlots();
  protected readonly mutex = new AsyncMutex();
  /**
   * Set inside a transaction's async flow, so nested calls join it and concurrent ones wait. It is
   * enabled only while transactions run or wait: an enabled AsyncLocalStorage makes node track
   * every promise of the process (async hooks), which cost the status route about a fifth of its
   * CPU (bench/results/gateway.json).
   */
  private readonly inTransaction = new AsyncLocalStorage<true>();
  /** Transactions started and not yet finished (running or waiting for the mutex). */
  private openTransactions = 0;

  liveForTask(userId: string, taskId: string): Promise<GatewayTicketRow | undefined> {
    return Promise.resolve(this.index.liveForTask(userId, taskId));
  }

  liveForUser(userId: string): Promise<GatewayTicketRow[]> {
    return Promise.resolve(this.index.liveForUser(userId));
  }

  queued(limit: number): Promise<GatewayTicketRow[]> {
    return Promise.resolve(this.index.queued(limit));
  }

  queuePosition(ticket: GatewayTicketRow): Promise<number> {
    return Promise.resolve(this.index.queuePosition(ticket));
  }

  queuePositions(tickets: readonly GatewayTicketRow[]): Promise<number[]> {
    return Promise.resolve(tickets.map((t) => this.index.queuePosition(t)));
  }

  holdingCapacity(): Promise<GatewayTicketRow[]> {
    return Promise.resolve(this.index.holdingCapacity().sort((a, b) => a.seq - b.seq));
  }

  transaction<T>(fn: () => Promise<T>): Promise<T> {
    // Nested calls run inside the outer transaction.
    if (this.inTransaction.getStore()) return fn();
    this.openTransactions += 1;
    return this.mutex
      .run(() => this.inTransaction.run(true, () => this.atomically(fn)))
      .finally(() => {
        this.openTransactions -= 1;
        if (this.openTransactions === 0) this.inTransaction.disable();
      });
  }

  /** Runs `fn` as one unit of the underlying storage. */
  protected abstract atomically<T>(fn: () => Promise<T>): Promise<T>;

  lockUser(): Promise<void> {
    return Promise.resolve();
  }

  lockPromoter(): Promise<boolean> {
    return Promise.resolve(true);
  }

  onExternalChange(): () => void {
    return () => undefined;
  }
}

/** Volatile store for unit tests and `--store memory`; everything is lost on exit. */
export class MemoryTicketStore extends IndexedTicketStore implements TicketStore {
  private readonly accountLimits = new MemoryAccountLimitStore();
  accountLimitStore(): AccountLimitStore {
    return this.accountLimits;
  }

  private readonly all = new Map<string, GatewayTicketRow>();
  private nextSeq = 1;

  insert(ticket: NewTicket): Promise<GatewayTicketRow> {
    if (this.all.has(ticket.ticketId)) return Promise.reject(new Error(`duplicate ticket id ${ticket.ticketId}`));
    if (this.index.liveForTask(ticket.userId, ticket.taskId)) return Promise.reject(new LiveTicketExists(ticket.taskId));
    const record = newQueuedTicket(ticket, this.nextSeq++);
    this.all.set(record.ticketId, record);
    this.index.put(record);
    return Promise.resolve(record);
  }

  get(ticketId: string): Promise<GatewayTicketRow | undefined> {
    return Promise.resolve(this.all.get(ticketId));
  }

  getMany(ticketIds: readonly string[]): Promise<(GatewayTicketRow | undefined)[]> {
    return Promise.resolve(ticketIds.map((id) => this.all.get(id)));
  }

  hasTicketForTask(userId: string, taskId: string): Promise<boolean> {
    return Promise.resolve([...this.all.values()].some((t) => t.userId === userId && t.taskId === taskId));
  }

  update(ticketId: string, fromStates: readonly TicketState[], patch: TicketPatch): Promise<GatewayTicketRow | undefined> {
    const current = this.all.get(ticketId);
    if (!current || !fromStates.includes(current.state)) return Promise.resolve(undefined);
    const next = { ...current, ...patch };
    this.all.set(ticketId, next);
    this.index.put(next);
    return Promise.resolve(next);
  }

  countByState(): Promise<Record<TicketState, number>> {
    const counts: Record<TicketState, number> = { queued: 0, ready: 0, active: 0, expired: 0, settled: 0 };
    for (const t of this.all.values()) counts[t.state] += 1;
    return Promise.resolve(counts);
  }

  takeTimesSince(userId: string, since: number): Promise<number[]> {
    return Promise.resolve(
      [...this.all.values()]
        .filter((t) => t.userId === userId && t.takenAt >= since)
        .map((t) => t.takenAt)
        .sort((a, b) => a - b),
    );
  }

  pruneFinished(endedBefore: number, takenBefore: number): Promise<number> {
    let removed = 0;
    for (const t of [...this.all.values()]) {
      const ended = t.settledAt ?? t.expiredAt;
      if ((t.state === 'expired' || t.state === 'settled') && ended !== null && ended < endedBefore && t.takenAt < takenBefore) {
        this.all.delete(t.ticketId);
        removed += 1;
      }
    }
    return Promise.resolve(removed);
  }

  protected atomically<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  ping(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** The row a store returns for a ticket it has just inserted with FIFO number `seq`. */
export function newQueuedTicket(ticket: NewTicket, seq: number): GatewayTicketRow {
  return {
    ticketId: ticket.ticketId,
    seq,
    userId: ticket.userId,
    taskId: ticket.taskId,
    state: 'queued',
    takenAt: ticket.takenAt,
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
