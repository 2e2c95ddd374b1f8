// The model routes (POST .../v1/messages and its count_tokens; POST /api/openai/v1/responses, each
// API to its own upstream): the ticket's checks and the
// account's hold before anything is read, then the body, the upstream key, a model-request slot
// (activating a ready ticket), and the request proxied upstream.
import type http from 'node:http';
import type { Clock } from '../../core/clock';
import { TICKET_HEADER } from '../../protocol/gateway';
import { formatWindowShare, WINDOW_SHARE_HEADER } from '../../protocol/window-share';
import type { TicketAuthority } from '../authority/authority';
import type { GatewayConfig } from '../config/schema';
import type { GatewayAuth } from '../http/auth';
import { errors } from '../http/errors';
import { readBody } from '../http/http-body';
import type { Logger } from '../http/logger';
import type { GatewayMetrics } from '../http/metrics';
import { admissibleUnlessHeld, type AccountLimits } from './account-limit';
import { clientCredentialOf, type ModelApi } from './header-filter';
import { applyModelAllowList } from './model-allow-list';
import { proxyModelRequest } from './model-proxy';

/** What the model route reads from its server. */
export interface ModelRouteContext {
  config: GatewayConfig;
  auth: GatewayAuth;
  clock: Clock;
  authority: TicketAuthority;
  limits: AccountLimits | undefined;
  /** The model upstream now (main.ts sets it late when it starts the demo model). */
  upstreamUrl(): string | null;
  upstreamKey(): Promise<string | null>;
  /** The OpenAI Responses upstream and its key (`openaiUpstreamUrl`, `openaiUpstreamApiKey`). */
  openaiUpstreamUrl(): string | null;
  openaiUpstreamKey(): Promise<string | null>;
  metrics: GatewayMetrics;
  log: Logger;
  sendError(res: http.ServerResponse, error: unknown): void;
}

export async function serveModelRequest(
  at: ModelRouteContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  upstreamPathAndQuery: string,
  api: ModelApi = 'anthropic',
): Promise<void> {
  const config = at.config;
  const user = at.auth.user(req);
  const limit = config.maxModelBodyBytes;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw errors.tooLarge(`model request body over ${limit} bytes`);
  const header = req.headers[TICKET_HEADER];
  const ticketId = Array.isArray(header) ? header[0] : header;
  // Ticket problems first (3102/3105): nothing is read, held or activated for a request that cannot go on.
  await admissibleUnlessHeld(at.limits, at.clock.now(), () => at.authority.admissible(user, ticketId));
  const upstreamUrl = api === 'openai' ? at.openaiUpstreamUrl() : at.upstreamUrl();
  if (!upstreamUrl)
    throw errors.upstreamNotConfigured(
      api === 'openai' ? 'no OpenAI upstream configured (--openai-upstream-url)' : 'no model upstream configured (--upstream-url)',
    );
  // Slots are taken only once the whole body is in: a slow body holds nothing but its connection.
  // The models list names Anthropic models: an OpenAI request's model goes as asked.
  const read = await readBody(req, limit, config.bodyReadTimeoutMs);
  const body = api === 'openai' ? read : applyModelAllowList(read, config);
  const clientCredential = config.passClientCredential ? clientCredentialOf(req, api) : undefined;
  const apiKey = clientCredential ? null : await (api === 'openai' ? at.openaiUpstreamKey() : at.upstreamKey());
  if (config.passClientCredential && !clientCredential && !apiKey) {
    throw errors.upstreamNotConfigured(
      'No model API key is set and the agent sent no login of its own: set the key with "Off-Peak: Set Model API Key…", or use Claude Code with its own login',
    );
  }
  const admission = await at.authority.admit(user, ticketId);
  if (admission.activated)
    at.log.info('ticket active', { ticket_id: admission.ticket.ticketId, active_until: admission.ticket.activeUntil });
  await proxyModelRequest({
    req,
    res,
    api,
    upstreamPathAndQuery,
    body,
    admission,
    // Personal mode's model API is the user's setting: an unreachable one names it.
    upstream: {
      url: upstreamUrl,
      apiKey,
      auth: api === 'openai' ? 'bearer' : config.upstreamAuth,
      timeoutMs: config.upstreamTimeoutMs,
      clientCredential,
      unreachableFix: config.passClientCredential ? 'check offPeak.personal.baseUrl' : undefined,
    },
    serverTime: () => at.clock.now(),
    metrics: at.metrics,
    log: at.log,
    sendError: (error) => at.sendError(res, error),
    inspect: (status, headers) =>
      (config.passClientCredential && apiKey ? refusedModelKey(upstreamUrl, status) : undefined) ??
      at.limits?.observe(status, headers, at.clock.now()),
    annotate: (status, headers) => {
      const reading = status < 300 ? at.limits?.windows.observe(admission.ticket.ticketId, user.id, headers) : undefined;
      return reading ? { [WINDOW_SHARE_HEADER]: formatWindowShare(reading) } : undefined;
    },
  });
}

/**
 * Personal mode: the model API refused the user's model API key (401/403). Retrying cannot help,
 * so the agent is told not to (upstream_not_configured ends the segment at once, as a missing key
 * does) with the command that fixes it, instead of the model API's "invalid x-api-key".
 */
function refusedModelKey(upstreamUrl: string, status: number): ReturnType<typeof errors.internal> | undefined {
  if (status !== 401 && status !== 403) return undefined;
  return errors.upstreamNotConfigured(
    `The model API ${new URL(upstreamUrl).origin} refused the model API key (${status} ${status === 401 ? 'authentication_error' : 'permission_error'}): run "Off-Peak: Set Model API Key…" to set it again, or check offPeak.personal.baseUrl`,
  );
}
