// The ticket proxy's side of the account's usage limit (docs/flows.md#usage-limits): a 3105 that
// carries `limit_reset_at` is held until the reset (on this machine's clock, corrected by the
// gateway's server time), reported once per reset, and past `USAGE_LIMIT_PARK_AFTER_MS` the task
// parks instead of holding its connection for hours.
import type http from 'node:http';
import { clockTime } from '../../core/clock';
import { readLimitResetAt, SERVER_TIME_HEADER } from '../../protocol/gateway';

/** A usage limit that resets later than this from now parks the task (its segment ends; it resumes at the reset). */
export const USAGE_LIMIT_PARK_AFTER_MS = 5 * 60_000;

/** Sent again this long after the reset, so the gateway's own clock has passed it too. */
const AFTER_RESET_MS = 50;

/** When a 3105's usage limit resets on this machine's clock, and how long until then; null for any other 3105. */
export function usageLimitWait(
  errorBody: string,
  headers: http.IncomingHttpHeaders,
  now: number,
): { resetAt: number; waitMs: number } | null {
  const resetAt = readLimitResetAt(errorBody);
  if (resetAt === undefined) return null;
  const raw = headers[SERVER_TIME_HEADER];
  const serverTime = Number(Array.isArray(raw) ? raw[0] : raw);
  const waitMs = Math.max(0, resetAt - (Number.isFinite(serverTime) && serverTime > 0 ? serverTime : now)) + AFTER_RESET_MS;
  return { resetAt: now + waitMs - AFTER_RESET_MS, waitMs };
}

/** What the task's terminal says when its request waits for the reset (or parks until it). */
export function usageLimitTerminalText(resetAt: number, park: boolean): string {
  return park
    ? `your usage limit is reached until ${clockTime(resetAt)}: the task waits for the reset without holding capacity, and resumes this session then`
    : `your usage limit is reached: the request waits for its reset at ${clockTime(resetAt)}…`;
}

/** One segment's view of the limit: which reset was reported last, so each is reported once. */
export class UsageLimitState {
  private reported: number | null = null;
  private parked = false;

  constructor(private readonly parkAfterMs: number) {}

  /** A held 3105: the event to report (a new reset, or the first one worth parking for), or null. */
  held(resetAt: number, waitMs: number): { resetAt: number; park: boolean } | null {
    const park = waitMs > this.parkAfterMs;
    if (this.reported === resetAt && park === this.parked) return null;
    this.reported = resetAt;
    this.parked ||= park;
    return { resetAt, park };
  }

  /** An answer that was not held: true when a reported limit just lifted. */
  lifted(): boolean {
    if (this.reported === null) return false;
    this.reported = null;
    return true;
  }
}
