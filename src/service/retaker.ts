/**
 * The retaker: a queued task without a live ticket (its segment expired, its ticket died, a take
 * answered badly, Continue found it dead) takes a new one with the same task id. Single-flight
 * per task; on failure the task stays queued without a ticket, its last_error says why, and the
 * sync loop tries again after a per-task backoff (kept in memory: a restart retries at once).
 */
import type { Clock } from '../core/clock';
import type { GatewayClient, TakeResult } from '../gateway-client/client';
import { isGatewayError } from '../gateway-client/errors';
import type { TaskStore } from '../store';
import type { AvailabilitySnapshot } from './availability';
import type { SettleOutbox } from './settle-outbox';
import { backoff, errorText, type SyncConfig } from './sync-config';
import { RETAKE_FAILED, attachRetakenTicket, type PollDelay } from './ticket-rules';

export interface RetakerOptions {
  store: TaskStore;
  gateway: GatewayClient;
  clock: Clock;
  config: Pick<SyncConfig, 'retakeBackoffMs' | 'retakeBackoffMaxMs'>;
  availability: AvailabilitySnapshot;
  outbox: SettleOutbox;
  pollDelay: PollDelay;
  /** A retaken ticket is ready or active for a queued task: the scheduler should look. */
  onReady: (taskId: string) => void;
  log: (line: string) => void;
}

export interface RetakeResult {
  ok: boolean;
  error?: unknown;
}

export class Retaker {
  private readonly inflight = new Map<string, Promise<RetakeResult>>();
  /** Ticketless queued tasks: when to try the retake again. */
  private readonly notBefore = new Map<string, { at: number; attempts: number }>();

  constructor(private readonly options: RetakerOptions) {}

  /** When the task's next retake is due (undefined: now). */
  dueAt(taskId: string): number | undefined {
    return this.notBefore.get(taskId)?.at;
  }

  /** Forget the task's backoff: a status answer just said its ticket is dead, retake at once. */
  clearBackoff(taskId: string): void {
    this.notBefore.delete(taskId);
  }

  /** Retake with the same task id; resolves to whether a live ticket was attached. */
  async retake(taskId: string): Promise<boolean> {
    return (await this.retakeDetailed(taskId)).ok;
  }

  retakeDetailed(taskId: string): Promise<RetakeResult> {
    const existing = this.inflight.get(taskId);
    if (existing) return existing;
    const run = this.run(taskId).finally(() => this.inflight.delete(taskId));
    this.inflight.set(taskId, run);
    return run;
  }

  private async run(taskId: string): Promise<RetakeResult> {
    const { store, gateway, outbox } = this.options;
    let take: TakeResult;
    try {
      take = await gateway.take(taskId);
    } catch (e) {
      return this.fail(taskId, e);
    }
    let outcome;
    try {
      outcome = await store.mutate((tx) => attachRetakenTicket(tx, taskId, take, this.options.pollDelay));
    } catch (e) {
      return this.fail(taskId, e);
    }
    if (outcome === 'gone') {
      outbox.settleSoon([take.ticketId]);
      return { ok: false };
    }
    if (outcome === 'dead' || outcome === 'conflict') {
      if (outcome === 'dead') outbox.settleSoon([take.ticketId]);
      return this.fail(
        taskId,
        new Error(`the gateway answered the take with a ${outcome === 'dead' ? `${take.state} ticket` : 'ticket already retired'}`),
      );
    }
    this.notBefore.delete(taskId);
    if (outcome === 'ready') this.options.onReady(taskId);
    return { ok: true };
  }

  private async fail(taskId: string, e: unknown): Promise<{ ok: false; error: unknown }> {
    const { clock, config, availability, store } = this.options;
    if (isGatewayError(e) && e.kind === 'not_eligible') {
      // 3101: the gateway hands this account no ticket for the task (the rollout is off and it no
      // longer knows the task's tickets, or the plan excludes it). Retrying cannot help: the task
      // is paused, saying why, until the user continues it (docs/flows.md#sync).
      this.notBefore.delete(taskId);
      const text = `${RETAKE_FAILED} ${errorText(e)}. It is not taken again until you Continue it.`;
      await store
        .mutate((tx) => tx.tasks.pause(taskId) && tx.tasks.setLastError(taskId, text, { onlyWithoutTicket: true }))
        .catch(() => undefined);
      this.options.log(`${taskId}: ${text}`);
      return { ok: false, error: e };
    }
    const prev = this.notBefore.get(taskId)?.attempts ?? 0;
    let at = clock.now() + backoff(config.retakeBackoffMs, config.retakeBackoffMaxMs, prev);
    if (isGatewayError(e) && e.kind === 'limit_reached') {
      availability.noteLimitReached(e.nextTakeAt);
      if (e.nextTakeAt !== undefined) at = Math.max(e.nextTakeAt, clock.now() + 1_000);
    }
    this.notBefore.set(taskId, { at, attempts: prev + 1 });
    const text = `${RETAKE_FAILED} ${errorText(e)}`;
    await store.mutate((tx) => tx.tasks.setLastError(taskId, text, { onlyWithoutTicket: true })).catch(() => undefined);
    this.options.log(`${taskId}: ${text}`);
    return { ok: false, error: e };
  }
}
