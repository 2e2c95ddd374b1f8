// Forwards one admitted model request (Anthropic Messages or OpenAI Responses) (its body already read) upstream and streams
// the answer back byte for byte (pipe = backpressure). Only allow-listed headers cross, each way
// (header-filter.ts): the client's auth and ticket header never leave the gateway, upstream gets
// the gateway's own key; with passClientCredential (personal mode's login passthrough), a request
// that showed its gateway key in x-offpeak-key goes up with the client's own Authorization /
// x-api-key instead, never stored or logged. A client that hangs up aborts the upstream call.
import http from 'node:http';
import https from 'node:https';
import { SERVER_TIME_HEADER } from '../../protocol/gateway';
import type { Admission } from '../authority/authority';
import { errors } from '../http/errors';
import { headersToUpstream, headersToUser, type ModelApi } from './header-filter';
import type { Logger } from '../http/logger';
import type { GatewayMetrics } from '../http/metrics';

export interface UpstreamTarget {
  url: string;
  apiKey: string | null;
  auth: 'x-api-key' | 'bearer';
  timeoutMs: number;
  /** The client's own credential headers, sent instead of `apiKey` (passClientCredential). */
  clientCredential?: http.OutgoingHttpHeaders;
  /** What fixes an unreachable upstream, said with its address (personal mode: the user's setting). */
  unreachableFix?: string;
}

const keepAliveHttp = new http.Agent({ keepAlive: true, maxSockets: 256 });
const keepAliveHttps = new https.Agent({ keepAlive: true, maxSockets: 256 });

export interface ProxyContext {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  /** Which model API: its headers cross by its own allow-lists (header-filter.ts). */
  api: ModelApi;
  /** Path below the API's base, e.g. `/v1/messages` or `/v1/responses`, with the query string as received. */
  upstreamPathAndQuery: string;
  /** The request body as it goes upstream. */
  body: Buffer;
  admission: Admission;
  upstream: UpstreamTarget;
  serverTime: () => number;
  metrics: GatewayMetrics;
  log: Logger;
  /** Renders a gateway error when nothing has been sent yet. */
  sendError: (error: ReturnType<typeof errors.internal>) => void;
  /** Sees the upstream answer's status and headers first; an error returned is answered instead of it (a usage-limit hold). */
  inspect?: (status: number, headers: http.IncomingHttpHeaders) => ReturnType<typeof errors.internal> | undefined;
  /** Headers of the gateway's own to add to an answer that goes to the user (after `inspect` let it through). */
  annotate?: (status: number, headers: http.IncomingHttpHeaders) => http.OutgoingHttpHeaders | undefined;
}

/** Resolves when the exchange is over (completed, failed or abandoned by the client). */
export function proxyModelRequest(ctx: ProxyContext): Promise<void> {
  const { req, res, admission, upstream, metrics, log } = ctx;
  const base = new URL(upstream.url);
  const target = new URL(base.pathname.replace(/\/$/, '') + ctx.upstreamPathAndQuery, base);
  const headers = headersToUpstream(req.headers, ctx.api);
  headers['content-length'] = ctx.body.length;
  if (upstream.clientCredential) Object.assign(headers, upstream.clientCredential);
  else if (upstream.apiKey) {
    if (upstream.auth === 'bearer') headers.authorization = `Bearer ${upstream.apiKey}`;
    else headers['x-api-key'] = upstream.apiKey;
  }
  const started = performance.now();
  const client = target.protocol === 'https:' ? https : http;

  return new Promise<void>((resolve) => {
    let finished = false;
    let upstreamResponse: http.IncomingMessage | undefined;
    const done = () => {
      if (finished) return;
      finished = true;
      // A shared slot's release is a database write: the exchange is over either way.
      admission
        .release()
        .catch((error: unknown) =>
          log.warn('model slot release failed', { ticket_id: admission.ticket.ticketId, error: (error as Error).message }),
        );
      resolve();
    };

    const upstreamRequest = client.request(target, {
      method: req.method,
      headers,
      agent: target.protocol === 'https:' ? keepAliveHttps : keepAliveHttp,
      timeout: upstream.timeoutMs,
    });

    // The upstream hop must not hold small writes back (Nagle); server sockets already do this.
    upstreamRequest.setNoDelay(true);
    upstreamRequest.on('timeout', () => upstreamRequest.destroy(new Error(`upstream idle for ${upstream.timeoutMs} ms`)));

    upstreamRequest.on('response', (incoming) => {
      upstreamResponse = incoming;
      metrics.upstreamHeaders.observe((performance.now() - started) / 1000);
      const instead = ctx.inspect?.(incoming.statusCode ?? 502, incoming.headers);
      if (instead) {
        incoming.resume();
        ctx.sendError(instead);
        return;
      }
      const outHeaders = { ...headersToUser(incoming.headers, ctx.api), ...ctx.annotate?.(incoming.statusCode ?? 502, incoming.headers) };
      outHeaders[SERVER_TIME_HEADER] = String(ctx.serverTime());
      res.writeHead(incoming.statusCode ?? 502, outHeaders);
      // Send the headers now: an SSE client should see the stream start without waiting for data.
      res.flushHeaders();
      incoming.pipe(res);
      incoming.on('end', () => {
        metrics.upstreamTotal.observe((performance.now() - started) / 1000);
      });
      incoming.on('error', (error) => {
        if (finished) return;
        metrics.count.upstreamErrors.inc();
        log.warn('upstream response broke mid-stream', { ticket_id: admission.ticket.ticketId, error: error.message });
        res.destroy(error);
      });
    });

    upstreamRequest.on('error', (error) => {
      if (finished || res.destroyed) return;
      metrics.count.upstreamErrors.inc();
      log.warn('upstream request failed', { ticket_id: admission.ticket.ticketId, target: target.origin, error: error.message });
      const message = upstream.unreachableFix
        ? `The model API ${target.origin} cannot be reached (${error.message}): ${upstream.unreachableFix}`
        : `model upstream unreachable: ${error.message}`;
      if (!res.headersSent) ctx.sendError(errors.upstreamUnavailable(message));
      else res.destroy(error);
    });

    // The client hung up (or the answer completed): abort whatever is still running upstream.
    res.on('close', () => {
      if (!res.writableFinished) {
        metrics.count.clientAborts.inc();
        log.info('client hung up; aborting the upstream request', { ticket_id: admission.ticket.ticketId });
        upstreamRequest.destroy();
        upstreamResponse?.destroy();
      }
      done();
    });

    upstreamRequest.end(ctx.body);
  });
}

export function closeUpstreamAgents(): void {
  keepAliveHttp.destroy();
  keepAliveHttps.destroy();
}
