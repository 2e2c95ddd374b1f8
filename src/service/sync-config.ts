/** The pacing of the service's loops (sync, settle outbox, retaker), and the backoff they share. */
import { isGatewayError } from '../gateway-client/errors';

export interface SyncConfig {
  /** Tickets per status request (the protocol allows at most 100). */
  batchSize: number;
  /** Next poll of a live ticket whose answer carried no hint. */
  fallbackPollMs: number;
  /** Tickets due within this window are polled together with the due ones. */
  coalesceMs: number;
  /** Whole-cycle failure backoff: first delay, doubling, capped. */
  backoffMs: number;
  backoffMaxMs: number;
  /** Settle retry backoff per ticket. */
  settleBackoffMs: number;
  settleBackoffMaxMs: number;
  /** Retake retry backoff per ticketless queued task. */
  retakeBackoffMs: number;
  retakeBackoffMaxMs: number;
  /** Long-poll hold (`wait_ms`) when all due tickets fit in one request; 0 = never long-poll. */
  longPollMs: number;
  /** How long cancel waits for the agent stopper before moving on. */
  stopAgentTimeoutMs: number;
}

export const DEFAULT_SYNC_CONFIG: SyncConfig = {
  batchSize: 100,
  fallbackPollMs: 5 * 60_000,
  coalesceMs: 5_000,
  backoffMs: 10_000,
  backoffMaxMs: 5 * 60_000,
  settleBackoffMs: 10_000,
  settleBackoffMaxMs: 5 * 60_000,
  retakeBackoffMs: 10_000,
  retakeBackoffMaxMs: 5 * 60_000,
  longPollMs: 25_000,
  stopAgentTimeoutMs: 5_000,
};

/** First delay `base`, doubling per attempt, capped at `max`. */
export function backoff(base: number, max: number, attempt: number): number {
  return Math.min(max, base * 2 ** Math.max(0, Math.min(attempt, 30)));
}

/** The gateway could not be reached or failed as a whole: the loop backs off instead of going on. */
export function isTransportFailure(e: unknown): boolean {
  return isGatewayError(e) && (e.kind === 'network' || e.kind === 'timeout' || e.kind === 'server_error' || e.kind === 'aborted');
}

/** An error's text for a log line or a stored last_error (bounded). */
export function errorText(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).slice(0, 500);
}

/** Tracks fire-and-forget work so `idle()` and `stop()` can wait for it; its failures are logged, never thrown. */
export class BackgroundWork {
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly log: (line: string) => void) {}

  track<T>(p: Promise<T>): void {
    const tracked = p.catch((e) => this.log(`background work failed: ${errorText(e)}`));
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }

  inFlight(): Promise<unknown>[] {
    return [...this.pending];
  }
}
