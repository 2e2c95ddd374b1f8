/**
 * What a task spent, in the unit its credential pays (docs/flows.md#capacity-and-cost): its share of
 * the account's 5-hour and weekly windows where the answers reported them (a subscription login),
 * else dollars where a price was known (an API key, a team gateway), else only tokens. The one
 * wording every surface uses: the card, the History row, the morning summary.
 */
import type { SegmentUsage, TokenUsage, WindowShare } from './types';

/** One model's prices in dollars per million tokens, each kind of token at its own rate. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Input read from the prompt cache. */
  cacheRead: number;
  /** Input written to the prompt cache. */
  cacheWrite: number;
}

/** Dollars for one answer of `model`, or null when its price is not known. */
export type Pricer = (model: string | null, usage: TokenUsage) => number | null;

/** `usage` at `price`: Anthropic's `input_tokens` leave the cache's tokens out, so each kind is priced once. */
export function costAt(price: ModelPrice, usage: TokenUsage): number {
  return (
    (usage.inputTokens * price.input +
      usage.outputTokens * price.output +
      usage.cacheReadTokens * price.cacheRead +
      usage.cacheWriteTokens * price.cacheWrite) /
    1_000_000
  );
}

export type Spend = { unit: 'window'; share: WindowShare } | { unit: 'dollars'; usd: number };

/** The unit a usage is shown in: the windows when they were reported, else dollars when priced, else null (tokens only). */
export function spendOf(usage: Pick<SegmentUsage, 'costUsd' | 'windowShare'> | null | undefined): Spend | null {
  if (!usage) return null;
  if (usage.windowShare) return { unit: 'window', share: usage.windowShare };
  if (usage.costUsd !== undefined) return { unit: 'dollars', usd: usage.costUsd };
  return null;
}

/** "$0.42", "$12.40", "< $0.01". */
export function formatUsd(usd: number): string {
  if (usd > 0 && usd < 0.005) return '< $0.01';
  return `$${usd.toFixed(2)}`;
}

/** A share of a window (0..1) as people read it: "3 %", "0.4 %", "< 0.1 %". */
export function formatShare(share: number): string {
  const percent = share * 100;
  if (percent > 0 && percent < 0.05) return '< 0.1 %';
  return `${percent >= 10 ? Math.round(percent) : Number(percent.toFixed(1))} %`;
}

/** "$0.42" or "1.2 % of 5 h · 0.3 % of week". */
export function spendText(spend: Spend): string {
  if (spend.unit === 'dollars') return formatUsd(spend.usd);
  return `${formatShare(spend.share.fiveHour)} of 5 h · ${formatShare(spend.share.sevenDay)} of week`;
}

/** Every part exactly, for a tooltip or a screen reader. */
export function spendDetail(spend: Spend): string {
  if (spend.unit === 'dollars') return `Cost: $${spend.usd.toFixed(4)}, each answer at its model's price`;
  const pct = (n: number) => `${(n * 100).toFixed(2)} %`;
  return `Share of your account: ${pct(spend.share.fiveHour)} of the 5-hour window, ${pct(spend.share.sevenDay)} of the weekly window`;
}

/** The sum of several tasks' spend, per unit (the morning summary's total). */
export function totalSpend(usages: readonly (Pick<SegmentUsage, 'costUsd' | 'windowShare'> | null | undefined)[]): Spend[] {
  const spends = usages.map((usage) => spendOf(usage));
  const dollars = spends.filter((s): s is Extract<Spend, { unit: 'dollars' }> => s?.unit === 'dollars');
  const windows = spends.filter((s): s is Extract<Spend, { unit: 'window' }> => s?.unit === 'window');
  const out: Spend[] = [];
  if (dollars.length > 0) out.push({ unit: 'dollars', usd: dollars.reduce((n, s) => n + s.usd, 0) });
  if (windows.length > 0) {
    const share: WindowShare = {
      fiveHour: windows.reduce((n, s) => n + s.share.fiveHour, 0),
      sevenDay: windows.reduce((n, s) => n + s.share.sevenDay, 0),
    };
    out.push({ unit: 'window', share });
  }
  return out;
}

/** The median of some numbers (the mean of the middle two for an even count). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * "Similar tasks here: $0.40 (median of the last 3)": what the last tasks of a folder spent
 * (newest first), in the unit of the newest that spent anything; null when none did (the create
 * form's "will it fit", docs/flows.md#capacity-and-cost).
 */
export function typicalSpendText(
  newestFirst: readonly (Pick<SegmentUsage, 'costUsd' | 'windowShare'> | null | undefined)[],
): string | null {
  const spends = newestFirst.map((u) => spendOf(u)).filter((s): s is Spend => s !== null);
  const unit = spends[0]?.unit;
  if (unit === undefined) return null;
  const same = spends.filter((s) => s.unit === unit);
  const typical: Spend =
    unit === 'dollars'
      ? { unit, usd: median(same.map((s) => (s.unit === 'dollars' ? s.usd : 0))) }
      : {
          unit,
          share: {
            fiveHour: median(same.map((s) => (s.unit === 'window' ? s.share.fiveHour : 0))),
            sevenDay: median(same.map((s) => (s.unit === 'window' ? s.share.sevenDay : 0))),
          },
        };
  return `Similar tasks here: ${spendText(typical)} (median of the last ${same.length})`;
}
