/**
 * The availability snapshot (docs/flows.md#availability): whether "create" is enabled right now.
 * - can_take: enabled;
 * - can_take false: disabled until `next_take_at`, and re-checked at that moment;
 * - a failed check: disabled until a refresh succeeds (re-tried with backoff);
 * - the sync failing to reach the gateway checks at once; its next answer re-checks a failed snapshot;
 * - a 3103 on take: disabled until its `next_take_at`, then re-checked.
 * Never a permanent "quota exhausted" flag: every disabled state has a way back.
 */
import type { Clock } from '../core/clock';
import { Emitter, type Event } from '../core/event';
import { SingleFlight } from '../core/single-flight';
import type { GatewayClient, OffPeakWindow } from '../gateway-client/client';
import { isGatewayError } from '../gateway-client/errors';
import type { Timers, TimerHandle } from '../core/timers';

export type AvailabilityState =
  | { status: 'unknown' }
  | { status: 'enabled'; canTakeNumber: number; checkedAt: number }
  | { status: 'disabled'; reason: string; nextTakeAt?: number; checkedAt: number }
  /** `refusedStatus`: the gateway refused the API key (HTTP 401/403), which no retry will fix. */
  | { status: 'error'; message: string; checkedAt: number; refusedStatus?: number };

/** The least time between two checks a gateway answer elsewhere starts (`noteGatewayAnswered`). */
export const ANSWERED_RECHECK_MS = 10_000;

export interface AvailabilityOptions {
  /** Re-check a disabled snapshot without a known `next_take_at` after this long. */
  unknownRecheckMs?: number;
  /** Backoff after a failed check: first, then doubling up to max. */
  errorBackoffMs?: number;
  errorBackoffMaxMs?: number;
  /** An enabled snapshot older than this is refreshed before a create. */
  maxAgeMs?: number;
}

export class AvailabilitySnapshot {
  private readonly changed = new Emitter<AvailabilityState>();
  /** Fires when the state or the off-peak windows change. */
  readonly onDidChange: Event<AvailabilityState> = this.changed.event;
  private current: AvailabilityState = { status: 'unknown' };
  private window: OffPeakWindow | undefined;
  private timer: TimerHandle | undefined;
  private readonly checks = new SingleFlight<AvailabilityState>();
  private failures = 0;
  private disposed = false;
  private lastSuccess: number | undefined;
  private nextCheck: number | undefined;
  private readonly opts: Required<AvailabilityOptions>;

  constructor(
    private readonly gateway: GatewayClient,
    private readonly clock: Clock,
    private readonly timers: Timers,
    options: AvailabilityOptions = {},
  ) {
    this.opts = {
      unknownRecheckMs: options.unknownRecheckMs ?? 60_000,
      errorBackoffMs: options.errorBackoffMs ?? 10_000,
      errorBackoffMaxMs: options.errorBackoffMaxMs ?? 5 * 60_000,
      maxAgeMs: options.maxAgeMs ?? 60_000,
    };
  }

  get state(): AvailabilityState {
    return this.current;
  }

  /** Gateway health for the UI: when a check last succeeded, and when the next one is due. */
  get health(): { lastSuccessAt?: number; nextCheckAt?: number } {
    return { lastSuccessAt: this.lastSuccess, nextCheckAt: this.nextCheck };
  }

  /** True when the UI may offer "create" (the take itself remains the final authority). */
  get canCreate(): boolean {
    return this.current.status === 'enabled';
  }

  /**
   * The off-peak windows as the gateway last reported them (availability, or a queued ticket's
   * status); undefined before any answer. A closed window whose opening time has passed reads
   * as open: it opened, and the next answer will say whether it closed again.
   */
  get offPeakWindow(): OffPeakWindow | undefined {
    const w = this.window;
    if (w && !w.open && w.opensAt !== null && this.clock.now() >= w.opensAt) return { open: true };
    return w;
  }

  /** A gateway answer said how the windows stand (the sync's status answers call this too). */
  noteOffPeakWindow(window: OffPeakWindow): void {
    const before = this.window;
    this.window = window;
    const same = before?.open === window.open && (window.open || (!before.open && before.opensAt === window.opensAt));
    if (!same) this.changed.fire(this.current);
  }

