/**
 * One loopback HTTP listener per window for every segment's ticket proxy. Each segment gets its
 * own random secret path prefix on it (revoked when the segment ends); a request whose first
 * path segment is not a live secret is refused and never forwarded.
 *
 * Why one listener: in a remote window (code-server, Remote SSH) VS Code offers every new
 * listening port of the remote machine for forwarding, with a toast. A listener per segment meant
 * a toast per segment; one listener kept for the window's life means at most one. (VS Code 1.100's
 * stable API has no way to mark a port as "do not auto-forward": `registerPortAttributesProvider`
 * is a proposed API there.)
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Handles one request of a segment: `rest` is the path after the secret, `search` the query. */
export type ProxyRoute = (req: http.IncomingMessage, res: http.ServerResponse, rest: string, search: string) => Promise<void>;

export interface ProxyRouteHandle {
  /** What the agent uses as its base URL: `http://127.0.0.1:<port>/<secret>`. */
  readonly baseUrl: string;
  /** Refuses the secret from now on (the segment ended). */
  revoke(): void;
  /** Resolves once the route is gone: revoked, or the listener closed (its port may then be anyone's). */
  readonly closed: Promise<void>;
}

export class LoopbackProxyServer {
  private server: http.Server | undefined;
  private opening: Promise<void> | undefined;
  private port = 0;
  /** secret -> route, for the live segments only. */
  private readonly routes = new Map<string, ProxyRoute>();
  /** secret -> what tells its holder the route is gone. */
  private readonly ends = new Map<string, () => void>();
  private closed = false;

  /** The port once listening (0 before the first segment). */
  get listeningPort(): number {
    return this.port;
  }

  /** Live secrets (segments whose proxy is open). */
  get routeCount(): number {
    return this.routes.size;
  }

  /** Adds a segment with a fresh secret; the listener starts with the first segment and stays. */
  async register(route: ProxyRoute): Promise<ProxyRouteHandle> {
    if (this.closed) throw new Error('the local proxy server is closed');
    await this.open();
    const secret = crypto.randomBytes(18).toString('base64url');
    this.routes.set(secret, route);
    let end!: () => void;
    const closed = new Promise<void>((resolve) => (end = resolve));
    this.ends.set(secret, end);
    return {
      baseUrl: `http://127.0.0.1:${this.port}/${secret}`,
      revoke: () => {
        this.routes.delete(secret);
        this.ends.delete(secret);
        end();
      },
      closed,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.routes.clear();
    for (const end of this.ends.values()) end();
    this.ends.clear();
    await this.opening?.catch(() => undefined);
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private open(): Promise<void> {
    this.opening ??= this.listen().catch((err: unknown) => {
      this.opening = undefined; // a later segment may try again
      throw err;
    });
    return this.opening;
  }

  private async listen(): Promise<void> {
    const server = http.createServer({ noDelay: true }, (req, res) => {
      this.dispatch(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendError(res, 502, 'api_error', `off-peak proxy: ${(err as Error).message}`);
        else res.destroy();
      });
    });
    // Holds may last many minutes: no server-side request timeout while we hold the agent's request.
    server.requestTimeout = 0;
    server.headersTimeout = 60_000;
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    // Only local agents connect; the listener must not keep a process alive on its own.
    server.unref();
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  private async dispatch(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://proxy.invalid');
    // The first path segment is the secret; the rest is the Anthropic API path.
    const [, given = '', ...restParts] = url.pathname.split('/');
    const route = this.routeFor(given);
    if (!route) {
      req.resume();
      return sendError(res, 404, 'not_found_error', 'not found');
    }
    return route(req, res, restParts.length ? '/' + restParts.join('/') : '', url.search);
  }

  /** Every live secret is compared, each in constant time, so timing tells nothing about any of them. */
  private routeFor(given: string): ProxyRoute | undefined {
    let found: ProxyRoute | undefined;
    for (const [secret, route] of this.routes) if (sameSecret(given, secret)) found = route;
    return found;
  }
}

/** An error in the Anthropic API's shape, which both agents understand. */
export function sendError(
  res: http.ServerResponse,
  status: number,
  type: string,
  message: string,
  extra: Record<string, string> = {},
): void {
  const json = JSON.stringify({ type: 'error', error: { type, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json), ...extra });
  res.end(json);
}

/**
 * Compares a presented secret with ours in constant time (no early exit at the first differing
 * character that a local process could time): equal-length digests through timingSafeEqual.
 */
export function sameSecret(given: string, secret: string): boolean {
  const digest = (text: string) => crypto.createHash('sha256').update(text).digest();
  return crypto.timingSafeEqual(digest(given), digest(secret));
}
