// The routes beside the ticket API: /healthz and /metrics (served on the operations address when
// there is one), and the test hooks (/__test/*, only with --test-hooks).
import type http from 'node:http';
import type { Clock } from '../../core/clock';
import { SERVER_TIME_HEADER, type HealthResponse } from '../../protocol/gateway';
import type { TicketAuthority, TickResult } from '../authority/authority';
import type { GatewayConfig } from '../config/schema';
import type { TicketStore } from '../stores/store';
import { errors } from './errors';
import { readJson } from './http-body';
import type { GatewayMetrics } from './metrics';
import { sendJson } from './responses';

/** The gateway's version: /healthz and --version say it. */
export const GATEWAY_VERSION = '0.1.0';

/** GET /healthz: answers once the store does. */
export async function healthz(res: http.ServerResponse, at: { store: TicketStore; clock: Clock }): Promise<void> {
  await at.store.ping();
  const body: HealthResponse = { status: 'ok', server_time: at.clock.now(), version: GATEWAY_VERSION };
  sendJson(res, 200, body);
}

/** GET /metrics: the counters, and the ticket counts read now. */
export async function metricsText(
  res: http.ServerResponse,
  at: { authority: TicketAuthority; metrics: GatewayMetrics; clock: Clock; longPolls: number },
): Promise<void> {
  const counts = await at.authority.counts();
  const text = at.metrics.render({ ...counts, windowsOpen: at.authority.windows.isOpen(at.clock.now()), longPolls: at.longPolls });
  res.writeHead(200, {
    'content-type': 'text/plain; version=0.0.4',
    'content-length': Buffer.byteLength(text),
    [SERVER_TIME_HEADER]: String(at.clock.now()),
  });
  res.end(text);
}

/** POST /__test/tick (one promote-timer run) and /__test/advance-clock (a ManualClock only). */
export async function testHook(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
  at: { clock: Clock; config: GatewayConfig; tick: () => Promise<TickResult> },
): Promise<void> {
  if (req.method !== 'POST') throw errors.methodNotAllowed('test hooks take POST');
  if (path === '/__test/tick') return sendJson(res, 200, { server_time: at.clock.now(), ...(await at.tick()) });
  if (path === '/__test/advance-clock') {
    const body = (await readJson(req, at.config.maxJsonBodyBytes, at.config.bodyReadTimeoutMs)) as { ms?: unknown };
    const clock = at.clock as Clock & { advance?: (ms: number) => number };
    if (typeof body.ms !== 'number' || !Number.isInteger(body.ms) || body.ms < 0) throw errors.invalidRequest('ms: a non-negative integer');
    if (typeof clock.advance !== 'function') throw errors.invalidRequest('this gateway clock cannot be advanced');
    clock.advance(body.ms);
    return sendJson(res, 200, { server_time: at.clock.now() });
  }
  throw errors.notFound(`no test hook ${path}`);
}
