// Each task's share of a subscription account's windows (docs/flows.md#capacity-and-cost), read from
// the unified rate-limit headers every answer already carries: no request is ever made to read them.
// The headers of an answer count what the account used BEFORE it, so the growth between two answers
// of the account is what the earlier answer (and whatever ran beside it) used; it is credited to the
// earlier answer's ticket when that is the same user's, and reported on the later answer
// (WINDOW_SHARE_HEADER), whose window writes it to the credited ticket's ledger row. The gateway sees
// every answer of the account in order, so the shares of all tasks add up to what the account used.
import type http from 'node:http';
import type { WindowShareReading } from '../../protocol/window-share';

const PREFIX = 'anthropic-ratelimit-unified-';
/** A reset this much later than the last one seen is a new window: its whole utilization is new use. */
const NEW_WINDOW_MS = 60_000;

interface WindowReading {
  utilization: number;
  resetAt: number | null;
}

function read(headers: http.IncomingHttpHeaders, key: '5h' | '7d'): WindowReading | undefined {
  const value = headers[`${PREFIX}${key}-utilization`];
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  const utilization = Number(text);
  if (!text || !Number.isFinite(utilization) || utilization < 0) return undefined;
  const reset = headers[`${PREFIX}${key}-reset`];
  const resetText = (Array.isArray(reset) ? reset[0] : reset)?.trim();
  const seconds = Number(resetText);
  const resetAt = resetText && /^\d+(\.\d+)?$/.test(resetText) ? Math.round(seconds > 1e12 ? seconds : seconds * 1000) : null;
  return { utilization: Math.min(1, utilization), resetAt };
}

/** The growth of one window from `before` to `now` (a new window counts all it holds). */
function growth(before: WindowReading, now: WindowReading): number {
  const rolled = now.resetAt !== null && before.resetAt !== null && now.resetAt > before.resetAt + NEW_WINDOW_MS;
  const used = rolled ? now.utilization : Math.max(0, now.utilization - before.utilization);
  return Math.round(used * 1e6) / 1e6;
}

export class WindowShareMeter {
  private last: { fiveHour: WindowReading; sevenDay: WindowReading; ticketId: string; userId: string } | null = null;

  /**
   * One answer of `ticketId` (user `userId`) with these headers: the reading and the share since the
   * account's previous answer, credited to that answer's ticket; undefined when the answer reports
   * no utilization (not a subscription account).
   */
  observe(ticketId: string, userId: string, headers: http.IncomingHttpHeaders): WindowShareReading | undefined {
    const fiveHour = read(headers, '5h');
    const sevenDay = read(headers, '7d');
    if (!fiveHour || !sevenDay) return undefined;
    const before = this.last;
    this.last = { fiveHour, sevenDay, ticketId, userId };
    const credited = before !== null && before.userId === userId;
    return {
      ticketId: credited ? before.ticketId : null,
      fiveHour: credited ? growth(before.fiveHour, fiveHour) : 0,
      sevenDay: credited ? growth(before.sevenDay, sevenDay) : 0,
      utilization5h: fiveHour.utilization,
      utilization7d: sevenDay.utilization,
      reset5hAt: fiveHour.resetAt,
      reset7dAt: sevenDay.resetAt,
    };
  }
}