  /** A snapshot that a create may rely on without asking again. */
  isFresh(): boolean {
    const s = this.current;
    if (s.status === 'enabled') return this.clock.now() - s.checkedAt < this.opts.maxAgeMs;
    if (s.status === 'disabled') return s.nextTakeAt === undefined || this.clock.now() < s.nextTakeAt;
    return false;
  }

  /** Asks the gateway now (single-flight). Never throws: failures become the `error` state. */
  refresh(): Promise<AvailabilityState> {
    return this.checks.run(() => this.doRefresh());
  }

  /**
   * Asks the gateway again after any check in flight (which may have used an old API key): a
   * newly saved key is checked with this.
   */
  async recheck(): Promise<AvailabilityState> {
    await this.idle();
    return this.refresh();
  }

  /** Resolves when no check is in flight. */
  idle(): Promise<void> {
    return this.checks.idle();
  }

  /**
   * Another call (the sync's status, a settle, a retake) could not reach the gateway: an enabled
   * snapshot would keep saying all is well while nothing asks (docs/flows.md#availability), so it
   * asks now; a snapshot already in error re-checks on its own backoff.
   */
  noteGatewayUnreachable(): void {
    if (this.current.status !== 'error') void this.refresh();
  }

  /**
   * Another call got the gateway's answer: a snapshot that says it cannot be reached asks again
   * now, not at its backoff (at most once per `ANSWERED_RECHECK_MS`: the sync's long-polls may
   * answer every second while the availability check itself still fails).
   */
  noteGatewayAnswered(): void {
    const s = this.current;
    if (s.status === 'error' && s.refusedStatus === undefined && this.clock.now() - s.checkedAt >= ANSWERED_RECHECK_MS) void this.refresh();
  }

  /** A take answered 3103: disabled until `nextTakeAt` (if known), then re-checked. */
  noteLimitReached(nextTakeAt: number | undefined): void {
    this.set({ status: 'disabled', reason: 'limit_reached', nextTakeAt, checkedAt: this.clock.now() });
    this.scheduleRecheck(nextTakeAt !== undefined ? nextTakeAt - this.clock.now() : this.opts.unknownRecheckMs);
  }

  dispose(): void {
    this.disposed = true;
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.changed.dispose();
  }

  private async doRefresh(): Promise<AvailabilityState> {
    try {
      const a = await this.gateway.availability();
      this.failures = 0;
      this.window = a.offPeakWindow;
      this.lastSuccess = this.clock.now();
      if (a.canTake) {
        this.timers.clearTimeout(this.timer);
        this.timer = undefined;
        this.nextCheck = undefined;
        this.set({ status: 'enabled', canTakeNumber: a.canTakeNumber, checkedAt: this.clock.now() });
      } else {
        this.set({ status: 'disabled', reason: a.reason ?? 'unavailable', nextTakeAt: a.nextTakeAt, checkedAt: this.clock.now() });
        const wait = a.nextTakeAt !== undefined ? a.nextTakeAt - this.clock.now() : this.opts.unknownRecheckMs;
        this.scheduleRecheck(wait);
      }
    } catch (e) {
      this.failures += 1;
      const refusedStatus = isGatewayError(e) && e.kind === 'unauthorized' ? (e.status ?? 401) : undefined;
      // In a person's words (the panel shows it): no endpoint, no raw error code.
      const message = isGatewayError(e) ? e.reason : e instanceof Error ? e.message : String(e);
      this.set({ status: 'error', message, checkedAt: this.clock.now(), ...(refusedStatus ? { refusedStatus } : {}) });
      const backoff = Math.min(this.opts.errorBackoffMaxMs, this.opts.errorBackoffMs * 2 ** (this.failures - 1));
      this.scheduleRecheck(backoff);
    }
    return this.current;
  }

  private scheduleRecheck(delayMs: number): void {
    if (this.disposed) return;
    this.timers.clearTimeout(this.timer);
    this.nextCheck = this.clock.now() + Math.max(0, delayMs);
    this.timer = this.timers.setTimeout(
      () => {
        this.timer = undefined;
        this.nextCheck = undefined;
        void this.refresh();
      },
      Math.max(0, delayMs),
    );
  }

  private set(state: AvailabilityState): void {
    this.current = state;
    this.changed.fire(state);
  }
}
