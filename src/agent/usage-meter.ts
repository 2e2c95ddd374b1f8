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

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const EVENT_FIELD = Buffer.from('event:');
const DATA_FIELD = Buffer.from('data:');
const USAGE_NAMES = [Buffer.from('message_start'), Buffer.from('message_delta')] as const;
const NAME_BYTES = USAGE_NAMES[0].length;
/** How a compact data line begins (`{"type":"`); anything else is matched with USAGE_EVENT_DATA. */
const COMPACT_TYPE = Buffer.from('{"type":"');
/** The start of a line that is enough to tell whether it names a usage event. */
const LINE_HEAD_BYTES = 80;
/** A usage event longer than this is not read (the API's are well under 1 KB). */
const MAX_EVENT_BYTES = 256 * 1024;
/** Two line ends in a row: a blank line, the end of an event (CRLF is one line end, so `\r\n` is not one). */
const BLANK_LINES = [Buffer.from('\n\n'), Buffer.from('\r\r'), Buffer.from('\n\r')];
const NOTHING = Buffer.alloc(0);

/**
 * Streamed answers. A 2 MB answer is almost all text deltas, so its bytes are not converted to
 * strings nor parsed: the meter finds the line starts (`Buffer.indexOf` of LF and CR) and looks
 * at each line's first bytes for a line that names a usage event (`event: message_start` or
 * `event: message_delta`, or, for a server that leaves out `event:` lines, a `data:` line whose
 * JSON starts with that `"type"`). Only such an event, from that line to the blank line that
 * ends it, is given to `eventsource-parser`, a freshly reset one each time, which parses it.
 * Across chunk boundaries the meter keeps at most LINE_HEAD_BYTES of an unfinished line while
 * looking, and feeds the parser on while an event it started has not ended (a name, its JSON or
 * the blank line can be split anywhere). Bytes go to the parser as latin1, one character per
 * byte (exact for the framing: a UTF-8 multi-byte sequence never contains CR or LF); only the
 * data of a usage event is decoded as UTF-8 before it is read as JSON.
 */
class SseUsageMeter extends UsageMeter {
  private readonly parser: EventSourceParser = createParser({
    onEvent: (event) => {
      const name = event.event ?? USAGE_EVENT_DATA.exec(event.data)?.[1];
      if (name === 'message_start' || name === 'message_delta') this.read(Buffer.from(event.data, 'latin1').toString('utf8'));
    },
  });
  /** Looking: the start of the line the last chunk ended in (null: too long a line to name an event). */
  private tail: Buffer | null = NOTHING;
  /** Feeding an event to the parser: its bytes so far (-1: looking). */
  private eventBytes = -1;
  private lastByte = -1;
  private firstChunk = true;
  /** Looking inside an event whose `event:` line names another event: its data lines are not read. */
  private otherEvent = false;
  /** The last chunk ended with a CR: a LF first in the next one is the rest of that line end. */
  private endedWithCr = false;
  private readonly ends = new LineEnds();

