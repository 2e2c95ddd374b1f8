/**
 * The window's claim on the leader lease. Exactly one window at a time holds it and
 * runs sync, the settle flush and (the runtime's) scheduler; the others serve their UI and user
 * mutations. The holder renews well before expiry; a holder that dies simply stops renewing and
 * another window takes over at once (its process is gone) or, if it only froze, once the lease
 * expires. The lease is a small file beside the DB: the holder's renewal only sets that file's
 * mtime, and a follower's tick only reads it (no lock, no write), then checks again right when
 * the lease it saw expires. No gateway request.
 */
import { systemClock, type Clock } from '../core/clock';
import { Emitter, type Event } from '../core/event';
import { SingleFlight } from '../core/single-flight';
import type { TaskStore } from '../store';
import type { Timers, TimerHandle } from '../core/timers';

export interface LeadershipOptions {
  /** Lease name, shared with the runtime's scheduler. */
  name?: string;
  /** How long a holding lasts without renewal (a frozen holder loses it then). Default 10 min. */
  ttlMs?: number;
  /**
   * How often to check: the holder renews once a third of the ttl has passed (an idle holder
   * touches the lease file a few times per ttl), the others look for a free, expired or orphaned
   * lease (its holder's process gone). Default min(ttl / 3, DEFAULT_LEASE_TICK_MS).
   */
  tickMs?: number;
  /** The store's clock (lease expiry times are on it). Default: wall clock. */
  clock?: Clock;
}

export const LEADER_LEASE = 'leader';
/**
 * Long, because a crashed holder is replaced as soon as a follower sees its process gone; the
 * ttl only bounds how long a frozen (alive but stuck) holder keeps the lease.
 */
export const DEFAULT_LEASE_TTL_MS = 10 * 60_000;
/**
 * How often a window looks at the lease by default: a SIGKILLed holder is replaced within this
 * long. Each check wakes an idle window, which costs CPU on its own, so not more often.
 */
export const DEFAULT_LEASE_TICK_MS = 30_000;
/** A follower's retry lands this long after the expiry it saw, so the lease is really over. */
const LEASE_EXPIRY_MARGIN_MS = 5;

export class Leadership {
  private readonly changed = new Emitter<boolean>();
  private readonly ticked = new Emitter<boolean>();
  /** Fires with the new value when this window gains or loses the lease. */
  readonly onDidChange: Event<boolean> = this.changed.event;
  /** Fires after every acquire/renew attempt, with whether this window holds the lease. */
  readonly onDidTick: Event<boolean> = this.ticked.event;
  private leader = false;
  private timer: TimerHandle | undefined;
  private stopped = true;
  private readonly ticks = new SingleFlight<boolean>();
  private token: string | undefined;
  readonly name: string;
  readonly ttlMs: number;
  readonly tickMs: number;
  private readonly clock: Clock;

  constructor(
    private readonly store: TaskStore,
    private readonly timers: Timers,
    readonly holderId: string,
    options: LeadershipOptions = {},
  ) {
    this.name = options.name ?? LEADER_LEASE;
    this.ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    this.tickMs = options.tickMs ?? Math.min(Math.floor(this.ttlMs / 3), DEFAULT_LEASE_TICK_MS);
    this.clock = options.clock ?? systemClock;
  }

  get isLeader(): boolean {
    return this.leader;
  }

  start(): Promise<boolean> {
    this.stopped = false;
    return this.tick();
  }

  /** Acquire or renew now; resolves to whether this window is the leader. Never throws. */
  tick(): Promise<boolean> {
    return this.ticks.run(() => this.doTick());
  }

  /** Resolves when no acquire/renew is in flight. */
  idle(): Promise<void> {
    return this.ticks.idle();
  }

  /** Stops ticking and hands the lease back so another window need not wait for expiry. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await this.ticks.idle();
    if (this.leader && this.token) {
      try {
        await this.store.releaseLease(this.name, this.token);
      } catch {
        // the lease simply expires
      }
    }
    this.setLeader(false);
  }

  private async doTick(): Promise<boolean> {
    let held = false;
    let nextMs = this.tickMs;
    try {
      const result = await this.store.acquireLease(this.name, this.holderId, this.ttlMs);
      held = result.held;
      this.token = result.held ? result.lease.token : undefined;
      // A follower tries again as soon as the holder's lease runs out (a SIGKILLed holder is
      // replaced within its ttl), and otherwise at the usual pace.
      if (!result.held && result.current)
        nextMs = Math.min(this.tickMs, Math.max(1, result.current.expiresAt - this.clock.now() + LEASE_EXPIRY_MARGIN_MS));
    } catch {
      held = false; // store busy or broken: act as a follower until the next tick
    }
    if (this.stopped) return this.leader;
    this.setLeader(held);
    this.ticked.fire(held);
    this.timers.clearTimeout(this.timer);
    this.timer = this.timers.setTimeout(() => void this.tick(), nextMs);
    return held;
  }

  private setLeader(held: boolean): void {
    if (held === this.leader) return;
    this.leader = held;
    this.changed.fire(held);
  }
}
