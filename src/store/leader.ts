/**
 * Keeps a window's claim on the leader lease (docs/architecture.md#the-lease): acquires it when free or expired,
 * renews it every `renewEveryMs`, and says whether this window is the leader right now.
 * Only the leader runs sync, the scheduler and the settle flush.
 *
 * Leadership is judged against the lease's own expiry: if renewals fail (lock timeouts, disk
 * errors) the window stops calling itself leader when its last confirmed expires_at passes, so
 * two windows never both act as leader. Nothing thrown by a renewal escapes the timer.
 */
import { systemClock, type Clock } from '../core/clock';
import type { LeaseRecord } from '../core/types';
import type { DisposableLike } from '../core/disposable';
import type { TaskStore } from './task-store';

export interface LeaderElectionOptions {
  /** Lease name (one per role). Default 'leader'. */
  name?: string;
  /** This window's identity, e.g. a random id per extension host. */
  holder: string;
  /** How long a holding lasts without renewal. Default 30 s. */
  ttlMs?: number;
  /** How often to renew or retry. Default ttl / 3. */
  renewEveryMs?: number;
  clock?: Clock;
  /** Errors from renewals (for a log); they never stop the election. */
  onError?: (err: unknown) => void;
}

export class LeaderElection {
  private readonly name: string;
  private readonly ttlMs: number;
  private readonly renewEveryMs: number;
  private readonly clock: Clock;
  private lease: LeaseRecord | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = true;
  private leader = false;
  private readonly listeners = new Set<(isLeader: boolean) => void>();

  constructor(
    private readonly store: TaskStore,
    private readonly options: LeaderElectionOptions,
  ) {
    this.name = options.name ?? 'leader';
    this.ttlMs = options.ttlMs ?? 30_000;
    this.renewEveryMs = options.renewEveryMs ?? Math.max(10, Math.floor(this.ttlMs / 3));
    this.clock = options.clock ?? systemClock;
  }

  /** True while this window holds an unexpired lease. */
  get isLeader(): boolean {
    this.refreshLeadership();
    return this.leader;
  }

  /** The current holding, while leader. */
  get holding(): LeaseRecord | undefined {
    return this.isLeader ? this.lease : undefined;
  }

  onDidChange(listener: (isLeader: boolean) => void): DisposableLike {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Starts contending; resolves after the first attempt. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.renewEveryMs);
    this.timer.unref?.();
  }

  /** Stops renewing and releases the lease if held, so another window can take over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
    const lease = this.lease;
    this.lease = undefined;
    this.setLeader(false);
    if (lease) {
      try {
        await this.store.releaseLease(this.name, lease.token);
      } catch (err) {
        this.options.onError?.(err);
      }
    }
  }

  /** One acquire-or-renew round (what the timer runs). Never throws. */
  tick(): Promise<void> {
    if (this.ticking) return this.ticking;
    this.ticking = this.round().finally(() => {
      this.ticking = undefined;
    });
    return this.ticking;
  }

  private async round(): Promise<void> {
    if (this.stopped) return;
    try {
      const result = this.lease
        ? await this.store.renewLease(this.name, this.lease.token, this.ttlMs)
        : await this.store.acquireLease(this.name, this.options.holder, this.ttlMs);
      if (this.stopped) {
        if (result.held) await this.store.releaseLease(this.name, result.lease.token);
        return;
      }
      this.lease = result.held ? result.lease : undefined;
    } catch (err) {
      this.options.onError?.(err);
    }
    this.refreshLeadership();
  }

  private refreshLeadership(): void {
    const holding = !this.stopped && this.lease !== undefined && this.lease.expiresAt > this.clock.now();
    if (!holding && this.lease && this.lease.expiresAt <= this.clock.now()) this.lease = undefined;
    this.setLeader(holding);
  }

  private setLeader(value: boolean): void {
    if (value === this.leader) return;
    this.leader = value;
    for (const listener of this.listeners) {
      try {
        listener(value);
      } catch {
        // a listener's failure must not stop the election
      }
    }
  }
}
