// The reference Off-Peak Gateway: the HTTP routes of src/protocol/gateway.ts on node:http (the model
// route in model/model-route.ts, /healthz, /metrics and the test hooks in http/ops-routes.ts), its
// addresses (/healthz and /metrics optionally on their own, behind a token), the promote timer and
// graceful shutdown. `startGateway` is what main.ts and the tests use; tests inject a
// ManualClock, set promoteIntervalMs 0 and call `tick()`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { systemClock, type Clock } from '../../core/clock';
import {
  GatewayPaths,
  SERVER_TIME_HEADER,
  SettleRequestSchema,
  StatusRequestSchema,
  TakeRequestSchema,
  type ClientModelsResponse,
} from '../../protocol/gateway';
import { openAccountLimits, type AccountLimits } from '../model/account-limit';
import { GatewayAuth } from './auth';
import { TicketAuthority, type TickResult } from '../authority/authority';
import { authorityPolicy, windowsFromConfig } from '../authority/authority-policy';
import { parseListenAddress, resolveGatewayConfig } from '../config/resolve';
import type { GatewayConfig } from '../config/schema';
import { ConnectionGuard } from './connection-guard';
import { errors } from './errors';
import { PayloadError, readJson, schemaError } from './http-body';
import { createLogger, type Logger } from './logger';
import { answerStatus, LongPollRegistry } from './long-polls';
import { GatewayMetrics } from './metrics';
import { serveModelRequest, type ModelRouteContext } from '../model/model-route';
import { ServedModels } from '../model/served-models';
import { healthz, metricsText, testHook } from './ops-routes';
import { routeLabel, sendError, sendJson } from './responses';
import { openTicketStore } from '../stores/open-store';
import type { TicketStore } from '../stores/store';

export interface StartGatewayOptions {
  /** Settings over the defaults (validated by resolveGatewayConfig). */
  config?: Partial<GatewayConfig>;
  clock?: Clock;
  /** Use this store instead of the one the config names. */
  store?: TicketStore;
  log?: Logger;
  /** The upstream key, read at each model request instead of `upstreamApiKey` (personal mode: SecretStorage). */
  upstreamApiKey?: () => Promise<string | undefined>;
  /** The OpenAI upstream key, read at each Responses request when the config has none (personal mode: SecretStorage). */
  openaiUpstreamApiKey?: () => Promise<string | undefined>;
  /**
   * Listen on this Unix domain socket path or Windows named pipe instead of `host:port` (personal
   * mode: a channel only this user can open, docs/architecture.md#personal-mode).
   */
  listenPath?: string;
  /**
   * Each new connection of the API address goes through this first; only those it admits reach
   * the HTTP server, its connection cap and the per-address guard (personal mode: the proof of
   * personal/channel-proof.ts, so another local user's opens cannot use them up).
   */
  connectionGate?: (socket: Socket, admit: (socket: Socket) => void) => void;
}

/** Which address a request came in on: the API, or the separate operations address (--ops-listen). */
type Surface = 'api' | 'ops';

export class GatewayServer {
  readonly authority: TicketAuthority;
  readonly metrics = new GatewayMetrics();
  readonly config: GatewayConfig;
  private readonly server: http.Server;
  /** /metrics and /healthz alone, when --ops-listen is set. */
  private readonly opsServer: http.Server | undefined;
  private readonly auth: GatewayAuth;
  private readonly debugLogging: boolean;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly store: TicketStore;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private closing: Promise<void> | undefined;
  private readonly longPolls: LongPollRegistry;
  private readonly sockets = new Set<Socket>();
  private readonly guard: ConnectionGuard;
  private inFlightRequests = 0;
  private listenedPort = 0;
  private upstreamUrl: string | null;
  /** The account's usage-limit hold, with `accountLimits` (docs/flows.md#usage-limits). */
  readonly limits: AccountLimits | undefined;
  private readonly upstreamKey: () => Promise<string | null>;
  private readonly servedModels: ServedModels;
  /** What the model route reads from this server. */
  private readonly modelRoute: ModelRouteContext;

