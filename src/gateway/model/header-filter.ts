// Which headers cross the model proxy, each way, for each model API it forwards (Anthropic
// Messages; OpenAI Responses, which Codex speaks). An allow-list, so nothing new leaks by default:
// upstream sees what the Messages API needs (the API version and betas, content negotiation, the
// client's request id, the SDK's x-stainless-* description of itself), never a user's cookies,
// forwarding headers, anything a Connection header names, or any other anthropic-* header (those
// choose an organization, a workspace or a key on the gateway's account); users see the answer's content headers, its request id and when to retry, never
// upstream cookies, the organization behind the gateway's key or that key's remaining budget.
import type http from 'node:http';
import { LOCAL_KEY_HEADER } from '../../protocol/gateway';

/** The model APIs the gateway forwards: Anthropic Messages (`/api/anthropic`) and OpenAI Responses (`/api/openai`). */
export type ModelApi = 'anthropic' | 'openai';

const TO_UPSTREAM = new Set([
  'accept',
  'accept-encoding',
  'content-type',
  'user-agent',
  'x-client-request-id',
  'x-claude-code-session-id',
  'anthropic-version',
  'anthropic-beta',
  'anthropic-dangerous-direct-browser-access',
]);
const TO_UPSTREAM_PREFIXES = ['x-stainless-'];

/**
 * OpenAI Responses as Codex sends it: its conversation and thread (`session-id`, `thread-id`, the
 * turn's `x-codex-*` metadata) and who it is (`originator`), never `openai-organization` or
 * `openai-project` (they choose an organization or a project on the gateway's account).
 */
const TO_UPSTREAM_OPENAI = new Set([
  'accept',
  'accept-encoding',
  'content-type',
  'user-agent',
  'x-client-request-id',
  'session-id',
  'thread-id',
  'originator',
  'openai-beta',
]);
const TO_UPSTREAM_OPENAI_PREFIXES = ['x-codex-', 'x-stainless-'];

const TO_USER = new Set([
  'content-type',
  'content-encoding',
  'content-length',
  'cache-control',
  'request-id',
  'x-request-id',
  'retry-after',
  'x-should-retry',
]);
/** When a rate limit lifts is worth showing; the limit and what is left describe the shared key. */
const RATE_LIMIT_RESET = /^anthropic-ratelimit-[a-z0-9-]+-reset$/;
/** Response headers carrying the account behind the gateway's key. */
const ACCOUNT = /^anthropic-organization/;
/** OpenAI's and Codex's resets; never what is used or remaining (`x-ratelimit-remaining-*`, `x-codex-*-used-percent`) nor `openai-organization`. */
const OPENAI_RESET = /^(x-ratelimit-reset-(requests|tokens)|x-codex-(primary|secondary)-reset-(after-seconds|at))$/;

/** Header names a Connection header lists: hop-by-hop by declaration, never forwarded. */
function connectionNamed(headers: http.IncomingHttpHeaders): Set<string> {
  const value = headers.connection;
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  return new Set(
    text
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
}

function filter(headers: http.IncomingHttpHeaders, allowed: (name: string) => boolean): http.OutgoingHttpHeaders {
  const named = connectionNamed(headers);
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !named.has(name) && allowed(name)) out[name] = value;
  }
  return out;
}

/** The client's headers that may go upstream (auth and ticket are never among them). */
export function headersToUpstream(headers: http.IncomingHttpHeaders, api: ModelApi = 'anthropic'): http.OutgoingHttpHeaders {
  const [names, prefixes] = api === 'openai' ? [TO_UPSTREAM_OPENAI, TO_UPSTREAM_OPENAI_PREFIXES] : [TO_UPSTREAM, TO_UPSTREAM_PREFIXES];
  return filter(headers, (name) => names.has(name) || prefixes.some((prefix) => name.startsWith(prefix)));
}

/** The upstream answer's headers that may go back to the user. */
export function headersToUser(headers: http.IncomingHttpHeaders, api: ModelApi = 'anthropic'): http.OutgoingHttpHeaders {
  if (api === 'openai') return filter(headers, (name) => TO_USER.has(name) || OPENAI_RESET.test(name));
  return filter(headers, (name) => TO_USER.has(name) || (RATE_LIMIT_RESET.test(name) && !ACCOUNT.test(name)));
}

/**
 * The client's own model credential (passClientCredential): only on a request that showed its
 * gateway key in x-offpeak-key, so Authorization / x-api-key are the agent's, never the gateway key.
 */
export function clientCredentialOf(req: http.IncomingMessage, api: ModelApi = 'anthropic'): http.OutgoingHttpHeaders | undefined {
  if (typeof req.headers[LOCAL_KEY_HEADER] !== 'string') return undefined;
  const out: http.OutgoingHttpHeaders = {};
  if (typeof req.headers.authorization === 'string') out.authorization = req.headers.authorization;
  if (api === 'anthropic' && typeof req.headers['x-api-key'] === 'string') out['x-api-key'] = req.headers['x-api-key'];
  if (Object.keys(out).length === 0) return undefined;
  // A ChatGPT login names its account beside the token: part of the same credential, only with it.
  if (api === 'openai' && typeof req.headers['chatgpt-account-id'] === 'string')
    out['chatgpt-account-id'] = req.headers['chatgpt-account-id'];
  return out;
}
