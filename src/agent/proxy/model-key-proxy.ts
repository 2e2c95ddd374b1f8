/**
 * The model route of an interactive reference-agent session ("Open session",
 * docs/flows.md#open-session): the user's own conversation, not off-peak work, so no ticket and
 * no gateway. It forwards to the user's own model API (`offPeak.personal.baseUrl`) and adds the
 * model API key there, read at each request; the agent has only the route's secret base URL and
 * the dummy token, never the key. Registered on the window's loopback listener like a segment's
 * ticket proxy and revoked when the session's terminal closes.
 */
import http from 'node:http';
import https from 'node:https';
import { sendError, type LoopbackProxyServer, type ProxyRouteHandle } from './loopback-proxy-server';
import { HOP_BY_HOP, responseHeaders } from './ticket-proxy-http';

export interface ModelKeyRouteOptions {
  /** The model API base (https, or http on loopback: checked where the setting is read). */
  baseUrl: string;
  /** The user's model API key, read at each request; undefined: not set (the request is refused). */
  apiKey: () => Promise<string | undefined>;
}

/** What the agent may not choose itself: its credentials are replaced by the key. */
const AGENT_CREDENTIALS = new Set(['authorization', 'x-api-key']);

export async function openModelKeyRoute(listener: LoopbackProxyServer, options: ModelKeyRouteOptions): Promise<ProxyRouteHandle> {
  const base = options.baseUrl.replace(/\/+$/, '');
  return listener.register(async (req, res, rest, search) => {
    const key = (await options.apiKey())?.trim();
    if (!key) {
      req.resume();
      return sendError(res, 401, 'authentication_error', 'no model API key is set: run "Off-Peak: Set Model API Key…"', {
        'x-should-retry': 'false',
      });
    }
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name) && !AGENT_CREDENTIALS.has(name)) headers[name] = value;
    }
    headers['x-api-key'] = key;
    if (req.headers['content-length'] !== undefined) headers['content-length'] = req.headers['content-length'];
    const target = new URL(base + rest + search);
    await new Promise<void>((resolve) => {
      const upstream = (target.protocol === 'https:' ? https : http).request(target, { method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, responseHeaders(answer.headers));
        answer.pipe(res);
        answer.on('end', resolve);
        answer.on('error', () => (res.destroy(), resolve()));
      });
      upstream.on('error', (err) => {
        if (!res.headersSent) sendError(res, 502, 'api_error', `the model API cannot be reached (${err.message})`);
        else res.destroy();
        resolve();
      });
      // The agent hanging up (Ctrl+C) ends the upstream request.
      res.on('close', () => {
        if (!res.writableFinished) upstream.destroy();
        resolve();
      });
      req.pipe(upstream);
    });
  });
}
