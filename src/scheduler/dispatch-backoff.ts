/**
 * Per-task dispatch backoff policy: a task no window could take (or whose dispatch failed) stays
 * queued and waits 30 s, doubling to 15 min. The records live in the shared DB (`tx.dispatch`),
 * so a restart does not hammer a window that keeps failing.
 */
export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 30_000, maxMs: 15 * 60_000 };

export function backoffDelay(policy: BackoffPolicy, failures: number): number {
  return Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
}
