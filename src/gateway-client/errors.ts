/**
 * Every way a gateway call can fail, as one typed error. The client never lets a raw fetch,
 * JSON or schema exception escape: callers switch on `kind`.
 */
export type GatewayErrorKind =
  /** The caller has no API key; nothing was sent. */
  | 'no_api_key'
  /** 3101: the user's plan is not eligible for off-peak tasks. */
  | 'not_eligible'
  /** 3102 (or legacy 3001): the ticket is expired, settled, unknown or someone else's. */
  | 'ticket_invalid'
  /** 3103: the user's ticket limit is reached; `nextTakeAt` says when to try again. */
  | 'limit_reached'
  /** 3105: no capacity right now; `retryAfterMs` says when to re-probe. */
  | 'no_capacity'
  /** 401/403: the key was refused. */
  | 'unauthorized'
  /** Any other 4xx: the gateway refused this request as such. */
  | 'rejected'
  /** 5xx. */
  | 'server_error'
  /** The connection failed (refused, reset, DNS, ...). */
  | 'network'
  /** No complete answer within the call's time limit. */
  | 'timeout'
  /** The caller aborted the call (e.g. shutting down). */
  | 'aborted'
  /** The answer was not JSON, or not the shape the protocol promises. */
  | 'bad_response';

export type GatewayEndpoint = 'configs' | 'models' | 'availability' | 'take' | 'status' | 'settle';

export interface GatewayErrorDetails {
  status?: number;
  code?: string;
  errorType?: string;
  /** Local epoch ms (already skew-corrected) at which a new take may succeed (3103). */
  nextTakeAt?: number;
  /** How long to wait before re-probing (3105 / Retry-After). */
  retryAfterMs?: number;
  /** What went wrong in a person's words, when `detail` is technical (a connection error's code). */
  reasonDetail?: string;
  cause?: unknown;
}

const KIND_LABEL: Record<GatewayErrorKind, string> = {
  no_api_key: 'no gateway API key is set',
  not_eligible: 'your plan is not eligible for off-peak tasks (3101)',
  ticket_invalid: 'the ticket is no longer valid (3102)',
  limit_reached: 'the off-peak ticket limit is reached (3103)',
  no_capacity: 'no off-peak capacity right now (3105)',
  unauthorized: 'the gateway refused the API key',
  rejected: 'the gateway rejected the request',
  server_error: 'the gateway had a server error',
  network: 'the gateway could not be reached',
  timeout: 'the gateway did not answer in time',
  aborted: 'the call was aborted',
  bad_response: 'the gateway sent an answer that does not follow the protocol',
};

export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  readonly status?: number;
  readonly code?: string;
  readonly errorType?: string;
  readonly nextTakeAt?: number;
  readonly retryAfterMs?: number;
  /** What failed in a person's words, without the endpoint or a raw error code: for the panel's banners (the message is for logs). */
  readonly reason: string;

  constructor(
    readonly kind: GatewayErrorKind,
    readonly endpoint: GatewayEndpoint,
    detail: string | undefined,
    details: GatewayErrorDetails = {},
  ) {
    const status = details.status !== undefined ? ` (HTTP ${details.status})` : '';
    super(`Gateway ${endpoint}: ${KIND_LABEL[kind]}${status}${detail ? `: ${detail}` : ''}`, { cause: details.cause });
    const said = details.reasonDetail ?? (kind === 'network' ? undefined : detail);
    this.reason = `${KIND_LABEL[kind]}${status}${said ? ` (${said})` : ''}`;
    this.status = details.status;
    this.code = details.code;
    this.errorType = details.errorType;
    this.nextTakeAt = details.nextTakeAt;
    this.retryAfterMs = details.retryAfterMs;
  }

  /** Transient failures worth retrying later with backoff. */
  get retryable(): boolean {
    return (
      this.kind === 'server_error' ||
      this.kind === 'network' ||
      this.kind === 'timeout' ||
      this.kind === 'no_capacity' ||
      this.kind === 'bad_response' ||
      (this.kind === 'rejected' && (this.status === 408 || this.status === 429))
    );
  }
}

export function isGatewayError(e: unknown): e is GatewayError {
  return e instanceof GatewayError;
}

/** Business code -> kind, for 4xx answers carrying the protocol's error shape. */
export function kindForBusinessCode(code: string | undefined): GatewayErrorKind | undefined {
  switch (code) {
    case '3101':
      return 'not_eligible';
    case '3102':
    case '3001': // legacy spelling of "ticket invalid"
      return 'ticket_invalid';
    case '3103':
      return 'limit_reached';
    case '3105':
      return 'no_capacity';
    default:
      return undefined;
  }
}
