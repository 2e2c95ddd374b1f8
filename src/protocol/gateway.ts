// The Off-Peak Gateway HTTP API: one definition shared by the reference gateway,
// the extension's gateway client and the tests. All times are epoch milliseconds; every JSON
// response carries `server_time` so a client can correct for clock skew.
import * as z from './zod';
import { SERVER_TICKET_STATES } from '../core/types';

// ---------------------------------------------------------------------------------------------
// Paths and headers

export const GatewayPaths = {
  clientConfigs: '/api/v1/off-peak/client/configs',
  /** GET: the models the gateway serves, for the client's Model list. */
  clientModels: '/api/v1/off-peak/client/models',
  availability: '/api/v1/off-peak/ticket/availability',
  take: '/api/v1/off-peak/ticket',
  status: '/api/v1/off-peak/ticket/status',
  /** POST; the ticket id is URL-encoded into the path. */
  settle: (ticketId: string): string => `/api/v1/off-peak/ticket/${encodeURIComponent(ticketId)}/settle`,
  /** The Anthropic base URL an agent is given (Claude Code sends `HEAD <base>` first). */
  anthropicBase: '/api/anthropic',
  /** POST, optionally with `?beta=true`. */
  anthropicMessages: '/api/anthropic/v1/messages',
  /** The OpenAI base URL an agent is given (Codex appends `/v1/responses` below it, docs/flows.md#segments). */
  openaiBase: '/api/openai',
  /** POST: OpenAI Responses API (streaming), what Codex sends. */
  openaiResponses: '/api/openai/v1/responses',
  healthz: '/healthz',
  metrics: '/metrics',
} as const;

/** Required on every model request: which ticket admits it. Header names are case-insensitive. */
export const TICKET_HEADER = 'x-off-peak-ticket-id';
/**
 * The user's gateway key in its own header, so a model request can carry the agent's own
 * Authorization / x-api-key through to the model API (personal mode's login passthrough,
 * docs/architecture.md#personal-mode).
 */
export const LOCAL_KEY_HEADER = 'x-offpeak-key';
/** The model proxy's body is upstream's, so its server time travels in this header. */
export const SERVER_TIME_HEADER = 'x-off-peak-server-time';

/** A status call names 1..MAX_STATUS_IDS tickets; zero or more is a 400. */
export const MAX_STATUS_IDS = 100;
/** Upper bound of `wait_ms` accepted by the schema; a gateway may clamp it lower. */
export const MAX_STATUS_WAIT_MS = 120_000;

// ---------------------------------------------------------------------------------------------
// Errors: one shape everywhere
//   {"type":"error","error":{"type":"<anthropic-style type>","code":"<code>","message":"..."},"server_time":...}

/** Business codes of the off-peak feature (docs/flows.md#server-ticket-states). */
export const BusinessCode = {
  /** The user's plan is not eligible (or the feature is not exposed to them). */
  NotEligible: '3101',
  /** The ticket is expired, settled, unknown or another user's: the segment is over. */
  TicketInvalid: '3102',
  /** The take limit is reached (rolling quota or live-ticket limit); see `next_take_at`. */
  LimitReached: '3103',
  /** The ticket is not admitted yet (still queued) or there is no model capacity now; wait `Retry-After`. */
  NotAdmitted: '3105',
  /** Older gateways sent 3001 for an invalid ticket; clients treat it exactly like 3102. */
  LegacyTicketInvalid: '3001',
} as const;
export type BusinessCode = (typeof BusinessCode)[keyof typeof BusinessCode];

/** Codes for errors that are not business decisions (malformed input, auth, transport). */
export const GeneralErrorCode = {
  InvalidRequest: 'invalid_request',
  Unauthorized: 'unauthorized',
  NotFound: 'not_found',
  MethodNotAllowed: 'method_not_allowed',
  RequestTooLarge: 'request_too_large',
  /** The request body did not arrive in time (408). */
  RequestTimeout: 'request_timeout',
  UpstreamUnavailable: 'upstream_unavailable',
  UpstreamNotConfigured: 'upstream_not_configured',
  ShuttingDown: 'shutting_down',
  Internal: 'internal',
} as const;
export type GeneralErrorCode = (typeof GeneralErrorCode)[keyof typeof GeneralErrorCode];

export type GatewayErrorCode = BusinessCode | GeneralErrorCode;

/** Anthropic-style error types, used in `error.type`. */
export const AnthropicErrorTypeSchema = z.enum([
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'overloaded_error',
]);
export type AnthropicErrorType = z.infer<typeof AnthropicErrorTypeSchema>;