  feed(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.firstChunk) {
      this.firstChunk = false;
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3); // a UTF-8 BOM
    }
    if (this.eventBytes >= 0) {
      const seam = (this.lastByte === LF && (chunk[0] === LF || chunk[0] === CR)) || (this.lastByte === CR && chunk[0] === CR);
      const end = seam ? 1 : blankLineEnd(chunk, 0);
      if (end < 0) return this.continueEvent(chunk, false);
      this.endEvent(chunk, 0, end);
      return this.look(chunk, end);
    }
    const afterCr = this.endedWithCr;
    this.endedWithCr = false;
    if (this.tail === null) return this.look(chunk, nextLineStart(chunk, 0));
    if (afterCr && chunk[0] === LF) return this.look(chunk, 1);
    // The unfinished line of the last chunk (a few bytes) goes before this one.
    this.look(this.tail.length > 0 ? Buffer.concat([this.tail, chunk]) : chunk, 0);
  }

  protected end(): void {
    // A last event without its blank line is not dispatched, as an EventSource would not either.
  }

  /** Looks at the lines from the line start `from` on (-1: none); an event that a line names is fed to the parser. */
  private look(buf: Buffer, from: number): void {
    const ends = this.ends.reset(buf);
    for (let start = from; start >= 0 && start < buf.length; ) {
      const lineEnd = ends.next(start);
      if (lineEnd < 0 && buf.length - start < LINE_HEAD_BYTES) {
        this.tail = Buffer.from(buf.subarray(start)); // too short yet to tell
        return;
      }
      if (lineEnd === start) this.otherEvent = false; // a blank line: the event ended
      else if (this.otherEvent) {
        // a line of an event named otherwise: not read
      } else if (namesUsageEvent(buf, start, lineEnd < 0 ? buf.length : lineEnd)) {
        const end = blankLineEnd(buf, start);
        if (end < 0) return this.continueEvent(buf.subarray(start), true);
        this.endEvent(buf, start, end);
        start = end;
        continue;
      } else this.otherEvent = startsWith(buf, start, EVENT_FIELD);
      if (lineEnd < 0) break;
      // A CRLF is one line end: the next line starts after its LF.
      start = buf[lineEnd] === CR && buf[lineEnd + 1] === LF ? lineEnd + 2 : lineEnd + 1;
    }
    const last = buf[buf.length - 1];
    this.tail = last === LF || last === CR ? NOTHING : null;
    this.endedWithCr = last === CR;
  }

  /** An event being fed to the parser goes on to the end of `bytes`. */
  private continueEvent(bytes: Buffer, first: boolean): void {
    this.eventBytes = (first ? 0 : this.eventBytes) + bytes.length;
    this.lastByte = bytes[bytes.length - 1];
    if (this.eventBytes > MAX_EVENT_BYTES) {
      this.parser.reset();
      this.eventBytes = -1;
      this.tail = null;
      return;
    }
    this.parser.feed(bytes.toString('latin1'));
  }

  /** The event ends at `end` (just after its blank line): parsed, and the parser reset for the next one. */
  private endEvent(buf: Buffer, start: number, end: number): void {
    this.parser.feed(buf.toString('latin1', start, end));
    // The blank line was found, so a CR at its end ends it (the parser would wait for a LF that may follow).
    this.parser.feed('\n');
    this.parser.reset();
    this.eventBytes = -1;
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

/** The line ends of one buffer at a time, found with one `indexOf` per LF and one per CR (CRs are rare). */
class LineEnds {
  private buf: Buffer = NOTHING;
  private lf = -2;
  private cr = -2;

  /** Looks at `buf` from now on. */
  reset(buf: Buffer): this {
    this.buf = buf;
    this.lf = -2;
    this.cr = -2;
    return this;
  }

  /** The first LF or CR at or after `from`, or -1. */
  next(from: number): number {
    const first = this.buf[from];
    if (first === LF || first === CR) return from;
    if (this.lf !== -1 && this.lf < from) this.lf = this.buf.indexOf(LF, from);
    if (this.cr !== -1 && this.cr < from) this.cr = this.buf.indexOf(CR, from);
    if (this.lf < 0) return this.cr;
    return this.cr < 0 || this.lf < this.cr ? this.lf : this.cr;
  }
}

/** Where the next line starts after `from` (-1: not in this buffer). */
function nextLineStart(buf: Buffer, from: number): number {
  const end = new LineEnds().reset(buf).next(from);
  return end < 0 ? -1 : end + 1;
}

/** Whether the line at `start` (ending at `end`) is `event: message_start|message_delta` or a data line of that type. */
function namesUsageEvent(buf: Buffer, start: number, end: number): boolean {
  if (startsWith(buf, start, EVENT_FIELD)) {
    const value = buf[start + EVENT_FIELD.length] === SPACE ? start + EVENT_FIELD.length + 1 : start + EVENT_FIELD.length;
    return end - value === NAME_BYTES && isUsageName(buf, value);
  }
  if (!startsWith(buf, start, DATA_FIELD)) return false;
  const value = buf[start + DATA_FIELD.length] === SPACE ? start + DATA_FIELD.length + 1 : start + DATA_FIELD.length;
  if (startsWith(buf, value, COMPACT_TYPE)) {
    const at = value + COMPACT_TYPE.length;
    return buf[at + NAME_BYTES] === 0x22 && isUsageName(buf, at);
  }
  return USAGE_EVENT_DATA.test(buf.toString('latin1', value, Math.min(end, start + LINE_HEAD_BYTES)));
}

function isUsageName(buf: Buffer, at: number): boolean {
  return startsWith(buf, at, USAGE_NAMES[0]) || startsWith(buf, at, USAGE_NAMES[1]);
}

function startsWith(buf: Buffer, at: number, prefix: Buffer): boolean {
  if (at + prefix.length > buf.length) return false;
  for (let i = 0; i < prefix.length; i++) if (buf[at + i] !== prefix[i]) return false;
  return true;
}

/** Just after the first blank line at or after `from`, or -1. */
function blankLineEnd(buf: Buffer, from: number): number {
  let first = -1;
  for (const pattern of BLANK_LINES) {
    const at = buf.indexOf(pattern, from);
    if (at >= 0 && (first < 0 || at < first)) first = at;
  }
  return first < 0 ? -1 : first + 2;
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
