/**
 * What a segment's ticket proxy is given (`TicketProxyOptions`, its hold timings) and what it
 * reports (`TicketProxyEvent`, `TicketProxyState`); the proxy itself is `ticket-proxy.ts`.
 */
import type { ChannelConnect } from '../../core/channel-agent';
import type { Clock } from '../../core/clock';
import type { WindowShareReading } from '../../protocol/window-share';
import type { PermissionRelayAnswer, PermissionRelayRequest } from '../../protocol/permission-relay';
import type { GatewayOutageTimings } from './gateway-outage';
import type { LoopbackProxyServer } from './loopback-proxy-server';
import type { AnswerUsage } from './usage-meter';

/** What the proxy reports of the segment's requests (`TicketProxy.onEvent`). */
export type TicketProxyEvent =
  | { type: 'holding'; at: number; status: number; waitMs: number; attempt: number; usageLimit?: boolean }
  | { type: 'admitted'; at: number }
  /** A model answer ended; what it used, as the API reported it. */
  | ({ type: 'usage'; at: number } & AnswerUsage)
  /** A model answer began with the account's reading and the share credited to the account's previous answer (docs/flows.md#capacity-and-cost). */
  | { type: 'window-share'; at: number; reading: WindowShareReading }
  | { type: 'segment-expired'; at: number; status: number; code: string }
  | { type: 'upstream-error'; at: number; status: number; code: string | null }
  /** The first request that could not reach the gateway: an outage began at `since`. */
  | { type: 'gateway-unreachable'; at: number; since: number; error: string }
  /** The gateway answered again after an outage that began at `since`. */
  | { type: 'gateway-reachable'; at: number; since: number }
  /** The outage lasted past its bound: the segment is over and the task fails with `reason`. */
  | { type: 'gateway-outage-exceeded'; at: number; since: number; reason: string }
  /** The model API cannot be used (no credential, unreachable): the segment is over and the task fails with `reason`. */
  | { type: 'model-api-unusable'; at: number; reason: string }
  /**
   * The account's usage limit holds the segment's requests until `resetAt` (this machine's clock);
   * `park`: that is later than a hold is worth, the task should park; null `resetAt`: it lifted.
   */
  | { type: 'usage-limit'; at: number; resetAt: number | null; park: boolean };

export type TicketProxyState = 'waiting' | 'holding' | 'admitted' | 'expired' | 'cancelled' | 'gateway-lost';

/** Hold timings of a proxy (tests shorten them). */
export interface TicketProxyTimings extends GatewayOutageTimings {
  /** Wait before re-probing a held request when the gateway gives no Retry-After. Default 60 s. */
  holdDefaultMs?: number;
  /** Upper bound of one hold, whatever Retry-After says. Default 5 min. */
  holdMaxMs?: number;
  /** A usage limit that resets later than this parks the task (docs/flows.md#usage-limits). Default 5 min. */
  usageLimitParkMs?: number;
}

export interface TicketProxyOptions extends TicketProxyTimings {
  /** The gateway's Anthropic base, e.g. `http://gateway:8787/api/anthropic`. */
  upstreamBaseUrl: string;
  /**
   * Reach the gateway over connections from here instead of the URL's host (personal mode: the
   * local authority's proven channel, dialled at its current name for each new connection, where
   * the agent's login goes; docs/architecture.md#personal-mode).
   */
  upstreamChannel?: ChannelConnect;
  /** The user's gateway API key; sent as `Authorization: Bearer` (or x-offpeak-key, see below). */
  apiKey: string;
  /**
   * The agent's own Authorization / x-api-key go on untouched (its login, personal mode) and the
   * gateway key goes in x-offpeak-key. Never read, stored or logged here.
   */
  passAgentCredential?: boolean;
  ticketId: string;
  clock?: Clock;
  /** Epoch ms when the ticket's time runs out (null when unknown): a gateway outage is not waited for past it. */
  ticketDeadline?: () => number | null;
  /** Read the token usage of model answers (`usage` events). Default true; the bench compares with it off. */
  usageAccounting?: boolean;
  onEvent?: (event: TicketProxyEvent) => void;
  /**
   * Answers Claude Code's permission questions (POST <baseUrl>/offpeak/permission from the relay
   * MCP server): held until the host answers; the signal aborts when the relay hangs up.
   */
  onPermissionAsk?: (request: PermissionRelayRequest, signal: AbortSignal) => Promise<PermissionRelayAnswer>;
  /** The window's shared loopback listener; without it the proxy opens (and closes) its own. */
  listener?: LoopbackProxyServer;
  /**
   * Requests for the gateway wait until this resolves (or the segment is cancelled): the runtime
   * starts the agent while it records the segment's start, and no model answer may reach the agent
   * before that is done (docs/flows.md#segments).
   */
  startGate?: Promise<void>;
}
