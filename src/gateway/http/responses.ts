// How the gateway answers: a JSON body, a refusal with its headers (counted in the metrics; an
// unexpected error is logged and answered as internal), and the route a request counts under.
import type http from 'node:http';
import type { Clock } from '../../core/clock';
import { GatewayPaths, LIMIT_RESET_HEADER, SERVER_TIME_HEADER } from '../../protocol/gateway';
import { errors, GatewayHttpError } from './errors';
import type { Logger } from './logger';
import type { GatewayMetrics } from './metrics';

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}): void {
  sendSerialized(res, status, JSON.stringify(body), headers);
}

export function sendSerialized(res: http.ServerResponse, status: number, json: string, headers: http.OutgoingHttpHeaders = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json), ...headers });
  res.end(json);
}

/** What a refusal needs: the server time it carries, the log of unexpected errors, the error counts. */
export interface ErrorAnswerContext {
  clock: Clock;
  log: Logger;
  metrics: GatewayMetrics;
}

export function sendError(res: http.ServerResponse, error: unknown, at: ErrorAnswerContext): void {
  const gatewayError = error instanceof GatewayHttpError ? error : errors.internal('internal error');
  if (!(error instanceof GatewayHttpError)) at.log.error('unhandled error', { error });
  at.metrics.count.errors.inc({ code: gatewayError.code });
  const headers: http.OutgoingHttpHeaders = { [SERVER_TIME_HEADER]: String(at.clock.now()) };
  if (gatewayError.retryAfterSeconds !== undefined) headers['retry-after'] = String(gatewayError.retryAfterSeconds);
  if (gatewayError.extra.limit_reset_at !== undefined) headers[LIMIT_RESET_HEADER] = String(gatewayError.extra.limit_reset_at);
  // The rest of the body is not read: the connection cannot carry another request.
  if (gatewayError.status === 413 || gatewayError.status === 408) headers.connection = 'close';
  sendJson(res, gatewayError.status, gatewayError.body(at.clock.now()), headers);
}

/** The route label of the request metrics (a few fixed names, never the raw path). */
export function routeLabel(path: string): string {
  if (path.startsWith('/api/anthropic')) return 'anthropic';
  if (path.endsWith('/settle')) return 'settle';
  if (path === GatewayPaths.take) return 'take';
  if (path === GatewayPaths.status) return 'status';
  if (path === GatewayPaths.availability) return 'availability';
  if (path === GatewayPaths.clientConfigs) return 'configs';
  if (path === GatewayPaths.clientModels) return 'models';
  if (path === GatewayPaths.healthz || path === GatewayPaths.metrics) return path.slice(1);
  return 'other';
}
