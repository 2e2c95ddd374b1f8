/**
 * How the ticket proxy holds a request: how long the gateway says to wait (Retry-After, bounded),
 * a sleep the agent hanging up or the segment's cancel ends, and the wait for the start gate.
 */

/** min(Retry-After, max) when the gateway says how long; the default otherwise. */
export function holdFor(retryAfter: string | string[] | undefined, now: number, holdDefaultMs: number, holdMaxMs: number): number {
  const raw = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
  if (raw !== undefined && raw.trim() !== '') {
    const seconds = Number(raw);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, holdMaxMs);
    const date = Date.parse(raw);
    if (!Number.isNaN(date)) return Math.min(Math.max(0, date - now), holdMaxMs);
  }
  return Math.min(holdDefaultMs, holdMaxMs);
}

/** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves when `promise` does or `signal` aborts, whichever is first. */
export function untilOrAborted(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  let onAbort!: () => void;
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve;
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}
