/**
 * Injectable timers, so timed behaviour (the service's sync cycles, backoff and settle retries,
 * the lease, the scheduler, permission-ask deadlines, the window registry's heartbeat) runs
 * against a simulated clock in tests.
 */
import type { Clock } from './clock';

export interface TimerHandle {
  readonly id: number;
}

export interface Timers {
  setTimeout(fn: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
}

/** Resolves after `delayMs` on `timers` (on a simulated clock in tests). */
export function sleep(timers: Timers, delayMs: number): Promise<void> {
  return new Promise((resolve) => timers.setTimeout(resolve, delayMs));
}

let nextSystemId = 1;

/** Real timers (unref'd: a pending sync must not keep a process alive). */
export function createSystemTimers(): Timers {
  const live = new Map<number, NodeJS.Timeout>();
  return {
    setTimeout(fn, delayMs) {
      const id = nextSystemId++;
      const t = setTimeout(
        () => {
          live.delete(id);
          fn();
        },
        Math.max(0, Math.min(delayMs, 2_147_483_647)),
      );
      t.unref?.();
      live.set(id, t);
      return { id };
    },
    clearTimeout(handle) {
      if (!handle) return;
      const t = live.get(handle.id);
      if (t) clearTimeout(t);
      live.delete(handle.id);
    },
  };
}

interface ManualEntry {
  id: number;
  at: number;
  fn: () => void;
}

/**
 * Timers driven by a clock that only moves when told to. `advanceTo(t)` moves the clock
 * step by step through every due timer in time order and runs it.
 */
export class ManualTimers implements Timers {
  private entries: ManualEntry[] = [];
  private nextId = 1;

  constructor(private readonly clock: Clock & { set(ms: number): void }) {}

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const entry = { id: this.nextId++, at: this.clock.now() + Math.max(0, delayMs), fn };
    this.entries.push(entry);
    return { id: entry.id };
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (!handle) return;
    this.entries = this.entries.filter((e) => e.id !== handle.id);
  }

  /** Number of pending timers. */
  get pending(): number {
    return this.entries.length;
  }

  /** The time of the earliest pending timer, if any. */
  nextDueAt(): number | undefined {
    let min: number | undefined;
    for (const e of this.entries) if (min === undefined || e.at < min) min = e.at;
    return min;
  }

  /** Run every timer due at the current time (not ones they schedule for later). */
  fireDue(): number {
    const now = this.clock.now();
    const due = this.entries.filter((e) => e.at <= now).sort((a, b) => a.at - b.at || a.id - b.id);
    this.entries = this.entries.filter((e) => e.at > now);
    for (const e of due) e.fn();
    return due.length;
  }

  /**
   * Move the clock to `until`, stopping at each due timer: set the clock to its time, fire it,
   * then await `settle()` (e.g. the services' in-flight work) before looking again.
   */
  async advanceTo(until: number, settle: () => Promise<void> = async () => {}): Promise<number> {
    let fired = 0;
    for (;;) {
      const next = this.nextDueAt();
      if (next === undefined || next > until) break;
      if (next > this.clock.now()) this.clock.set(next);
      fired += this.fireDue();
      await settle();
    }
    if (this.clock.now() < until) this.clock.set(until);
    return fired;
  }
}