export const GatewayErrorSchema = z.object({
  type: z.literal('error'),
  error: z.object({
    type: z.string(),
    code: z.string(),
    message: z.string(),
    /** 3103 only: when taking becomes possible again (null when the gateway cannot tell). */
    next_take_at: z.optional(z.nullable(z.number().check(z.int()))),
    /** 3105 (and other 429/503): the same wait as the Retry-After header, in ms. */
    retry_after_ms: z.optional(z.number().check(z.int()).check(z.nonnegative())),
    /**
     * 3105 from a gateway run with account limits (docs/flows.md#usage-limits): the model API said the
     * account's usage limit is reached; no request of the account goes upstream before this epoch ms.
     */
    limit_reset_at: z.optional(z.number().check(z.int())),
  }),
  /** Present on every error the gateway itself produces (absent on upstream errors it forwards). */
  server_time: z.optional(z.number().check(z.int())),
});
export type GatewayError = z.infer<typeof GatewayErrorSchema>;

/** The same reset as `limit_reset_at`, as a header (epoch ms), on a 3105 answered for a usage limit. */
export const LIMIT_RESET_HEADER = 'x-off-peak-limit-reset';

/** `error.limit_reset_at` of an error body (string or parsed), or undefined: a 3105 held for the account's usage limit. */
export function readLimitResetAt(body: unknown): number | undefined {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  const inner = (parsed as { error?: { limit_reset_at?: unknown } } | null)?.error;
  const at = inner && typeof inner === 'object' ? inner.limit_reset_at : undefined;
  return typeof at === 'number' && Number.isSafeInteger(at) ? at : undefined;
}

/** True for 3102 and the legacy 3001: the ticket can no longer admit model requests. */
export function isTicketInvalidCode(code: string | number | null | undefined): boolean {
  const c = code === null || code === undefined ? '' : String(code);
  return c === BusinessCode.TicketInvalid || c === BusinessCode.LegacyTicketInvalid;
}

/**
 * Reads the business code out of any error body (ours, an older gateway's `{"error":{"code":3102}}`
 * with a number, or a bare `{"code":...}`); undefined when there is none, e.g. upstream errors.
 */
