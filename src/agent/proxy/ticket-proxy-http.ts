/**
 * The HTTP side of the ticket proxy's forwarding: which headers pass, reading a bounded body, the
 * local refusals that tell the agent not to retry, and streaming an answer to the agent.
 */
import http from 'node:http';
import { TICKET_HEADER } from '../../protocol/gateway';
import { sendError } from './loopback-proxy-server';
import type { UsageMeter } from './usage-meter';

/** Headers not forwarded as they came: the connection-level ones, host and content-length (set anew upstream). */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'content-length',
]);
/** What the agent's request may carry that the proxy replaces (or, with the agent's own login, passes on). */
export const AGENT_CREDENTIALS = new Set(['authorization', 'x-api-key', TICKET_HEADER]);
/** A request body larger than this is refused (413). */
const MAX_REQUEST_BYTES = 64 * 1024 * 1024;

/** An answer's headers as they go to the agent: without the connection-level ones, its length kept. */
export function responseHeaders(headers: http.IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || (HOP_BY_HOP.has(name) && name !== 'content-length')) continue;
    out[name] = value;
  }
  return out;
}

/** The agent must stop, not retry: 400 + `x-should-retry: false` (Claude Code honours it, so does the reference agent). */
export function sendSegmentOver(res: http.ServerResponse, message: string): void {
  sendError(res, 400, 'invalid_request_error', message, { 'x-should-retry': 'false' });
}

/** The gateway's error message (`error.message` of its one error shape), if the body has one. */
export function readErrorMessage(body: Buffer | null): string | null {
  try {
    const message = (JSON.parse(body?.toString('utf8') ?? '') as { error?: { message?: unknown } }).error?.message;
    return typeof message === 'string' && message.trim() ? message.trim() : null;
  } catch {
    return null;
  }
}

/** The outage outlasted its bound, or the model API cannot be used: the agent must stop, the segment fails with `reason`. */
export function sendGatewayLost(res: http.ServerResponse, reason: string): void {
  sendError(res, 502, 'api_error', reason, { 'x-should-retry': 'false' });
}

/** The whole body, or null past `MAX_REQUEST_BYTES`. */
export async function readBody(stream: NodeJS.ReadableStream): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > MAX_REQUEST_BYTES) return null;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Streams an answer to the agent as `pipe` would (backpressure, end), with one `data` listener
 * that also hands each chunk, once written, to the usage meter: a second listener, or a wrapper
 * around the meter, would cost more per chunk than the meter itself (bench/usage-accounting.ts).
 * The agent hanging up aborts the upstream request (`handle`), which ends this.
 */
export function forwardAnswer(answer: http.IncomingMessage, res: http.ServerResponse, meter: UsageMeter | undefined): void {
  answer.on('data', (chunk: Buffer) => {
    if (!res.write(chunk)) answer.pause();
    meter?.feed(chunk);
  });
  res.on('drain', () => answer.resume());
  answer.on('end', () => res.end());
}
