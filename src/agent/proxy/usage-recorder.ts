/**
 * Sums the token usage the window's segment proxies report and writes it to each segment's
 * ledger row (docs/flows.md#ticket-ledger): at most once per USAGE_FLUSH_MS while segments run
 * (every write makes the other windows reload the task database), and always when a segment
 * ends, before its outcome is applied. A crash loses at most the last interval's counts.
 */
import type { Pricer } from '../../core/spend';
import type { AccountReading, SegmentUsage, TokenUsage, WindowShare } from '../../core/types';
import { CoalescingRun } from '../../core/single-flight';
import type { TimerHandle, Timers } from '../../core/timers';
import { addAnswerUsage, addSegmentUsage } from '../../core/usage';

export const USAGE_FLUSH_MS = 30_000;

const NO_TOKENS = { model: '', requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

export class UsageRecorder {
  private pending = new Map<string, SegmentUsage>();
  private timer: TimerHandle | undefined;
  private readonly writes = new CoalescingRun(
    () => this.writeOnce(),
    (e) => this.log(`usage: ${e instanceof Error ? e.message : String(e)}`),
  );

  constructor(
    /** Adds `usage` to the ticket's ledger row (the lifecycle's `recordUsage`). */
    private readonly write: (ticketId: string, usage: SegmentUsage) => Promise<void>,
    private readonly timers: Timers,
    private readonly log: (line: string) => void,
    private readonly flushMs = USAGE_FLUSH_MS,
    /** Each answer's dollars at its model's price, read at each answer (docs/flows.md#capacity-and-cost); null: unknown. */
    private readonly pricer: () => Pricer = () => () => null,
  ) {}

  /** One model answer of the segment on `ticketId` ended: its tokens, and its dollars when its model's price is known. */
  add(ticketId: string, model: string | null, usage: TokenUsage): void {
    let costUsd: number | null = null;
    try {
      costUsd = this.pricer()(model, usage);
    } catch (err) {
      this.log(`usage: pricing an answer of ${model ?? 'an unnamed model'} failed: ${(err as Error).message}`);
    }
    const extras = costUsd !== null && Number.isFinite(costUsd) && costUsd >= 0 ? { costUsd } : {};
    this.pending.set(ticketId, addAnswerUsage(this.pending.get(ticketId) ?? null, model, usage, extras));
    this.schedule();
  }

  /** A share of the account's windows credited to `ticketId` (the account's previous answer's; docs/flows.md#capacity-and-cost). */
  addShare(ticketId: string, share: WindowShare): void {
    this.pending.set(ticketId, addSegmentUsage(this.pending.get(ticketId) ?? null, { ...NO_TOKENS, windowShare: share }));
    this.schedule();
  }

  /** The account's reading an answer of `ticketId` carried: written with its row, the newest kept (the panel's header bar). */
  noteReading(ticketId: string, account: AccountReading): void {
    this.pending.set(ticketId, addSegmentUsage(this.pending.get(ticketId) ?? null, { ...NO_TOKENS, account }));
    this.schedule();
  }

  private schedule(): void {
    this.timer ??= this.timers.setTimeout(() => {
      this.timer = undefined;
      this.writes.request();
    }, this.flushMs);
  }

  /** Writes everything summed so far; resolves once it is in the ledger (or failed, logged). */
  async flush(): Promise<void> {
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await this.writes.idle();
    if (this.pending.size === 0) return;
    this.writes.request();
    await this.writes.idle();
  }

  private async writeOnce(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    for (const [ticketId, usage] of batch) {
      try {
        await this.write(ticketId, usage);
      } catch (err) {
        // Kept for the next write: counts are added, never lost to a busy store.
        this.pending.set(ticketId, addSegmentUsage(this.pending.get(ticketId) ?? null, usage));
        this.log(`usage: recording the tokens of ticket ${ticketId} failed: ${(err as Error).message}`);
      }
    }
  }
}
