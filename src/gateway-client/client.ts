/**
 * The extension's client for the Off-Peak Gateway API (src/protocol/gateway.ts). Schemas come from
 * src/protocol; every failure is a GatewayError; every answer's server times are also given on
 * the local clock (skew-corrected) so callers never compare server instants with local ones.
 */
import * as z from '../protocol/zod';
import {
  AvailabilityResponseSchema,
  ClientConfigsResponseSchema,
  ClientModelsResponseSchema,
  type ClientModelsResponse,
  GatewayPaths,
  MAX_STATUS_IDS,
  MAX_STATUS_WAIT_MS,
  SettleResponseSchema,
  StatusResponseSchema,
  TakeResponseSchema,
  type AllowedModel,
  type ClientConfigsResponse,
  type SettleReason,
  type SettleResponse,
  type TicketStatusEntry,
  type TicketStatusState,
} from '../protocol/gateway';
import type { Clock } from '../core/clock';
import { SERVER_TICKET_STATES } from '../core/types';
import { GatewayError, type GatewayEndpoint } from './errors';
import { Transport, type ApiKeyProvider, type FetchLike, type ServerClock } from './transport';
import type { ChannelConnect } from './socket-fetch';

export interface GatewayTimeouts {
  /** configs, models, availability. */
  readMs: number;
  takeMs: number;
  /** status without long-poll; with long-poll, `wait_ms` is added on top. */
  statusMs: number;
  settleMs: number;
}

export const DEFAULT_TIMEOUTS: GatewayTimeouts = { readMs: 10_000, takeMs: 15_000, statusMs: 15_000, settleMs: 10_000 };

export interface GatewayClientOptions {
  baseUrl: string;
  apiKey: ApiKeyProvider;
  clock: Clock;
  timeouts?: Partial<GatewayTimeouts>;
  fetch?: FetchLike;
  /** Reach the gateway over connections from here (personal mode's local authority: `LocalAuthority.connect`). */
  channel?: ChannelConnect;
}

/**
 * A take may, from an older or misbehaving gateway, answer a ticket that is not live. The
 * protocol schema only admits live states; we accept the dead ones too so the service can
 * repair instead of leaving the task stalled (docs/flows.md#create).
 */
const TakeAnswerSchema = z.extend(TakeResponseSchema, {
  state: z.enum(SERVER_TICKET_STATES),
  reused: z._default(z.optional(z.boolean()), false),
});

export type TakeState = z.infer<typeof TakeAnswerSchema>['state'];

/**
 * The gateway's off-peak windows as an answer reported them: open (also what an older gateway,
 * which does not say, reads as), or closed until `opensAt` (local epoch ms; null: no opening
 * scheduled). Queued tickets move on only while they are open.
 */
export type OffPeakWindow = { open: true } | { open: false; opensAt: number | null };

export interface Availability {
  canTake: boolean;
  canTakeNumber: number;
  /** Local epoch ms; undefined when the gateway cannot tell. */
  nextTakeAt?: number;
  reason: string | null;
  offPeakWindow: OffPeakWindow;
  /** Local time the answer arrived. */
  checkedAt: number;
}

export interface TakeResult {
  ticketId: string;
  taskId: string;
  state: TakeState;
  position: number | null;
  /** Local epoch ms. */
  readyDeadline?: number;
  activeUntil?: number;
  nextPollAfterMs: number;
  reused: boolean;
}

export interface StatusResult {
  tickets: TicketStatusEntry[];
  nextPollAfterMs: number | null;
}

export class GatewayClient {
  private readonly transport: Transport;
  readonly timeouts: GatewayTimeouts;

  constructor(private readonly options: GatewayClientOptions) {
    this.transport = new Transport(options);
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  }

  get serverClock(): ServerClock {
    return this.transport.serverClock;
  }

  /** Whether the caller's key provider has a key right now (nothing is sent). */
  async hasApiKey(): Promise<boolean> {
    try {
      return Boolean((await this.options.apiKey())?.trim());
    } catch {
      return false;
    }
  }

  /** A GET of one of the gateway's read routes, in the read time limit. */
  private read<T>(endpoint: GatewayEndpoint, path: string, schema: z.ZodMiniType<T>, signal?: AbortSignal): Promise<T> {
    return this.transport.call({ endpoint, method: 'GET', path, timeoutMs: this.timeouts.readMs, schema, signal });
  }

  configs(signal?: AbortSignal): Promise<ClientConfigsResponse> {
    return this.read('configs', GatewayPaths.clientConfigs, ClientConfigsResponseSchema, signal);
  }

  /** The models the gateway serves (its allow-list, else its model upstream's list); empty: only the default. */
  async models(signal?: AbortSignal): Promise<AllowedModel[]> {
    return (await this.modelList(signal)).models;
  }