  private constructor(options: StartGatewayOptions, config: GatewayConfig, store: TicketStore) {
    this.config = config;
    this.clock = options.clock ?? systemClock;
    this.log = options.log ?? createLogger(this.config.logLevel);
    this.debugLogging = this.config.logLevel === 'debug';
    this.store = store;
    const c = this.config;
    this.guard = new ConnectionGuard(c.maxUnauthenticatedPerAddress);
    this.auth = new GatewayAuth(c, (socket) => this.guard.authenticated(socket));
    this.authority = new TicketAuthority(this.store, this.clock, windowsFromConfig(c), authorityPolicy(c), this.metrics);
    // A hold that starts or grows changes what every queued ticket's status says: their long-polls answer.
    this.limits = openAccountLimits(c, store, this.log, () => this.longPolls.notify({ ticketIds: [], queueMoved: true, unknown: false }));
    this.authority.promotionGate = this.limits;
    this.longPolls = new LongPollRegistry(c.maxLongPollsPerUser, this.metrics.count.longPollRechecks);
    this.authority.onChange((change) => this.longPolls.notify(change));
    this.upstreamUrl = c.upstreamUrl;
    const readKey = options.upstreamApiKey;
    this.upstreamKey = readKey ? async () => (await readKey()) ?? null : () => Promise.resolve(c.upstreamApiKey);
    this.servedModels = new ServedModels({
      allowList: c.models,
      upstreamUrl: () => this.upstreamUrl,
      apiKey: this.upstreamKey,
      auth: c.upstreamAuth,
      clock: this.clock,
      log: this.log,
    });
    this.modelRoute = {
      config: c,
      auth: this.auth,
      clock: this.clock,
      authority: this.authority,
      limits: this.limits,
      upstreamUrl: () => this.upstreamUrl,
      upstreamKey: this.upstreamKey,
      openaiUpstreamUrl: () => c.openaiUpstreamUrl,
      openaiUpstreamKey: async () => c.openaiUpstreamApiKey ?? (await options.openaiUpstreamApiKey?.()) ?? null,
      metrics: this.metrics,
      log: this.log,
      sendError: (res, error) => this.sendError(res, error),
    };
    this.server = this.createHttpServer('api', options.connectionGate);
    this.opsServer = c.opsListen === null ? undefined : this.createHttpServer('ops');
  }

