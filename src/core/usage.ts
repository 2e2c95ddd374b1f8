/** Sums of token usage (docs/flows.md#ticket-ledger): answers into a segment, segments into a task. */
import type { SegmentUsage, TokenUsage } from './types';

/** Models in the order first seen, without repeats ("a, b"). */
function mergeModels(a: string, b: string): string {
  const seen: string[] = [];
  for (const m of [...a.split(', '), ...b.split(', ')]) if (m !== '' && !seen.includes(m)) seen.push(m);
  return seen.join(', ');
}

/** `a` plus one answer's tokens from `model` (null: it did not say). */
export function addAnswerUsage(a: SegmentUsage | null, model: string | null, usage: TokenUsage): SegmentUsage {
  return addSegmentUsage(a, { model: model ?? '', requests: 1, ...usage });
}

export function addSegmentUsage(a: SegmentUsage | null, b: SegmentUsage): SegmentUsage {
  if (!a) return { ...b };
  return {
    model: mergeModels(a.model, b.model),
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    requests: a.requests + b.requests,
  };
}

/** A task's total over its ledger rows; null when no segment reported any usage. */
export function totalUsage(rows: readonly { usage: SegmentUsage | null }[]): SegmentUsage | null {
  let total: SegmentUsage | null = null;
  for (const row of rows) if (row.usage) total = addSegmentUsage(total, row.usage);
  return total;
}
