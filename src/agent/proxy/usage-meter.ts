/**
 * Reads the token usage the model API reports in one answer (docs/flows.md#segments), from a
 * COPY of its bytes as the proxy passes them to the agent: nothing is held back or buffered on
 * the agent's path.
 *  - Streamed answers (text/event-stream) are parsed incrementally with `eventsource-parser`;
 *    only `message_start` (the model and the input side) and `message_delta` (cumulative counts,
 *    output tokens at least) are decoded as JSON, the text deltas are skipped.
 *  - OpenAI Responses streams (Codex) the same way: `response.created` (the model) from the head,
 *    the `usage` of `response.completed` from the tail (that event repeats the whole output, so
 *    only its last object named `usage` is read; input counts the cached tokens apart, as
 *    Anthropic's does).
 *  - JSON answers are read whole (a copy, up to MAX_JSON_COPY_BYTES) once they ended.
 * Anything unreadable gives no usage rather than an error: accounting never breaks a request.
 */
import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { TokenUsage } from '../../core/types';

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
  /** OpenAI Responses: `input_tokens` includes these cached ones. */
  input_tokens_details?: { cached_tokens?: unknown };
}

const FIELDS: readonly [keyof ApiUsage, keyof TokenUsage][] = [
  ['input_tokens', 'inputTokens'],
  ['output_tokens', 'outputTokens'],
  ['cache_read_input_tokens', 'cacheReadTokens'],
  ['cache_creation_input_tokens', 'cacheWriteTokens'],
];

/** The events worth decoding, when a server leaves out the `event:` line. */
const USAGE_EVENT_DATA = /^\s*\{\s*"type"\s*:\s*"(message_start|message_delta|response\.created|response\.completed)"/;

/** A token count as the API reported it, or undefined when it is not one. */
function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;
}

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

  /**
   * The next bytes of the answer, as they went to the agent. Called for every chunk on the
   * agent's path, so it does as little as it can, and never throws.
   */
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
    const details = usage.input_tokens_details;
    if (details && typeof details === 'object') {
      const cached = count(details.cached_tokens) ?? 0;
      const input = count(usage.input_tokens);
      const output = count(usage.output_tokens);
      if (input === undefined || output === undefined) return;
      Object.assign(this.counts, {
        inputTokens: Math.max(0, input - cached),
        cacheReadTokens: cached,
        outputTokens: output,
        cacheWriteTokens: 0,
      });
      return;
    }
    for (const [field, key] of FIELDS) {
      const value = usage[field];
      if (typeof value === 'number' && Number.isFinite(value) && value >= 0) this.counts[key] = Math.floor(value);
    }
  }
}

const LF = 0x0a;
const CR = 0x0d;
/** The answer's first bytes read for `message_start` (its first event; a usage event is well under 1 KB). */
const HEAD_BYTES = 256 * 1024;
/** The answer's last bytes kept for `message_delta`, which comes last but for `message_stop` and pings (~300 bytes). */
const TAIL_BYTES = 2 * 1024;
/** Chunks kept by reference for the tail: 32 of at least SMALL_CHUNK bytes cover TAIL_BYTES. */
const RING_SLOTS = 32;
/** Chunks smaller than this are copied together into one slot (a slot per byte would not cover the tail). */
const SMALL_CHUNK = TAIL_BYTES / RING_SLOTS;

/**
 * Streamed answers. `message_start` is the first event and `message_delta` (whose counts are
 * cumulative) the last but `message_stop`, so the 2 MB of text deltas between them are neither
 * converted, parsed nor copied: the meter parses the answer's first bytes until `message_start`
 * has been seen (its first chunk, as a rule); of every other chunk it keeps a reference in a
 * ring of RING_SLOTS (a chunk is never changed once sent, and Node's HTTP parser gives each its
 * own buffer), which is all it does per chunk: this runs on the agent's path for each of the
 * thousands of chunks of a long answer. When the answer ends it parses the newest slots that
 * hold TAIL_BYTES, from the first event boundary in them. Both parses use `eventsource-parser`,
 * on the bytes as latin1, one character per byte (exact for the framing: a UTF-8 multi-byte
 * sequence never contains CR or LF); only a usage event's data is decoded as UTF-8 before it is
 * read as JSON.
 */
class SseUsageMeter extends UsageMeter {
  private head: EventSourceParser | null = createParser({ onEvent: (event) => this.onEvent(event.event, event.data, 'head') });
  private headBytes = 0;
  private sawStart = false;
  /** An OpenAI Responses stream (its first event was `response.created`). */
  private responses = false;
  /** Slot `n % RING_SLOTS` takes the next chunk; slots before `from` hold nothing. */
  private readonly ring: (Buffer | undefined)[] = new Array<Buffer | undefined>(RING_SLOTS);
  private n = 0;
  private from = 0;
  /** Small chunks not yet in a slot: `small[0..smallBytes)`. */
  private small: Buffer | null = null;
  private smallBytes = 0;
  /** Bytes of the answer so far (the tail begins inside it when the slots hold fewer). */
  private total = 0;

  feed(chunk: Buffer): void {
    if (this.head !== null) this.feedHead(chunk);
    this.total += chunk.length;
    if (chunk.length < SMALL_CHUNK || chunk.length >= TAIL_BYTES || this.smallBytes !== 0) return this.feedRare(chunk);
    this.ring[this.n++ % RING_SLOTS] = chunk;
  }

