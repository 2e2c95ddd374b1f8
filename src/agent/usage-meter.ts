/**
 * Reads the token usage the model API reports in one answer (docs/flows.md#segments), from a
 * COPY of its bytes as the proxy passes them to the agent: nothing is held back or buffered on
 * the agent's path.
 *  - Streamed answers (text/event-stream) are parsed incrementally with `eventsource-parser`;
 *    only `message_start` (the model and the input side) and `message_delta` (cumulative counts,
 *    output tokens at least) are decoded as JSON, the text deltas are skipped.
 *  - JSON answers are read whole (a copy, up to MAX_JSON_COPY_BYTES) once they ended.
 * Anything unreadable gives no usage rather than an error: accounting never breaks a request.
 */
import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { TokenUsage } from '../core/types';

/** A JSON answer larger than this is not read for usage (Messages answers are far smaller). */
const MAX_JSON_COPY_BYTES = 16 * 1024 * 1024;

export interface AnswerUsage {
  /** The model that answered, as the API names it (null when it did not say). */
  model: string | null;
  usage: TokenUsage;
}

interface ApiUsage {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_read_input_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
}

const FIELDS: readonly [keyof ApiUsage, keyof TokenUsage][] = [
  ['input_tokens', 'inputTokens'],
  ['output_tokens', 'outputTokens'],
  ['cache_read_input_tokens', 'cacheReadTokens'],
  ['cache_creation_input_tokens', 'cacheWriteTokens'],
];

/** The events worth decoding, when a server leaves out the `event:` line. */
const USAGE_EVENT_DATA = /^\s*\{\s*"type"\s*:\s*"(message_start|message_delta)"/;

export abstract class UsageMeter {
  protected model: string | null = null;
  protected readonly counts: Partial<TokenUsage> = {};
  private ended = false;

  /** A meter for an answer of this content type, or null when its usage cannot be read. */
  static forContentType(contentType: string | string[] | undefined): UsageMeter | null {
    const type = (Array.isArray(contentType) ? contentType[0] : contentType)?.toLowerCase() ?? '';
    if (type.includes('text/event-stream')) return new SseUsageMeter();
    if (type.includes('application/json')) return new JsonUsageMeter();
    return null;
  }

  /** The next bytes of the answer, as they went to the agent. */
  abstract feed(chunk: Buffer): void;

  /** The answer ended (or was cut): its usage, or null when it reported none. */
  finish(): AnswerUsage | null {
    if (!this.ended) this.end();
    this.ended = true;
    if (!FIELDS.some(([, key]) => this.counts[key] !== undefined)) return null;
    const usage: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    for (const [, key] of FIELDS) usage[key] = this.counts[key] ?? 0;
    return { model: this.model, usage };
  }

  protected abstract end(): void;

  /** Counts the API reported (later reports replace earlier ones: they are cumulative). */
  protected take(model: unknown, usage: ApiUsage | undefined): void {
    if (typeof model === 'string' && model !== '') this.model = model;
    if (!usage || typeof usage !== 'object') return;
    for (const [field, key] of FIELDS) {
      const value = usage[field];
      if (typeof value === 'number' && Number.isFinite(value) && value >= 0) this.counts[key] = Math.floor(value);
    }
  }
}

/**
 * The stream is given to the parser as latin1, one character per byte: far cheaper than decoding
 * every text delta as UTF-8, and exact for the SSE framing (a UTF-8 multi-byte sequence never
 * contains CR or LF, so lines and events split where they do in the real text). Only the data of
 * the two usage events is decoded as UTF-8 before it is read as JSON.
 */
class SseUsageMeter extends UsageMeter {
  private readonly parser: EventSourceParser = createParser({
    onEvent: (event) => {
      const name = event.event ?? USAGE_EVENT_DATA.exec(event.data)?.[1];
      if (name === 'message_start' || name === 'message_delta') this.read(Buffer.from(event.data, 'latin1').toString('utf8'));
    },
  });

  feed(chunk: Buffer): void {
    this.parser.feed(chunk.toString('latin1'));
  }

  protected end(): void {
    // A last event without its blank line is not dispatched, as an EventSource would not either.
  }

  private read(data: string): void {
    let event: { type?: unknown; message?: { model?: unknown; usage?: ApiUsage }; usage?: ApiUsage };
    try {
      event = JSON.parse(data) as typeof event;
    } catch {
      return;
    }
    if (event.type === 'message_start') this.take(event.message?.model, event.message?.usage);
    else if (event.type === 'message_delta') this.take(undefined, event.usage);
  }
}

class JsonUsageMeter extends UsageMeter {
  private readonly chunks: Buffer[] = [];
  private size = 0;

  feed(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size <= MAX_JSON_COPY_BYTES) this.chunks.push(chunk);
  }

  protected end(): void {
    if (this.size > MAX_JSON_COPY_BYTES || this.chunks.length === 0) return;
    try {
      const message = JSON.parse(Buffer.concat(this.chunks).toString('utf8')) as { model?: unknown; usage?: ApiUsage };
      this.take(message.model, message.usage);
    } catch {
      // not a Messages answer: no usage
    }
    this.chunks.length = 0;
  }
}
