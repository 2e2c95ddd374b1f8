// Every refusal the gateway gives is one of these, rendered in the one error shape of src/protocol/gateway.ts.
import { BusinessCode, GeneralErrorCode, type AnthropicErrorType, type GatewayError, type GatewayErrorCode } from '../../protocol/gateway';

export class GatewayHttpError extends Error {
  constructor(
    readonly status: number,
    readonly errorType: AnthropicErrorType,
    readonly code: GatewayErrorCode,
    message: string,
    readonly extra: { next_take_at?: number | null; retry_after_ms?: number; limit_reset_at?: number } = {},
  ) {
    super(message);
  }

  /** Retry-After in whole seconds (at least 1) when the error carries a wait. */
  get retryAfterSeconds(): number | undefined {
    if (this.extra.retry_after_ms === undefined) return undefined;
    return Math.max(1, Math.ceil(this.extra.retry_after_ms / 1000));
  }

  body(serverTime: number): GatewayError {
    return {
      type: 'error',
      error: { type: this.errorType, code: this.code, message: this.message, ...this.extra },
      server_time: serverTime,
    };
  }
}

export const errors = {
  notEligible: (message: string) => new GatewayHttpError(403, 'permission_error', BusinessCode.NotEligible, message),
  ticketInvalid: (message: string) => new GatewayHttpError(400, 'invalid_request_error', BusinessCode.TicketInvalid, message),
  limitReached: (message: string, nextTakeAt: number | null, now: number) =>
    new GatewayHttpError(429, 'rate_limit_error', BusinessCode.LimitReached, message, {
      next_take_at: nextTakeAt,
      ...(nextTakeAt !== null ? { retry_after_ms: Math.max(0, nextTakeAt - now) } : {}),
    }),
  notAdmitted: (message: string, retryAfterMs: number) =>
    new GatewayHttpError(429, 'rate_limit_error', BusinessCode.NotAdmitted, message, {
      retry_after_ms: Math.max(0, Math.round(retryAfterMs)),
    }),
  /** The account's usage limit is reached upstream: held (3105) until `resetAt` (docs/flows.md#usage-limits). */
  usageLimited: (message: string, resetAt: number, now: number) =>
    new GatewayHttpError(429, 'rate_limit_error', BusinessCode.NotAdmitted, message, {
      retry_after_ms: Math.max(0, resetAt - now),
      limit_reset_at: resetAt,
    }),
  invalidRequest: (message: string) => new GatewayHttpError(400, 'invalid_request_error', GeneralErrorCode.InvalidRequest, message),
  unauthorized: (message: string) => new GatewayHttpError(401, 'authentication_error', GeneralErrorCode.Unauthorized, message),
  notFound: (message: string) => new GatewayHttpError(404, 'not_found_error', GeneralErrorCode.NotFound, message),
  methodNotAllowed: (message: string) => new GatewayHttpError(405, 'invalid_request_error', GeneralErrorCode.MethodNotAllowed, message),
  tooLarge: (message: string) => new GatewayHttpError(413, 'request_too_large', GeneralErrorCode.RequestTooLarge, message),
  requestTimeout: (message: string) => new GatewayHttpError(408, 'invalid_request_error', GeneralErrorCode.RequestTimeout, message),
  upstreamUnavailable: (message: string) => new GatewayHttpError(502, 'api_error', GeneralErrorCode.UpstreamUnavailable, message),
  upstreamNotConfigured: (message: string) => new GatewayHttpError(503, 'api_error', GeneralErrorCode.UpstreamNotConfigured, message),
  shuttingDown: () =>
    new GatewayHttpError(503, 'overloaded_error', GeneralErrorCode.ShuttingDown, 'the gateway is shutting down', { retry_after_ms: 5000 }),
  internal: (message: string) => new GatewayHttpError(500, 'api_error', GeneralErrorCode.Internal, message),
};
