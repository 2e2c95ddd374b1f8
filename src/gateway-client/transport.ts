/**
 * One gateway HTTP call: ky with a per-call timeout and no automatic retries (the service owns
 * retry policy), the API key from the caller, the answer read as text, parsed as JSON and
 * validated with the protocol's zod schema. Every failure becomes a GatewayError.
 */
import ky, { TimeoutError } from 'ky';
import type * as z from '../protocol/zod';
import type { Clock } from '../core/clock';
import { socketFetch, type ChannelConnect } from './socket-fetch';
import { GatewayError, kindForBusinessCode, type GatewayEndpoint, type GatewayErrorKind } from './errors';

export type FetchLike = (input: Request | URL | string, init?: RequestInit) => Promise<Response>;

/** Supplies the user's API key at call time (from SecretStorage in the extension); never stored here. */
export type ApiKeyProvider = () => string | undefined | Promise<string | undefined>;

export interface TransportOptions {
  baseUrl: string;
  apiKey: ApiKeyProvider;
  clock: Clock;
  /** Alternative fetch (tests, proxies). Defaults to the global fetch. */
  fetch?: FetchLike;
  /** Reach the gateway over connections from here (personal mode's local authority: proven Unix socket / named pipe). */
  channel?: ChannelConnect;
}

export interface CallSpec<T> {
  endpoint: GatewayEndpoint;
  method: 'GET' | 'POST';
  path: string;
  json?: unknown;
  timeoutMs: number;
  schema: z.ZodMiniType<T>;
  signal?: AbortSignal;
  /**
   * false for a long-poll: the server stamps `server_time` when it answers, which may be many
   * seconds after the request arrived, so the midpoint of send and receive says nothing.
   */
  clockSample?: boolean;
}

/** Longest body excerpt quoted in an error message. */
const EXCERPT = 120;

/**
 * Server clock estimate. Each answer's `server_time` is compared with the midpoint of the
 * local send/receive times; the latest sample wins (clocks may be changed under us). Long-poll
 * answers are not samples (see `CallSpec.clockSample`).
 */
export class ServerClock {
  private skew = 0;
  private sampled = false;

  constructor(private readonly clock: Clock) {}

  /** server time - local time, in ms (0 until the first answer). */
  get skewMs(): number {
    return this.skew;
  }

  get hasSample(): boolean {
    return this.sampled;
  }

  observe(serverTime: unknown, sentAt: number, receivedAt: number): void {
    if (typeof serverTime !== 'number' || !Number.isFinite(serverTime) || serverTime <= 0) return;
    this.skew = Math.round(serverTime - (sentAt + receivedAt) / 2);
    this.sampled = true;
  }

  serverNow(): number {
    return this.clock.now() + this.skew;
  }

  /** Convert a server epoch-ms instant to the local clock. */
  toLocal(serverMs: number): number;
  toLocal(serverMs: number | null | undefined): number | undefined;
  toLocal(serverMs: number | null | undefined): number | undefined {
    return serverMs === null || serverMs === undefined ? undefined : serverMs - this.skew;
  }
}

export class Transport {
  readonly serverClock: ServerClock;
  private readonly base: string;
  private readonly fetch: FetchLike | undefined;

  constructor(private readonly options: TransportOptions) {
    this.serverClock = new ServerClock(options.clock);
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.fetch = options.fetch ?? (options.channel === undefined ? undefined : socketFetch(options.channel));
  }

  async call<T>(spec: CallSpec<T>): Promise<T> {
    const key = (await this.options.apiKey())?.trim();
    if (!key) throw new GatewayError('no_api_key', spec.endpoint, 'set it with "Off-Peak: Set Gateway API Key…"');

    const sentAt = this.options.clock.now();
    let response: Response;
    let text: string;
    try {
      response = await ky(this.base + spec.path, {
        method: spec.method,
        json: spec.json,
        headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
        timeout: spec.timeoutMs,
        retry: 0,
        throwHttpErrors: false,
        signal: spec.signal,
        fetch: this.fetch,
      });
      text = await readWithin(response, spec.timeoutMs, spec.signal);
    } catch (e) {
      throw transportFailure(spec.endpoint, e, spec.signal);
    }
    const receivedAt = this.options.clock.now();

    let body: unknown;
    let parsedJson = true;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsedJson = false;
    }
    if (parsedJson && isRecord(body) && spec.clockSample !== false) this.serverClock.observe(body.server_time, sentAt, receivedAt);

