/** Sums of token usage (docs/flows.md#ticket-ledger): answers into a segment, segments into a task. */
import type { SegmentUsage, TokenUsage, WindowShare } from './types';

/** Models in the order first seen, without repeats ("a, b"). */
function mergeModels(a: string, b: string): string {
  const seen: string[] = [];
  for (const m of [...a.split(', '), ...b.split(', ')]) if (m !== '' && !seen.includes(m)) seen.push(m);
  return seen.join(', ');
}

/** What one answer adds besides its tokens: its price and its share of the account's windows, when known. */
export interface AnswerExtras {
  costUsd?: number;
  windowShare?: WindowShare;
}

/** `a` plus one answer's tokens from `model` (null: it did not say). */
export function addAnswerUsage(a: SegmentUsage | null, model: string | null, usage: TokenUsage, extras: AnswerExtras = {}): SegmentUsage {
  return addSegmentUsage(a, { model: model ?? '', requests: 1, ...usage, ...extras });
}

/** A sum of optional amounts: absent when both are. */
function addOptional(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0);
}

export function addSegmentUsage(a: SegmentUsage | null, b: SegmentUsage): SegmentUsage {
  if (!a) return { ...b };
  const sum: SegmentUsage = {
    model: mergeModels(a.model, b.model),
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    requests: a.requests + b.requests,
  };
  const costUsd = addOptional(a.costUsd, b.costUsd);
  if (costUsd !== undefined) sum.costUsd = costUsd;
  const account = [a.account, b.account].filter((r) => r !== undefined).sort((x, y) => y.at - x.at)[0];
  if (account) sum.account = account;
  if (a.windowShare || b.windowShare) {
    sum.windowShare = {
      fiveHour: (a.windowShare?.fiveHour ?? 0) + (b.windowShare?.fiveHour ?? 0),
      sevenDay: (a.windowShare?.sevenDay ?? 0) + (b.windowShare?.sevenDay ?? 0),
    };
  }
  return sum;
}

/** A task's total over its ledger rows; null when no segment reported any usage. */
export function totalUsage(rows: readonly { usage: SegmentUsage | null }[]): SegmentUsage | null {
  let total: SegmentUsage | null = null;
  for (const row of rows) if (row.usage) total = addSegmentUsage(total, row.usage);
  return total;
}
