import { createParser } from 'eventsource-parser';
import type { ContentBlock, Message } from './session';

/** Where the Messages API lives and how to authenticate; any Anthropic-compatible endpoint. */
export interface Endpoint {
  baseUrl: string;
  /** Sent as `Authorization: Bearer` (ANTHROPIC_AUTH_TOKEN). */
  authToken?: string;
  /** Sent as `x-api-key` (ANTHROPIC_API_KEY). */
  apiKey?: string;
}

export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export interface MessagesRequest {
  model: string;
  max_tokens: number;
  system: string;
  messages: Message[];
  tools: ToolDefinition[];
  thinking?: { type: 'enabled'; budget_tokens: number };
}

export interface AssistantTurn {
  content: ContentBlock[];
  stopReason: string | null;
}

export interface StreamCallbacks {
  onText?(delta: string): void;
  onThinking?(delta: string): void;
  onRetry?(attempt: number, waitMs: number, reason: string): void;
}

export interface RetryPolicy {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryable: boolean,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }
}

/**
 * Sends one streaming Messages request, retrying transient failures (network, 408/409/429/5xx,
 * overloaded) up to the retry budget and honouring `retry-after` and `x-should-retry`.
 */
export async function createMessage(
  endpoint: Endpoint,
  request: MessagesRequest,
  retry: RetryPolicy,
  callbacks: StreamCallbacks,
  signal: AbortSignal,
): Promise<AssistantTurn> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await streamOnce(endpoint, request, callbacks, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      const apiError = err instanceof ApiError ? err : new ApiError(`network error: ${(err as Error).message}`, null, true);
      if (!apiError.retryable || attempt >= retry.maxRetries) throw apiError;
      const backoff = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** attempt);
      const waitMs = apiError.retryAfterMs ?? backoff;
      callbacks.onRetry?.(attempt + 1, waitMs, apiError.message);
      await sleep(waitMs, signal);
    }
  }
}

async function streamOnce(
  endpoint: Endpoint,
  request: MessagesRequest,
  callbacks: StreamCallbacks,
  signal: AbortSignal,
): Promise<AssistantTurn> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    'anthropic-version': '2023-06-01',
  };
  if (endpoint.authToken) headers.authorization = `Bearer ${endpoint.authToken}`;
  if (endpoint.apiKey) headers['x-api-key'] = endpoint.apiKey;
  const url = endpoint.baseUrl.replace(/\/+$/, '') + '/v1/messages';
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ ...request, stream: true }), signal });
  if (!res.ok) throw await errorFromResponse(res);
  if (!res.body) throw new ApiError('empty response body', res.status, true);
  const contentType = res.headers.get('content-type') ?? '';
  if (!contentType.includes('text/event-stream')) {
    // Some compatible endpoints ignore `stream`; accept a plain JSON message too.
    const json = (await res.json()) as { content?: ContentBlock[]; stop_reason?: string };
    for (const block of json.content ?? []) if (block.type === 'text') callbacks.onText?.(block.text);
    return { content: json.content ?? [], stopReason: json.stop_reason ?? null };
  }
  return readEventStream(res.body, callbacks);
}

async function errorFromResponse(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let detail = text.slice(0, 500);
  try {
    const body = JSON.parse(text) as { error?: { message?: string; type?: string; code?: string } };
    if (body.error) detail = [body.error.type, body.error.code, body.error.message].filter(Boolean).join(': ');
  } catch {
    // not JSON: keep the raw text
  }
  const shouldRetry = res.headers.get('x-should-retry');
  const retryable =
    shouldRetry === 'true' ? true : shouldRetry === 'false' ? false : [408, 409, 429].includes(res.status) || res.status >= 500;
  const retryAfter = Number(res.headers.get('retry-after'));
  const retryAfterMs = Number.isFinite(retryAfter) && retryAfter >= 0 && res.headers.has('retry-after') ? retryAfter * 1000 : null;
  return new ApiError(`API error ${res.status}: ${detail}`, res.status, retryable, retryAfterMs);
}

interface BlockInProgress {
  block: ContentBlock;
  json: string;
}

/** Parses an SSE Messages stream into the assistant's content blocks. */
export async function readEventStream(body: ReadableStream<Uint8Array>, callbacks: StreamCallbacks): Promise<AssistantTurn> {
  const decoder = new TextDecoder();
  const blocks: BlockInProgress[] = [];
  let stopReason: string | null = null;
  let finished = false;

  const handle = (data: string): void => {
    const event = JSON.parse(data) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    switch (event.type) {
      case 'content_block_start': {
        const start = event.content_block as ContentBlock;
        const block: ContentBlock =
          start.type === 'tool_use' ? { type: 'tool_use', id: start.id, name: start.name, input: {} } : { ...start };
        if (block.type === 'text') block.text = block.text ?? '';
        if (block.type === 'thinking') block.thinking = block.thinking ?? '';
        blocks[event.index as number] = { block, json: '' };
        break;
      }
      case 'content_block_delta': {
        const current = blocks[event.index as number];
        if (!current) break;
        const delta = event.delta as { type: string; text?: string; partial_json?: string; thinking?: string; signature?: string };
        if (delta.type === 'text_delta' && current.block.type === 'text') {
          current.block.text += delta.text ?? '';
          callbacks.onText?.(delta.text ?? '');
        } else if (delta.type === 'input_json_delta') {
          current.json += delta.partial_json ?? '';
        } else if (delta.type === 'thinking_delta' && current.block.type === 'thinking') {
          current.block.thinking += delta.thinking ?? '';
          callbacks.onThinking?.(delta.thinking ?? '');
        } else if (delta.type === 'signature_delta' && current.block.type === 'thinking') {
          current.block.signature = (current.block.signature ?? '') + (delta.signature ?? '');
        }
        break;
      }
      case 'content_block_stop': {
        const current = blocks[event.index as number];
        if (current && current.block.type === 'tool_use' && current.json) {
          try {
            current.block.input = JSON.parse(current.json) as Record<string, unknown>;
          } catch {
            throw new ApiError(`model sent malformed tool input: ${current.json.slice(0, 200)}`, null, true);
          }
        }
        break;
      }
      case 'message_delta':
        stopReason = (event.delta?.stop_reason as string | undefined) ?? stopReason;
        break;
      case 'message_stop':
        finished = true;
        break;
      case 'error': {
        const type = String(event.error?.type ?? 'error');
        throw new ApiError(
          `stream error: ${type}: ${event.error?.message ?? ''}`,
          null,
          type === 'overloaded_error' || type === 'api_error',
        );
      }
      default:
        break; // message_start, ping, unknown future events
    }
  };

  // The event-stream format (CR, LF or CRLF line ends, multi-line data) is eventsource-parser's;
  // an error thrown while handling an event is kept and rethrown here, where the caller sees it.
  let failure: { error: unknown } | undefined;
  const parser = createParser({
    onEvent: (message) => {
      if (failure || !message.data) return;
      try {
        handle(message.data);
      } catch (error) {
        failure = { error };
      }
    },
  });
  let endsWithCr = false;
  const feed = (text: string): void => {
    if (!text) return;
    parser.feed(text);
    endsWithCr = text.endsWith('\r');
  };
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    feed(decoder.decode(chunk, { stream: true }));
    if (failure) throw failure.error;
  }
  feed(decoder.decode());
  // The parser holds a last CR back in case a LF follows; at the end of the stream it is a line end.
  if (endsWithCr) parser.feed('\n');
  if (failure) throw failure.error;
  if (!finished) throw new ApiError('stream ended before message_stop', null, true);
  return { content: blocks.filter(Boolean).map((b) => b.block), stopReason };
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
