// Display helpers for what a card adds about its segments (pure; unit-tested in Node).
import { clockTime } from '../src/core/clock';

/** The line a running card shows while its model requests wait for an unreachable gateway. */
export function gatewayOutageText(since: number): string {
  return `Gateway unreachable since ${clockTime(since)} · waiting`;
}

/**
 * The line a card shows while the account's usage limit holds it (docs/flows.md#usage-limits):
 * "Waiting for your usage limit to reset at 15:00 · in 2 h 13 min"; null once the reset passed.
 */
export function usageLimitText(resetAt: number, now: number): string | null {
  if (resetAt <= now) return null;
  const minutes = Math.ceil((resetAt - now) / 60_000);
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  const wait = hours === 0 ? `${rest} min` : rest === 0 ? `${hours} h` : `${hours} h ${rest} min`;
  return `Waiting for your usage limit to reset at ${clockTime(resetAt)} · in ${wait}`;
}

interface Usage {
  model: string;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  requests: number;
  costUsd?: number;
  windowShare?: { fiveHour: number; sevenDay: number };
}

/** A token count as people read it: "950", "12.3k", "1.25M". */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${trim(n / 1000, n < 10_000 ? 2 : 1)}k`;
  return `${trim(n / 1_000_000, 2)}M`;
}

function trim(value: number, digits: number): string {
  return value.toFixed(digits).replace(/\.?0+$/, '');
}

/** The short line: "12.3k in · 1.2k out", with the prompt cache when it was used. */
export function usageSummary(u: Usage): string {
  const parts = [`${formatTokens(u.inputTokens)} in`, `${formatTokens(u.outputTokens)} out`];
  if (u.cacheReadTokens > 0 || u.cacheWriteTokens > 0)
    parts.push(`cache ${formatTokens(u.cacheReadTokens)} read, ${formatTokens(u.cacheWriteTokens)} written`);
  return parts.join(' · ');
}

/** Every count exactly, for a tooltip or a screen reader. */
export function usageDetail(u: Usage): string {
  const n = (v: number) => v.toLocaleString('en-US');
  const answers = `${n(u.requests)} model answer${u.requests === 1 ? '' : 's'}`;
  return `Tokens: ${n(u.inputTokens)} input, ${n(u.outputTokens)} output, ${n(u.cacheReadTokens)} cache read, ${n(u.cacheWriteTokens)} cache write; ${answers}${u.model ? ` (${u.model})` : ''}`;
}

/** The same value (===) under each of `keys` in both: how a card's parts are compared across snapshots. */
export function sameFields<T>(a: T, b: T, keys: readonly (keyof T)[]): boolean {
  return keys.every((key) => a[key] === b[key]);
}

const USAGE_FIELDS = ['model', 'inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'requests'] as const;

/** Snapshots carry new usage objects: the same counts are the same usage (a card need not re-render). */
export function sameUsage(a: Usage | null, b: Usage | null): boolean {
  if (a === null || b === null) return a === b;
  const share = (u: Usage) => (u.windowShare ? `${u.windowShare.fiveHour}/${u.windowShare.sevenDay}` : '');
  return sameFields(a, b, USAGE_FIELDS) && a.costUsd === b.costUsd && share(a) === share(b);
}
