/**
 * How a segment's ticket proxy rides out a gateway it cannot reach (docs/flows.md#segments): a
 * server deploy or a network blip at night must not fail the running task. A model request that
 * cannot reach the gateway (connection refused or reset, no answer) is held in the proxy and sent
 * again with backoff, like a 3105, until the gateway answers; only past the bound does the
 * segment give up:
 *  - the ticket's remaining time (its active window's end, or its ready deadline before the first
 *    admitted request), when the ledger knows it;
 *  - at most GATEWAY_OUTAGE_MAX_WAIT_MS from the start of the outage.
 * One outage per proxy: every held request of the segment shares its start.
 */
import { clockTime, durationWords, type Clock } from '../../core/clock';

/** The longest a running task waits for an unreachable gateway before it fails (docs/user-guide.md#agent-runtime). */
export const GATEWAY_OUTAGE_MAX_WAIT_MS = 20 * 60_000;

export interface GatewayOutageTimings {
  /** First wait before a request that could not reach the gateway is sent again; doubles. Default 1 s. */
  outageRetryMs?: number;
  /** Longest wait between two tries. Default 15 s. */
  outageRetryMaxMs?: number;
  /** Longest outage waited for. Default GATEWAY_OUTAGE_MAX_WAIT_MS. */
  outageMaxWaitMs?: number;
}

export type OutageStep =
  /** Hold the request this long, then send it again. `started`: this failure began the outage. */
  | { kind: 'retry'; waitMs: number; started: boolean }
  /** The bound has passed: the segment stops, and the task fails with `reason`. */
  | { kind: 'give-up'; reason: string };

export class GatewayOutage {
  private since: number | null = null;
  private readonly retryMs: number;
  private readonly retryMaxMs: number;
  private readonly maxWaitMs: number;

  constructor(
    private readonly clock: Clock,
    timings: GatewayOutageTimings,
    /** Epoch ms when the ticket's time runs out, or null when unknown. */
    private readonly ticketDeadline: () => number | null = () => null,
  ) {
    this.retryMs = Math.max(1, timings.outageRetryMs ?? 1_000);
    this.retryMaxMs = Math.max(this.retryMs, timings.outageRetryMaxMs ?? 15_000);
    this.maxWaitMs = timings.outageMaxWaitMs ?? GATEWAY_OUTAGE_MAX_WAIT_MS;
  }

  /** When the current outage began (the first request that could not reach the gateway), or null. */
  get unreachableSince(): number | null {
    return this.since;
  }

  /**
   * A request could not reach the gateway. `attempt` counts this request's consecutive failures
   * from 0 (its backoff); `error` is what the connection said.
   */
  failed(error: string, attempt: number): OutageStep {
    const now = this.clock.now();
    const started = this.since === null;
    if (started) this.since = now;
    const since = this.since as number;
    const cap = since + this.maxWaitMs;
    const ticketEnd = this.deadlineOfTicket();
    const bound = ticketEnd !== null && ticketEnd < cap ? ticketEnd : cap;
    if (now >= bound) {
      const why = bound === cap ? `${durationWords(this.maxWaitMs)}, the longest a task waits for it` : "the ticket's time ran out";
      return {
        kind: 'give-up',
        reason: `The off-peak gateway could not be reached from ${clockTime(since)} to ${clockTime(now)} (${why}), so the task stopped. Last error: ${error}`,
      };
    }
    const backoff = Math.min(this.retryMaxMs, this.retryMs * 2 ** Math.min(attempt, 30));
    return { kind: 'retry', waitMs: Math.max(1, Math.min(backoff, bound - now)), started };
  }

  /** The gateway answered: returns when the outage that just ended began (null if there was none). */
  answered(): number | null {
    const since = this.since;
    this.since = null;
    return since;
  }

  private deadlineOfTicket(): number | null {
    try {
      return this.ticketDeadline();
    } catch {
      return null; // an unreadable ledger leaves the cap as the only bound
    }
  }
}