  /** The models route's whole answer (personal mode: whether the model API refused the key). */
  modelList(signal?: AbortSignal): Promise<ClientModelsResponse> {
    return this.read('models', GatewayPaths.clientModels, ClientModelsResponseSchema, signal);
  }

  async availability(signal?: AbortSignal): Promise<Availability> {
    const a = await this.read('availability', GatewayPaths.availability, AvailabilityResponseSchema, signal);
    return {
      canTake: a.can_take,
      canTakeNumber: a.can_take_number,
      nextTakeAt: this.serverClock.toLocal(a.next_take_at),
      reason: a.reason,
      offPeakWindow: this.offPeakWindowOf(a),
      checkedAt: this.options.clock.now(),
    };
  }

  /** The windows as an availability answer or a queued ticket's status entry reports them. */
  offPeakWindowOf(answer: { window_opens_at?: number | null }): OffPeakWindow {
    if (answer.window_opens_at === undefined) return { open: true };
    return { open: false, opensAt: this.serverClock.toLocal(answer.window_opens_at) ?? null };
  }

  async take(taskId: string, signal?: AbortSignal): Promise<TakeResult> {
    const t = await this.transport.call({
      endpoint: 'take',
      method: 'POST',
      path: GatewayPaths.take,
      json: { task_id: taskId },
      timeoutMs: this.timeouts.takeMs,
      schema: TakeAnswerSchema,
      signal,
    });
    if (t.task_id !== taskId) {
      throw new GatewayError('bad_response', 'take', `answer is for task ${JSON.stringify(t.task_id.slice(0, 80))}, not ${taskId}`);
    }
    return {
      ticketId: t.ticket_id,
      taskId: t.task_id,
      state: t.state,
      position: t.position,
      readyDeadline: this.serverClock.toLocal(t.ready_deadline),
      activeUntil: this.serverClock.toLocal(t.active_until),
      nextPollAfterMs: t.next_poll_after_ms,
      reused: t.reused,
    };
  }

  /** Status of 1..100 tickets; `waitMs` long-polls until one of them changes. */
  /** `knownStates`: what the caller last saw per ticket, so a long-poll answers at once if it is stale. */
  async status(
    ticketIds: readonly string[],
    options: { waitMs?: number; knownStates?: Record<string, TicketStatusState>; signal?: AbortSignal } = {},
  ): Promise<StatusResult> {
    if (ticketIds.length < 1 || ticketIds.length > MAX_STATUS_IDS) {
      throw new RangeError(`status takes 1..${MAX_STATUS_IDS} ticket ids, got ${ticketIds.length}`);
    }
    const waitMs = options.waitMs === undefined ? undefined : Math.max(0, Math.min(MAX_STATUS_WAIT_MS, Math.round(options.waitMs)));
    const s = await this.transport.call({
      endpoint: 'status',
      method: 'POST',
      path: GatewayPaths.status,
      json:
        waitMs === undefined
          ? { ticket_ids: ticketIds }
          : { ticket_ids: ticketIds, wait_ms: waitMs, ...(options.knownStates ? { known_states: options.knownStates } : {}) },
      timeoutMs: this.timeouts.statusMs + (waitMs ?? 0),
      schema: StatusResponseSchema,
      signal: options.signal,
      clockSample: !waitMs,
    });
    // The protocol promises one entry per requested id; anything else would misapply states.
    const asked = new Set(ticketIds);
    const answered = new Set<string>();
    for (const entry of s.tickets) {
      if (!asked.has(entry.ticket_id)) {
        throw new GatewayError('bad_response', 'status', `answer names a ticket that was not asked for (${entry.ticket_id.slice(0, 80)})`);
      }
      if (answered.has(entry.ticket_id)) {
        throw new GatewayError('bad_response', 'status', `answer names ticket ${entry.ticket_id.slice(0, 80)} twice`);
      }
      answered.add(entry.ticket_id);
    }
    if (answered.size !== asked.size) {
      throw new GatewayError('bad_response', 'status', `answer covers ${answered.size} of ${asked.size} tickets`);
    }
    return { tickets: s.tickets, nextPollAfterMs: s.next_poll_after_ms };
  }

  async settle(ticketId: string, reason: SettleReason, signal?: AbortSignal): Promise<SettleResponse> {
    const s = await this.transport.call({
      endpoint: 'settle',
      method: 'POST',
      path: GatewayPaths.settle(ticketId),
      json: { reason },
      timeoutMs: this.timeouts.settleMs,
      schema: SettleResponseSchema,
      signal,
    });
    if (s.ticket_id !== ticketId) {
      throw new GatewayError('bad_response', 'settle', `answer is for ticket ${JSON.stringify(s.ticket_id.slice(0, 80))}, not ${ticketId}`);
    }
    return s;
  }
}

export { GatewayError, isGatewayError, type GatewayErrorKind } from './errors';
export type { ApiKeyProvider, FetchLike } from './transport';
