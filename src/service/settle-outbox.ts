/**
 * The settle outbox: tickets the ledger marked `pending` are released at the gateway, retried
 * with a per-ticket backoff that is stored in the ledger, so it survives restarts and task
 * deletion. Any window flushes the rows its own user actions queued at once; the lease holder's
 * sync loop flushes the rest.
 */
import type { Clock } from '../core/clock';
import type { TicketRecord } from '../core/types';
import type { GatewayClient } from '../gateway-client/client';
import { isGatewayError } from '../gateway-client/errors';
import type { TaskStore } from '../store';
import type { AvailabilitySnapshot } from './availability';
import { backoff, errorText, isTransportFailure, type BackgroundWork, type SyncConfig } from './sync-config';
import { acknowledgeSettle, settleAcknowledgedBy, settleReasonOf } from './ticket-rules';

export interface SettleOutboxOptions {
  store: TaskStore;
  gateway: GatewayClient;
  clock: Clock;
  config: Pick<SyncConfig, 'settleBackoffMs' | 'settleBackoffMaxMs'>;
  availability: AvailabilitySnapshot;
  background: BackgroundWork;
  /** Aborted when the service stops. */
  signal: () => AbortSignal;
  /** Rows were queued: the sync loop re-plans (a failed attempt is retried at its backoff). */
  onQueued: () => void;
  log: (line: string) => void;
}

export interface FlushReport {
  attempts: number;
  acked: number;
  transportFailure?: unknown;
}

export class SettleOutbox {
  private readonly inflight = new Set<string>();

  constructor(private readonly options: SettleOutboxOptions) {}

  /** Try these outbox rows now, in the background (any window: they are this window's user actions). */
  settleSoon(ticketIds: string[]): void {
    if (ticketIds.length === 0) return;
    this.options.background.track(this.flush(ticketIds));
    this.options.onQueued();
  }

  /**
   * Sends due outbox rows (or just `only`). 2xx/4xx -> acknowledged; 5xx/network/timeout ->
   * kept pending with a per-ticket backoff (persisted, so it survives restarts). Stops at the
   * first transport failure: the gateway is unreachable, no point hammering it.
   */
  async flush(only?: string[]): Promise<FlushReport> {
    const { store, gateway, clock, config, availability } = this.options;
    let attempts = 0;
    let acked = 0;
    const seen = new Set<string>();
    for (let round = 0; round < 50; round++) {
      const rows = store.read((tx) =>
        only
          ? only.map((id) => tx.tickets.get(id)).filter((t): t is TicketRecord => t !== undefined && t.settleState === 'pending')
          : tx.tickets.pendingSettles(100),
      );
      const todo = rows.filter((r) => !seen.has(r.ticketId) && !this.inflight.has(r.ticketId));
      if (todo.length === 0) break;
      for (const row of todo) {
        seen.add(row.ticketId);
        this.inflight.add(row.ticketId);
        attempts += 1;
        try {
          await gateway.settle(row.ticketId, settleReasonOf(row.settleReason), this.options.signal());
          await store.mutate((tx) => acknowledgeSettle(tx, row));
          acked += 1;
        } catch (e) {
          if (isGatewayError(e) && settleAcknowledgedBy(e)) {
            await store.mutate((tx) => acknowledgeSettle(tx, row));
            acked += 1;
          } else {
            const at = clock.now() + backoff(config.settleBackoffMs, config.settleBackoffMaxMs, row.settleAttempts);
            await store
              .mutate((tx) => tx.tickets.recordSettleFailure(row.ticketId, `settle failed: ${errorText(e)}`, at))
              .catch(() => undefined);
            if (isTransportFailure(e)) {
              this.inflight.delete(row.ticketId);
              return { attempts, acked, transportFailure: e };
            }
          }
        } finally {
          this.inflight.delete(row.ticketId);
        }
      }
      if (only) break;
    }
    if (acked > 0 && availability.state.status === 'disabled') void availability.refresh();
    return { attempts, acked };
  }

  /** Last resort when even the ledger write failed: one direct settle attempt. */
  async settleUnrecorded(ticketId: string): Promise<void> {
    try {
      await this.options.gateway.settle(ticketId, 'orphan');
    } catch (e) {
      this.options.log(`could not settle unrecorded ticket ${ticketId}: ${errorText(e)}`);
    }
  }
}