    if (response.status < 200 || response.status >= 300) {
      throw this.httpFailure(spec.endpoint, response, parsedJson ? body : undefined, text);
    }
    if (!parsedJson || body === undefined) {
      throw new GatewayError('bad_response', spec.endpoint, `body is not JSON: ${excerpt(text)}`, { status: response.status });
    }
    const result = spec.schema.safeParse(body);
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'schema mismatch';
      throw new GatewayError('bad_response', spec.endpoint, `unexpected answer shape at ${where}`, {
        status: response.status,
        cause: result.error,
      });
    }
    return result.data;
  }

  private httpFailure(endpoint: GatewayEndpoint, response: Response, body: unknown, text: string): GatewayError {
    const status = response.status;
    const err = isRecord(body) && isRecord(body.error) ? body.error : undefined;
    const code = err && (typeof err.code === 'string' || typeof err.code === 'number') ? String(err.code) : undefined;
    const errorType = err && typeof err.type === 'string' ? err.type.slice(0, 100) : undefined;
    const message = err && typeof err.message === 'string' ? err.message.slice(0, 300) : undefined;
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), this.options.clock.now());
    const rawNextTakeAt = pickNumber(err?.next_take_at) ?? (isRecord(body) ? pickNumber(body.next_take_at) : undefined);
    const nextTakeAt = this.serverClock.toLocal(rawNextTakeAt);

    let kind: GatewayErrorKind;
    // A 5xx is a server failure whatever code it carries; on a 4xx the business code decides,
    // then 401/403 mean the key was refused; any other 4xx is a plain rejection.
    if (status >= 500) kind = 'server_error';
    else kind = kindForBusinessCode(code) ?? (status === 401 || status === 403 ? 'unauthorized' : 'rejected');
    const detail = message ?? (err ? undefined : text === '' ? 'empty body' : `body: ${excerpt(text)}`);
    return new GatewayError(kind, endpoint, detail, { status, code, errorType, nextTakeAt, retryAfterMs });
  }
}

function transportFailure(endpoint: GatewayEndpoint, e: unknown, signal?: AbortSignal): GatewayError {
  if (e instanceof GatewayError) return e;
  if (e instanceof TimeoutError || (e instanceof Error && e.name === 'TimeoutError')) {
    return new GatewayError('timeout', endpoint, undefined, { cause: e });
  }
  if (signal?.aborted) return new GatewayError('aborted', endpoint, undefined, { cause: e });
  const reason = describeNetworkError(e);
  return new GatewayError('network', endpoint, reason, { cause: e, reasonDetail: networkWords(e) });
}

/** A connection error's code in words (the panel shows these; the raw code stays in the log line). */
const NETWORK_WORDS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  ECONNABORTED: 'the connection was aborted',
  EPIPE: 'the connection was closed',
  UND_ERR_SOCKET: 'the connection was closed',
  ETIMEDOUT: 'the connection timed out',
  ENOTFOUND: 'its host name was not found',
  EAI_AGAIN: 'its host name could not be looked up',
  EHOSTUNREACH: 'its host cannot be reached',
  ENETUNREACH: 'the network cannot be reached',
  ENOENT: 'nothing listens at its address',
};

function networkWords(e: unknown): string | undefined {
  const cause = e instanceof Error ? (e as { cause?: unknown }).cause : undefined;
  const code = cause instanceof Error ? (cause as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? NETWORK_WORDS[code] : undefined;
}

function describeNetworkError(e: unknown): string {
  if (!(e instanceof Error)) return String(e).slice(0, EXCERPT);
  const cause = (e as { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' ? `${code} ${cause.message}`.slice(0, 200) : cause.message.slice(0, 200);
  }
  return e.message.slice(0, 200);
}

class BodyTimeoutError extends Error {
  override readonly name = 'TimeoutError';
  constructor() {
    super('timed out reading the answer body');
  }
}

/** Read the body, bounded by the same time limit (ky's timeout covers only the headers). */
async function readWithin(response: Response, timeoutMs: number, signal?: AbortSignal): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void response.body?.cancel().catch(() => {});
      reject(new BodyTimeoutError());
    }, timeoutMs);
    timer.unref?.();
  });
  try {
    signal?.throwIfAborted();
    return await Promise.race([response.text(), limit]);
  } finally {
    clearTimeout(timer);
  }
}

function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

function pickNumber(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT ? `${flat.slice(0, EXCERPT)}…` : flat || '(empty)';
}