  private feedHead(chunk: Buffer): void {
    if (this.headBytes === 0 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3); // a UTF-8 BOM
    try {
      this.head?.feed(chunk.toString('latin1'));
    } catch {
      this.head = null; // a parser that failed reads nothing more; the tail may still have the counts
      return;
    }
    this.headBytes += chunk.length;
    if (this.sawStart || this.headBytes >= HEAD_BYTES) this.head = null;
  }

  /** A small chunk (copied into `small`), a large one (alone covers the tail: the ring is emptied) or one after small ones. */
  private feedRare(chunk: Buffer): void {
    if (chunk.length < SMALL_CHUNK) {
      if (this.smallBytes + chunk.length > TAIL_BYTES) this.flushSmall();
      this.small ??= Buffer.allocUnsafe(TAIL_BYTES);
      this.smallBytes += chunk.copy(this.small, this.smallBytes);
      return;
    }
    this.flushSmall();
    if (chunk.length >= TAIL_BYTES) {
      this.ring.fill(undefined); // what they hold is older than this chunk's last TAIL_BYTES
      this.from = this.n;
    }
    this.ring[this.n++ % RING_SLOTS] = chunk;
  }

  private flushSmall(): void {
    if (this.small === null || this.smallBytes === 0) return;
    this.ring[this.n++ % RING_SLOTS] = this.small.subarray(0, this.smallBytes);
    this.small = null;
    this.smallBytes = 0;
  }

  protected end(): void {
    this.head = null;
    this.flushSmall();
    const kept: Buffer[] = [];
    let bytes = 0;
    for (let i = this.n - 1; i >= Math.max(this.from, this.n - RING_SLOTS) && bytes < TAIL_BYTES; i--) {
      const slot = this.ring[i % RING_SLOTS]!;
      kept.push(slot);
      bytes += slot.length;
    }
    this.ring.fill(undefined);
    let tail = Buffer.concat(kept.reverse());
    if (tail.length > TAIL_BYTES) tail = tail.subarray(tail.length - TAIL_BYTES);
    // Its last event repeats the whole output: only the object named usage near its end is read, wherever the event began.
    if (this.responses) return this.take(undefined, lastUsageObject(tail.toString('latin1')));
    if (tail.length < this.total) {
      // The tail begins somewhere inside the answer: from its first event boundary on.
      const from = afterFirstBlankLine(tail);
      if (from < 0) return;
      tail = tail.subarray(from);
    } else if (tail[0] === 0xef && tail[1] === 0xbb && tail[2] === 0xbf) tail = tail.subarray(3); // a UTF-8 BOM
    // A last event without its blank line is not dispatched, as an EventSource would not either.
    createParser({ onEvent: (event) => this.onEvent(event.event, event.data, 'tail') }).feed(tail.toString('latin1'));
  }

  private onEvent(name: string | undefined, data: string, part: 'head' | 'tail'): void {
    const type = name ?? USAGE_EVENT_DATA.exec(data)?.[1];
    if (type === 'message_start') {
      if (part === 'tail' && this.sawStart) return; // read already, from the head
      this.sawStart = true;
      const event = parseEvent(data);
      this.take(event?.message?.model, event?.message?.usage);
    } else if (type === 'message_delta' && part === 'tail') {
      this.take(undefined, parseEvent(data)?.usage);
    } else if (type === 'response.created' && part === 'head') {
      [this.sawStart, this.responses] = [true, true];
      this.take((parseEvent(data) as { response?: { model?: unknown } } | null)?.response?.model, undefined);
    }
  }
}

/**
 * The last JSON object named `usage` in `text` (latin1: one character per byte), or undefined. In
 * JSON an unescaped `"usage":` is always a key, never text inside a string (whose quotes are escaped).
 */
function lastUsageObject(text: string): ApiUsage | undefined {
  const keys = [...text.matchAll(/"usage"\s*:\s*\{/g)];
  const last = keys.at(-1);
  if (!last) return undefined;
  const start = last.index + last[0].length - 1;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) {
      try {
        return JSON.parse(Buffer.from(text.slice(start, i + 1), 'latin1').toString('utf8')) as ApiUsage;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

function parseEvent(data: string): { message?: { model?: unknown; usage?: ApiUsage }; usage?: ApiUsage } | null {
  try {
    return JSON.parse(Buffer.from(data, 'latin1').toString('utf8')) as {
      message?: { model?: unknown; usage?: ApiUsage };
      usage?: ApiUsage;
    };
  } catch {
    return null;
  }
}

/**
 * Where the first whole event of `bytes` starts (bytes that begin inside the answer): just after
 * a line end that is followed by another line end, i.e. at the second of the two; -1 when none.
 */
function afterFirstBlankLine(bytes: Buffer): number {
  for (let i = 0; i < bytes.length;) {
    const lf = bytes.indexOf(LF, i);
    const cr = bytes.indexOf(CR, i);
    const end = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
    if (end < 0) return -1;
    const next = bytes[end] === CR && bytes[end + 1] === LF ? end + 2 : end + 1; // a CRLF is one line end
    if (bytes[next] === LF || bytes[next] === CR) return next;
    i = next;
  }
  return -1;
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