  private createHttpServer(surface: Surface, gate?: StartGatewayOptions['connectionGate']): http.Server {
    const headersTimeout = this.config.headersTimeoutMs;
    const server = http.createServer(
      {
        keepAliveTimeout: 5000,
        // A socket that never finishes its headers is closed (408), checked a few times per timeout.
        headersTimeout,
        requestTimeout: Math.max(300_000, headersTimeout),
        connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(headersTimeout / 4))),
      },
      (req, res) => this.handle(req, res, surface),
    );
    server.on('connection', (socket: Socket) => {
      // With a gate, the cap counts admitted connections only (node's own count has every open).
      if (gate && this.sockets.size >= this.config.maxConnections) return void socket.destroy();
      // One address cannot hold the cap with connections that never show a key.
      if (!this.guard.admit(socket)) return;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    if (gate) {
      // node's HTTP handling of a connection and the listener above run once the gate admits it.
      const handlers = server.listeners('connection') as ((socket: Socket) => void)[];
      server.removeAllListeners('connection');
      server.on('connection', (socket: Socket) => gate(socket, (admitted) => handlers.forEach((handle) => handle.call(server, admitted))));
    } else {
      // Connections beyond the cap are closed by node before any request is read.
      server.maxConnections = this.config.maxConnections;
    }
    server.on('clientError', (_error, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
      else socket.destroy();
    });
    return server;
  }

  /** Creates, listens, and starts the promote timer. */
  static async start(options: StartGatewayOptions = {}): Promise<GatewayServer> {
    const config = resolveGatewayConfig(options.config ?? {});
    const gateway = new GatewayServer(options, config, options.store ?? (await openTicketStore(config)));
    const listen = (server: http.Server, port: number, host: string) =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        const done = () => {
          server.off('error', reject);
          resolve();
        };
        if (server === gateway.server && options.listenPath !== undefined) server.listen(options.listenPath, done);
        else server.listen(port, host, done);
      });
    try {
      await listen(gateway.server, gateway.config.port, gateway.config.host);
      if (gateway.opsServer && gateway.config.opsListen !== null) {
        const ops = parseListenAddress(gateway.config.opsListen);
        await listen(gateway.opsServer, ops.port, ops.host);
      }
    } catch (error) {
      gateway.server.close();
      gateway.authority.stop();
      await gateway.store.close();
      throw error;
    }
    gateway.listenedPort = options.listenPath === undefined ? (gateway.server.address() as AddressInfo).port : 0;
    if (gateway.config.promoteIntervalMs > 0) {
      gateway.timer = setInterval(() => void gateway.runTimerTick(), gateway.config.promoteIntervalMs);
    }
    gateway.log.info('gateway listening', {
      url: gateway.url,
      ops: gateway.opsUrl,
      store: options.store ? 'injected' : gateway.config.store,
      windows: gateway.authority.windows.describe(),
      upstream: gateway.upstreamUrl,
    });
    return gateway;
  }

  get port(): number {
    const address = this.server.address();
    if (address && typeof address === 'object') this.listenedPort = address.port;
    return this.listenedPort;
  }

  /** e.g. `http://127.0.0.1:8787` */
  get url(): string {
    return urlOf(this.config.host, this.port);
  }

  /** Where /metrics and /healthz are served when they have their own address; else null. */
  get opsUrl(): string | null {
    const address = this.opsServer?.address() as AddressInfo | null | undefined;
    return address && this.config.opsListen !== null ? urlOf(parseListenAddress(this.config.opsListen).host, address.port) : null;
  }

  /** The model upstream (set late by main.ts when it starts the demo model). */
  setUpstreamUrl(url: string | null): void {
    this.upstreamUrl = url;
  }

  /** One promote-timer run, on demand (tests). */
  tick(): Promise<TickResult> {
    return this.authority.tick();
  }

  private async runTimerTick(): Promise<void> {
    // A slow store must not stack ticks up: skip a period while the last one still runs.
    if (this.ticking) return;
    this.ticking = true;
    try {
      const result = await this.authority.tick();
      if (result.promoted.length > 0 || result.expired.length > 0 || result.pruned > 0) {
        this.log.info('promote tick', { promoted: result.promoted.length, expired: result.expired.length, pruned: result.pruned });
      }
    } catch (error) {
      this.log.error('promote tick failed', { error });
    } finally {
      this.ticking = false;
    }
  }

  private sendError(res: http.ServerResponse, error: unknown): void {
    sendError(res, error, { clock: this.clock, log: this.log, metrics: this.metrics });
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, surface: Surface): void {
    this.inFlightRequests += 1;
    const started = performance.now();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    res.on('close', () => {
      this.inFlightRequests -= 1;
      this.metrics.countRequest(routeLabel(path), res.statusCode);
      if (this.debugLogging)
        this.log.debug('request', { method: req.method, path, status: res.statusCode, ms: Math.round(performance.now() - started) });
    });
    this.route(req, res, path, q < 0 ? '' : url.slice(q), surface).catch((error: unknown) => {
      if (error instanceof PayloadError) {
        res.destroy();
        return;
      }
      this.sendError(res, error);
    });
  }

  private async route(req: http.IncomingMessage, res: http.ServerResponse, path: string, search: string, surface: Surface): Promise<void> {
    const method = req.method ?? 'GET';
    if (this.closing && path !== GatewayPaths.healthz) {
      res.setHeader('connection', 'close');
      throw errors.shuttingDown();
    }
    const expect = (allowed: string) => {
      if (method !== allowed) throw errors.methodNotAllowed(`${method} ${path}: use ${allowed}`);
    };
    const opsRoute = path === GatewayPaths.healthz || path === GatewayPaths.metrics;
    // With an operations address, each address serves only its own routes.
    if (this.opsServer && opsRoute !== (surface === 'ops')) throw errors.notFound(`no route ${method} ${path} on this address`);
    if (opsRoute) {
      expect('GET');
      this.auth.checkOpsToken(req);
      return path === GatewayPaths.healthz
        ? healthz(res, { store: this.store, clock: this.clock })
        : metricsText(res, { authority: this.authority, metrics: this.metrics, clock: this.clock, longPolls: this.longPolls.size });
    }
    const bodyTimeoutMs = this.config.bodyReadTimeoutMs;

    if (path === GatewayPaths.status) {
      expect('POST');
      const user = this.auth.user(req);
      const parsed = StatusRequestSchema.safeParse(await readJson(req, this.config.maxJsonBodyBytes, bodyTimeoutMs));
      if (!parsed.success) throw schemaError(parsed.error.issues);
      // A repeated id is answered (and watched) once.
      const at = {
        authority: this.authority,
        longPolls: this.longPolls,
        overCap: this.metrics.count.longPollsOverCap,
        maxWaitMs: this.config.statusMaxWaitMs,
        closing: this.closing !== undefined,
      };
      return answerStatus(at, res, {
        user,
        ids: [...new Set(parsed.data.ticket_ids)],
        waitMs: parsed.data.wait_ms ?? 0,
        knownStates: parsed.data.known_states,
      });
    }
    if (path === GatewayPaths.take) {
      expect('POST');
      const user = this.auth.user(req);
      const parsed = TakeRequestSchema.safeParse(await readJson(req, this.config.maxJsonBodyBytes, bodyTimeoutMs));
      if (!parsed.success) throw schemaError(parsed.error.issues);
      return sendJson(res, 200, await this.authority.take(user, parsed.data.task_id));
    }
    const settle = /^\/api\/v1\/off-peak\/ticket\/([^/]+)\/settle$/.exec(path);
    if (settle) {
      expect('POST');
      const user = this.auth.user(req);
      const parsed = SettleRequestSchema.safeParse(await readJson(req, this.config.maxJsonBodyBytes, bodyTimeoutMs));
      if (!parsed.success) throw schemaError(parsed.error.issues);
      let ticketId: string;
      try {
        ticketId = decodeURIComponent(settle[1]);
      } catch {
        throw errors.invalidRequest('malformed ticket id in the path');
      }
      return sendJson(res, 200, await this.authority.settle(user, ticketId, parsed.data.reason));
    }
    if (path === GatewayPaths.availability) {
      expect('GET');
      return sendJson(res, 200, await this.authority.availability(this.auth.user(req)));
    }
    if (path === GatewayPaths.clientConfigs) {
      expect('GET');
      return sendJson(res, 200, this.authority.configs(this.auth.user(req)));
    }
    if (path === GatewayPaths.clientModels) {
      expect('GET');
      this.auth.user(req);
      const body: ClientModelsResponse = { server_time: this.clock.now(), models: await this.servedModels.list() };
      // Personal mode (the user's own model key): a refused key is the user's to fix; a team gateway's key is not.
      const refused = this.config.passClientCredential ? this.servedModels.refusedStatus : undefined;
      if (refused !== undefined) body.upstream_refused = refused;
      return sendJson(res, 200, body);
    }
    if (path === GatewayPaths.anthropicBase || path === `${GatewayPaths.anthropicBase}/`) {
      // Claude Code probes its base URL with HEAD (no auth) before the first model call.
      if (method !== 'HEAD' && method !== 'GET') throw errors.methodNotAllowed(`${method} ${path}: use HEAD`);
      res.writeHead(200, { [SERVER_TIME_HEADER]: String(this.clock.now()), 'content-length': 0 });
      res.end();
      return;
    }
    if (path === GatewayPaths.anthropicMessages || path === `${GatewayPaths.anthropicMessages}/count_tokens`) {
      expect('POST');
      return serveModelRequest(this.modelRoute, req, res, path.slice(GatewayPaths.anthropicBase.length) + search);
    }
    if (path === GatewayPaths.openaiResponses) {
      expect('POST');
      return serveModelRequest(this.modelRoute, req, res, path.slice(GatewayPaths.openaiBase.length) + search, 'openai');
    }
    if (this.config.testHooks && path.startsWith('/__test/'))
      return testHook(req, res, path, { clock: this.clock, config: this.config, tick: () => this.tick() });
    throw errors.notFound(`no route ${method} ${path}`);
  }

  /** Status long-polls waiting for a change right now. */
  get pendingLongPolls(): number {
    return this.longPolls.size;
  }

  /** Client connections open now (both addresses). */
  get openConnections(): number {
    return this.sockets.size;
  }

  /** Requests being answered right now (long-polls and model streams included). */
  get activeRequests(): number {
    return this.inFlightRequests;
  }

  /**
   * Graceful shutdown: stop accepting, stop the timer, answer long-polls now, let in-flight
   * requests finish for up to `graceMs`, then cut what is left and close the store.
   */
  close(graceMs = this.config.shutdownGraceMs): Promise<void> {
    if (this.closing) return this.closing;
    this.closing = (async () => {
      this.log.info('gateway shutting down', { in_flight: this.inFlightRequests });
      if (this.timer) clearInterval(this.timer);
      const closed = Promise.all(
        [this.server, this.opsServer].map(
          (server) => new Promise<void>((resolve) => (server?.listening ? server.close(() => resolve()) : resolve())),
        ),
      );
      this.longPolls.finishAll();
      const deadline = Date.now() + graceMs;
      const closeIdle = () => {
        this.server.closeIdleConnections();
        this.opsServer?.closeIdleConnections();
      };
      while (this.inFlightRequests > 0 && Date.now() < deadline) {
        closeIdle();
        await new Promise((r) => setTimeout(r, 20));
      }
      closeIdle();
      if (this.inFlightRequests > 0)
        this.log.warn('shutdown grace over; closing remaining connections', { in_flight: this.inFlightRequests });
      for (const socket of this.sockets) socket.destroy();
      await closed;
      this.authority.stop();
      await this.store.close();
      this.log.info('gateway stopped');
    })();
    return this.closing;
  }
}

function urlOf(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

export function startGateway(options: StartGatewayOptions = {}): Promise<GatewayServer> {
  return GatewayServer.start(options);
}