export function readErrorCode(body: unknown): string | undefined {
  if (typeof body === 'string') {
    try {
      return readErrorCode(JSON.parse(body));
    } catch {
      return undefined;
    }
  }
  if (!body || typeof body !== 'object') return undefined;
  const record = body as Record<string, unknown>;
  const inner = record.error;
  if (inner && typeof inner === 'object') {
    const code = (inner as Record<string, unknown>).code;
    if (typeof code === 'string' || typeof code === 'number') return String(code);
  }
  const top = record.code;
  if (typeof top === 'string' || typeof top === 'number') return String(top);
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Tickets

/** Server ticket states (docs/flows.md#server-ticket-states). `queued -> ready -> active -> expired`, `ready -> expired`, live -> `settled`. */
export const TicketStateSchema = z.enum(['queued', 'ready', 'active', 'expired', 'settled']);
export type TicketState = z.infer<typeof TicketStateSchema>;
export const LIVE_TICKET_STATES = ['queued', 'ready', 'active'] as const satisfies readonly TicketState[];
export type LiveTicketState = (typeof LIVE_TICKET_STATES)[number];
export function isLiveTicketState(state: string): state is LiveTicketState {
  return state === 'queued' || state === 'ready' || state === 'active';
}

/** Why a client settles a ticket; recorded by the gateway, all answered alike. */
export const SettleReasonSchema = z.enum([
  'completed',
  'failed',
  'cancelled',
  'deleted',
  /** The segment ended (3102 or an expired status) and the client moves on to a new ticket. */
  'segment_end',
  /** The client took a ticket but could not record it locally. */
  'orphan',
  'abandoned',
]);
export type SettleReason = z.infer<typeof SettleReasonSchema>;

const ticketId = z.string().check(z.minLength(1)).check(z.maxLength(200));
const epochMs = z.number().check(z.int());
/** How long the client should wait before asking again; null: nothing will change on its own. */
const nextPoll = z.nullable(z.number().check(z.int()).check(z.nonnegative()));
/**
 * Sent only while the off-peak windows are closed (queued tickets wait for them): when they next
 * open, or null when no opening is scheduled. Absent while they are open, and from older gateways.
 */
const windowOpensAt = z.optional(z.nullable(epochMs));

export const QueuedTicketStatusSchema = z.object({
  ticket_id: ticketId,
  task_id: z.string(),
  state: z.literal('queued'),
  /** 1-based place in the gateway's FIFO queue. */
  position: z.number().check(z.int()).check(z.gte(1)),
  taken_at: epochMs,
  next_poll_after_ms: nextPoll,
  window_opens_at: windowOpensAt,
  /** A gateway with account limits promotes nothing before this epoch ms: the usage limit's reset, or the headroom's (docs/flows.md#usage-limits). */
  promotion_held_until: z.optional(epochMs),
});
export const ReadyTicketStatusSchema = z.object({
  ticket_id: ticketId,
  task_id: z.string(),
  state: z.literal('ready'),
  taken_at: epochMs,
  ready_at: epochMs,
  /** Unused until this time, the ticket expires. */
  ready_deadline: epochMs,
  next_poll_after_ms: nextPoll,
});
export const ActiveTicketStatusSchema = z.object({
  ticket_id: ticketId,
  task_id: z.string(),
  state: z.literal('active'),
  taken_at: epochMs,
  ready_at: epochMs,
  /** The first admitted model request. */
  active_at: epochMs,
  /** The segment ends here: later model requests get 3102. */
  active_until: epochMs,
  next_poll_after_ms: nextPoll,
});
export const ExpiredTicketStatusSchema = z.object({
  ticket_id: ticketId,
  task_id: z.string(),
  state: z.literal('expired'),
  taken_at: epochMs,
  expired_at: epochMs,
  /** `ready`: its ready TTL ran out unused; `active`: its active window ended. */
  expired_from: z.enum(['ready', 'active']),
  next_poll_after_ms: nextPoll,
});
export const SettledTicketStatusSchema = z.object({
  ticket_id: ticketId,
  task_id: z.string(),
  state: z.literal('settled'),
  taken_at: epochMs,
  settled_at: epochMs,
  reason: SettleReasonSchema,
  next_poll_after_ms: nextPoll,
});
/** Unknown ticket, or another user's (the gateway does not tell them apart). */
export const NotFoundTicketStatusSchema = z.object({
  ticket_id: z.string(),
  state: z.literal('not_found'),
  next_poll_after_ms: nextPoll,
});
export const TicketStatusEntrySchema = z.discriminatedUnion('state', [
  QueuedTicketStatusSchema,
  ReadyTicketStatusSchema,
  ActiveTicketStatusSchema,
  ExpiredTicketStatusSchema,
  SettledTicketStatusSchema,
  NotFoundTicketStatusSchema,
]);
export type QueuedTicketStatus = z.infer<typeof QueuedTicketStatusSchema>;
export type ReadyTicketStatus = z.infer<typeof ReadyTicketStatusSchema>;
export type ActiveTicketStatus = z.infer<typeof ActiveTicketStatusSchema>;
export type ExpiredTicketStatus = z.infer<typeof ExpiredTicketStatusSchema>;
export type SettledTicketStatus = z.infer<typeof SettledTicketStatusSchema>;
export type NotFoundTicketStatus = z.infer<typeof NotFoundTicketStatusSchema>;
export type TicketStatusEntry = z.infer<typeof TicketStatusEntrySchema>;
export type TicketStatusState = TicketStatusEntry['state'];

// ---------------------------------------------------------------------------------------------
// GET /api/v1/off-peak/client/configs

export const AllowedModelSchema = z.object({
  id: z.string().check(z.minLength(1)),
  display_name: z.string(),
});
export type AllowedModel = z.infer<typeof AllowedModelSchema>;

export const ClientConfigsResponseSchema = z.object({
  server_time: epochMs,
  exposure: z.object({
    /** Feature shown to this user at all (gray release). Off + existing tasks: hide only "create". */
    enabled: z.boolean(),
  }),
  allowed_models: z.array(AllowedModelSchema),
  default_model: z.nullable(z.string()),
  plan: z.object({
    name: z.string(),
    /** False: lock the create button and show the upgrade hint (take would answer 3101). */
    eligible: z.boolean(),
    upgrade_hint: z.nullable(z.string()),
    upgrade_url: z.nullable(z.string()),
  }),
  /** Human description of when tickets are admitted, for tooltips; not a rule for the client to apply. */
  off_peak: z.object({
    time_zone: z.string(),
    description: z.string(),
  }),
});
export type ClientConfigsResponse = z.infer<typeof ClientConfigsResponseSchema>;

// ---------------------------------------------------------------------------------------------
// GET /api/v1/off-peak/client/models

/** A model id a Model list offers and a request names: no spaces, quotes or control characters. */
export const MODEL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}$/;

export const ClientModelsResponseSchema = z.object({
  server_time: epochMs,
  /**
   * What the gateway serves: its allow-list (--models), else what its model upstream lists. Empty
   * when neither says (no upstream, no key, the upstream's list failed): the client then offers
   * the agent's or the gateway's default alone.
   */
  models: z.array(z.extend(AllowedModelSchema, { id: z.string().check(z.regex(MODEL_ID_PATTERN)) })),
  /**
   * Personal mode's local authority only: the model API refused the user's model API key (401/403)
   * when asked for its list, so the window can name the fix before any task fails on it.
   */
  upstream_refused: z.optional(z.number().check(z.int())),
});
export type ClientModelsResponse = z.infer<typeof ClientModelsResponseSchema>;

/** The model upstream's `GET /v1/models` (Anthropic's list endpoint); other fields are ignored. */
export const UpstreamModelListSchema = z.object({
  data: z.array(z.object({ id: z.string(), display_name: z.optional(z.string()) })),
});

// ---------------------------------------------------------------------------------------------
// GET /api/v1/off-peak/ticket/availability

export const AvailabilityResponseSchema = z.object({
  server_time: epochMs,
  can_take: z.boolean(),
  /** How many tickets the user could take right now (min of quota left and live-ticket room). */
  can_take_number: z.number().check(z.int()).check(z.nonnegative()),
  /** When `can_take` is false: when to ask again (null if unknown, e.g. until a live ticket ends). */
  next_take_at: z.nullable(epochMs),
  /** Why `can_take` is false; null when it is true. */
  reason: z.nullable(z.enum(['not_eligible', 'disabled', 'quota', 'live_limit'])),
  window_opens_at: windowOpensAt,
});
export type AvailabilityResponse = z.infer<typeof AvailabilityResponseSchema>;

// ---------------------------------------------------------------------------------------------
// POST /api/v1/off-peak/ticket

export const TakeRequestSchema = z.object({
  /** The client's stable task id: taking again while this task has a live ticket returns that ticket. */
  task_id: z.string().check(z.minLength(1)).check(z.maxLength(200)),
});
export type TakeRequest = z.infer<typeof TakeRequestSchema>;

export const TakeResponseSchema = z.object({
  server_time: epochMs,
  ticket_id: ticketId,
  task_id: z.string(),
  state: z.enum(LIVE_TICKET_STATES),
  /** Queue position while queued, else null. */
  position: z.nullable(z.number().check(z.int()).check(z.gte(1))),
  ready_deadline: z.nullable(epochMs),
  active_until: z.nullable(epochMs),
  next_poll_after_ms: z.number().check(z.int()).check(z.nonnegative()),
  /** True when the task already had this live ticket (a retried take); no quota was used. */
  reused: z.boolean(),
});
export type TakeResponse = z.infer<typeof TakeResponseSchema>;

// ---------------------------------------------------------------------------------------------
// POST /api/v1/off-peak/ticket/status

export const StatusRequestSchema = z.object({
  ticket_ids: z.array(ticketId).check(z.minLength(1)).check(z.maxLength(MAX_STATUS_IDS)),
  /**
   * Long-poll: answer as soon as one of the tickets changes, or after this long. A user already
   * holding the gateway's per-user maximum of waiting long-polls is answered at once.
   */
  wait_ms: z.optional(z.number().check(z.int()).check(z.gte(0)).check(z.lte(MAX_STATUS_WAIT_MS))),
  /**
   * The state the client last saw per ticket. A long-poll answers AT ONCE when any ticket is
   * already in another state (it changed before the poll arrived); without it a promotion that
   * happened between two polls would wait out the whole `wait_ms`.
   */
  known_states: z.optional(z.record(ticketId, z.enum(SERVER_TICKET_STATES))),
});
export type StatusRequest = z.infer<typeof StatusRequestSchema>;

export const StatusResponseSchema = z.object({
  server_time: epochMs,
  /** One entry per distinct requested id, in request order (a repeated id is answered once). */
  tickets: z.array(TicketStatusEntrySchema),
  /** The smallest per-ticket hint; null when none of the tickets will change on its own. */
  next_poll_after_ms: nextPoll,
});
export type StatusResponse = z.infer<typeof StatusResponseSchema>;

// ---------------------------------------------------------------------------------------------
// POST /api/v1/off-peak/ticket/:ticket_id/settle

export const SettleRequestSchema = z.object({
  reason: SettleReasonSchema,
});
export type SettleRequest = z.infer<typeof SettleRequestSchema>;

export const SettleResponseSchema = z.object({
  server_time: epochMs,
  ticket_id: ticketId,
  state: z.literal('settled'),
  settled_at: epochMs,
  /** The reason given by the FIRST settle; later settles answer the same. */
  reason: SettleReasonSchema,
  /** The state the ticket was in when it was settled. */
  settled_from: z.enum(['queued', 'ready', 'active', 'expired']),
});
export type SettleResponse = z.infer<typeof SettleResponseSchema>;

// ---------------------------------------------------------------------------------------------
// GET /healthz

export const HealthResponseSchema = z.object({
  status: z.literal('ok'),
  server_time: epochMs,
  version: z.string(),
});
export type HealthResponse = z.infer<typeof HealthResponseSchema>;
