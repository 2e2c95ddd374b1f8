/**
 * The local ticket proxy (docs/architecture.md#processes): one per segment, on the window's loopback listener
 * (127.0.0.1, a random port shared by the window's segments) under the segment's own random
 * secret path prefix, revoked when the segment ends. The agent is given `baseUrl` as its Anthropic base URL and a dummy
 * token; the proxy adds the user's gateway key and the segment's ticket header, so the agent
 * never sees either. With the agent's own login (personal mode, docs/architecture.md#personal-mode)
 * there is no dummy token: the agent's Authorization / x-api-key pass on untouched and the key
 * goes in x-offpeak-key.
 *
 * Per-request admission (docs/flows.md#segments):
 *  - 2xx/3xx: streamed straight through; the first admitted model request is reported once
 *    (the ledger's `active_at`; until then the UI says "waiting for admission"). A model answer's
 *    token usage is read from a copy of its bytes as they pass (`UsageMeter`) and reported
 *    (`usage`) when it ends.
 *  - 3105 (not admitted yet / no capacity): HELD here and re-sent after min(Retry-After, 5 min),
 *    60 s when absent, without limit, until admitted or cancelled: Claude Code would otherwise
 *    burn its own retry budget and exit 1.
 *  - 3102 or legacy 3001: the segment is over. Reported as `segment-expired`; the agent gets a
 *    400 with `x-should-retry: false` (now and for every later request) so it stops at once.
 *  - the gateway cannot be reached (refused, reset, no answer): HELD here too and sent again with
 *    backoff until it answers (`gateway-unreachable`, then `gateway-reachable`), up to the bound
 *    of `GatewayOutage`; past it `gateway-outage-exceeded`, and the agent gets a 502 with
 *    `x-should-retry: false` (now and later) so the segment fails saying why.
 *  - the model API cannot be used: no credential or no upstream (`upstream_not_configured`), or
 *    unreachable (`upstream_unavailable`) before any model answer of the segment. Retrying cannot
 *    help (it took an agent minutes to give up, with "server-side, usually temporary"):
 *    `model-api-unusable`, and the agent gets a 502 with `x-should-retry: false` (now and later)
 *    so the segment fails with the gateway's reason, which names the fix.
 *  - anything else (including a plain provider 429 without 3105): passed through unchanged, so
 *    the agent's normal retry budget applies.
 */
import http from 'node:http';
import https from 'node:https';
import { systemClock, type Clock } from '../../core/clock';
import { Emitter, type Event } from '../../core/event';
import {
  BusinessCode,
  GeneralErrorCode,
  LOCAL_KEY_HEADER,
  TICKET_HEADER,
  isTicketInvalidCode,
  readErrorCode,
} from '../../protocol/gateway';
import { readWindowShare, WINDOW_SHARE_HEADER } from '../../protocol/window-share';
import { PERMISSION_RELAY_PATH, PermissionRelayRequestSchema } from '../../protocol/permission-relay';
import { ChannelAgent } from '../../core/channel-agent';
import { GatewayOutage } from './gateway-outage';
import { LoopbackProxyServer, sendError, type ProxyRouteHandle } from './loopback-proxy-server';
import { UsageMeter, type AnswerUsage } from './usage-meter';
import { USAGE_LIMIT_PARK_AFTER_MS, UsageLimitState, usageLimitWait } from './usage-limit-hold';
import { SEGMENT_END_MARK } from '../../core/segment-end';
import type { TicketProxyEvent, TicketProxyOptions, TicketProxyState } from './ticket-proxy-types';
import {
  AGENT_CREDENTIALS,
  forwardAnswer,
  HOP_BY_HOP,
  readBody,
  readErrorMessage,
  responseHeaders,
  sendGatewayLost,
  sendSegmentOver,
} from './ticket-proxy-http';
import { abortableSleep, holdFor, untilOrAborted } from './ticket-proxy-hold';

class Cancelled extends Error {}

export class TicketProxy {
  private route!: ProxyRouteHandle;
  private readonly listener: LoopbackProxyServer;
  private readonly upstream: URL;
  private readonly clock: Clock;
  private readonly holdDefaultMs: number;
  private readonly holdMaxMs: number;
  private readonly cancelController = new AbortController();
  private readonly upstreamAgent: http.Agent;
  // A listener's failure must not break the agent's request.
  private readonly events = new Emitter<TicketProxyEvent>();
  readonly onEvent: Event<TicketProxyEvent> = this.events.event;
  private holds = 0;
  private _firstAdmittedAt: number | null = null;
  private _expired = false;
  private readonly outage: GatewayOutage;
  private readonly usageLimit: UsageLimitState;
  /** Why the segment gave up on an unreachable gateway (then every request is refused locally). */
  private _gatewayLost: string | null = null;
  private _modelApiUnusable: string | null = null;

  private constructor(private readonly options: TicketProxyOptions) {
    this.upstream = new URL(options.upstreamBaseUrl);
    this.listener = options.listener ?? new LoopbackProxyServer();
    this.clock = options.clock ?? systemClock;
    this.holdDefaultMs = options.holdDefaultMs ?? 60_000;
    this.holdMaxMs = options.holdMaxMs ?? 300_000;
    this.outage = new GatewayOutage(this.clock, options, options.ticketDeadline);
    this.usageLimit = new UsageLimitState(options.usageLimitParkMs ?? USAGE_LIMIT_PARK_AFTER_MS);
    const AgentClass = this.upstream.protocol === 'https:' ? https.Agent : http.Agent;
    this.upstreamAgent = options.upstreamChannel
      ? new ChannelAgent(options.upstreamChannel, { keepAlive: true })
      : new AgentClass({ keepAlive: true, noDelay: true } as http.AgentOptions);
    if (options.onEvent) this.onEvent(options.onEvent);
  }

  static async start(options: TicketProxyOptions): Promise<TicketProxy> {
    const proxy = new TicketProxy(options);
    proxy.route = await proxy.listener.register((req, res, rest, search) => proxy.handle(req, res, rest, search));
    return proxy;
  }

  /** What the agent uses as ANTHROPIC_BASE_URL. */
  get baseUrl(): string {
    return this.route.baseUrl;
  }

  get ticketId(): string {
    return this.options.ticketId;
  }

  /** Epoch ms of the first admitted model request of this segment, null while waiting for admission. */
  get firstAdmittedAt(): number | null {
    return this._firstAdmittedAt;
  }

  /** Since when the gateway cannot be reached (requests are held meanwhile), or null. */
  get gatewayUnreachableSince(): number | null {
    return this.outage.unreachableSince;
  }

  /** Set once an outage outlasted its bound or the model API cannot be used: why the segment failed. */
  get failureReason(): string | null {
    return this._gatewayLost ?? this._modelApiUnusable;
  }

  get state(): TicketProxyState {
    if (this.cancelController.signal.aborted) return 'cancelled';
    if (this._expired) return 'expired';
    if (this._gatewayLost !== null) return 'gateway-lost';
    if (this.holds > 0) return 'holding';
    return this._firstAdmittedAt === null ? 'waiting' : 'admitted';
  }

  /** Aborts held and in-flight requests; later requests are refused. */
  cancel(): void {
    this.cancelController.abort(new Cancelled('cancelled'));
  }

  /** Ends the segment's proxy: its secret is refused from now on, in-flight requests are aborted. */
  async close(): Promise<void> {
    this.cancel();
    this.route.revoke();
    if (!this.options.listener) await this.listener.close();
    this.upstreamAgent.destroy();
  }

  private emit(event: TicketProxyEvent): void {
    this.events.fire(event);
  }

  /** One request of this segment (the listener matched its secret): `rest` is the Anthropic API path. */
  private async handle(req: http.IncomingMessage, res: http.ServerResponse, rest: string, search: string): Promise<void> {
    // Claude Code probes `HEAD <base>` (unauthenticated) before anything else: answer locally.
    if (req.method === 'HEAD') {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end();
      return;
    }
    const body = await readBody(req);
    if (body === null) return sendError(res, 413, 'request_too_large', 'request body too large');
    if (rest === PERMISSION_RELAY_PATH) return this.handlePermissionAsk(req, res, body);
    if (this.options.startGate) {
      await untilOrAborted(this.options.startGate, this.cancelController.signal);
      if (res.destroyed) return; // the agent hung up meanwhile
    }
    if (this.cancelController.signal.aborted) return sendSegmentOver(res, 'off-peak task cancelled');
    if (this._expired) return sendSegmentOver(res, `${SEGMENT_END_MARK} (ticket expired, code 3102); the task resumes with a new ticket`);
    if (this._gatewayLost !== null) return sendGatewayLost(res, this._gatewayLost);
    if (this._modelApiUnusable !== null) return sendGatewayLost(res, this._modelApiUnusable);

    const target = new URL(this.upstream.href.replace(/\/+$/, '') + rest + search);
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name) || name === LOCAL_KEY_HEADER) continue;
      if (AGENT_CREDENTIALS.has(name) && !(this.options.passAgentCredential && name !== TICKET_HEADER)) continue;
      headers[name] = value;
    }
    if (this.options.passAgentCredential) headers[LOCAL_KEY_HEADER] = this.options.apiKey;
    else headers.authorization = `Bearer ${this.options.apiKey}`;
    headers[TICKET_HEADER] = this.options.ticketId;
    headers['content-length'] = body.length;
    // Anthropic Messages, or OpenAI Responses (Codex)
    const isModelCall = req.method === 'POST' && /\/v1\/(messages|responses)$/.test(rest);

    // The agent hanging up (it was stopped) ends a hold and the upstream request.
    const clientGone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) clientGone.abort(new Cancelled('client closed'));
    });
    const signal = AbortSignal.any([this.cancelController.signal, clientGone.signal]);

    for (let attempt = 1, unreachable = 0; ; attempt++) {
      let upstreamRes: http.IncomingMessage;
      try {
        upstreamRes = await this.send(target, req.method ?? 'POST', headers, body, signal);
      } catch (err) {
        if (signal.aborted) return void res.destroy();
        // Another held request may have given up meanwhile: this one stops too.
        if (this._gatewayLost !== null) return sendGatewayLost(res, this._gatewayLost);
        const waitMs = this.gatewayUnreachable((err as Error).message, unreachable++);
        if (waitMs === null) return sendGatewayLost(res, this._gatewayLost ?? 'the off-peak gateway cannot be reached');
        if (!(await this.hold(waitMs, signal))) return void res.destroy();
        continue;
      }
      unreachable = 0;
      this.gatewayAnswered();
      const status = upstreamRes.statusCode ?? 502;
      if (status !== 429 && this.usageLimit.lifted()) this.emit({ type: 'usage-limit', at: this.clock.now(), resetAt: null, park: false });
      if (status < 400) {
        if (isModelCall && status < 300 && this._firstAdmittedAt === null) {
          this._firstAdmittedAt = this.clock.now();
          this.emit({ type: 'admitted', at: this._firstAdmittedAt });
        }
        const share = isModelCall && status < 300 ? readWindowShare(upstreamRes.headers[WINDOW_SHARE_HEADER]) : undefined;
        if (share) this.emit({ type: 'window-share', at: this.clock.now(), reading: share });
        res.writeHead(status, responseHeaders(upstreamRes.headers));
        res.flushHeaders();
        upstreamRes.on('error', () => res.destroy());
        const meter = isModelCall && status < 300 && this.options.usageAccounting !== false ? this.usageMeter(upstreamRes) : undefined;
        forwardAnswer(upstreamRes, res, meter);
        return;
      }
      const errorBody = await readBody(upstreamRes);
      const code = readErrorCode(errorBody?.toString('utf8') ?? '') ?? null;
      if (isTicketInvalidCode(code)) {
        this._expired = true;
        this.emit({ type: 'segment-expired', at: this.clock.now(), status, code: code as string });
        return sendSegmentOver(res, `${SEGMENT_END_MARK} (ticket expired, code ${code}); the task resumes with a new ticket`);
      }
      if (code === BusinessCode.NotAdmitted) {
        // The account's usage limit: held until its reset, reported once per reset (docs/flows.md#usage-limits).
        const limit = usageLimitWait(errorBody?.toString('utf8') ?? '', upstreamRes.headers, this.clock.now());
        const report = limit && this.usageLimit.held(limit.resetAt, limit.waitMs);
        if (report) this.emit({ type: 'usage-limit', at: this.clock.now(), ...report });
        const waitMs = limit
          ? Math.min(limit.waitMs, this.holdMaxMs)
          : holdFor(upstreamRes.headers['retry-after'], this.clock.now(), this.holdDefaultMs, this.holdMaxMs);
        this.emit({ type: 'holding', at: this.clock.now(), status, waitMs, attempt, usageLimit: limit !== null });
        if (!(await this.hold(waitMs, signal))) return void res.destroy();
        continue;
      }
      if (
        isModelCall &&
        (code === GeneralErrorCode.UpstreamNotConfigured ||
          (code === GeneralErrorCode.UpstreamUnavailable && this._firstAdmittedAt === null))
      ) {
        this._modelApiUnusable ??= readErrorMessage(errorBody) ?? `the model API cannot be used (${code})`;
        this.emit({ type: 'model-api-unusable', at: this.clock.now(), reason: this._modelApiUnusable });
        return sendGatewayLost(res, this._modelApiUnusable);
      }
      this.emit({ type: 'upstream-error', at: this.clock.now(), status, code });
      const passHeaders = responseHeaders(upstreamRes.headers);
      if (errorBody) passHeaders['content-length'] = String(errorBody.length);
      res.writeHead(status, passHeaders);
      res.end(errorBody ?? undefined);
      return;
    }
  }

  /**
   * The meter that reads the answer's usage from each chunk after it went to the agent
   * (`forwardAnswer`); the usage is reported once the answer ended or was cut. Undefined when
   * it cannot be read.
   */
  private usageMeter(answer: http.IncomingMessage): UsageMeter | undefined {
    const meter = UsageMeter.forContentType(answer.headers['content-type']);
    if (!meter) return undefined;
    let reported = false;
    const report = (): void => {
      if (reported) return;
      reported = true;
      let found: AnswerUsage | null = null;
      try {
        found = meter.finish();
      } catch {
        return; // accounting never breaks the answer
      }
      if (found) this.emit({ type: 'usage', at: this.clock.now(), ...found });
    };
    // After the answer's end went to the agent (`forwardAnswer` ends the response on 'end'), not before.
    const later = (): void => void setImmediate(report);
    answer.once('end', later);
    answer.once('close', later);
    return meter;
  }

  /** Waits `ms` with the agent's request held; false when the agent hung up or the segment was cancelled. */
  private async hold(ms: number, signal: AbortSignal): Promise<boolean> {
    this.holds++;
    try {
      await abortableSleep(ms, signal);
      return true;
    } catch {
      return false;
    } finally {
      this.holds--;
    }
  }

  /** A request could not reach the gateway: how long to hold it before trying again, or null past the bound. */
  private gatewayUnreachable(error: string, attempt: number): number | null {
    const step = this.outage.failed(error, attempt);
    const at = this.clock.now();
    if (step.kind === 'give-up') {
      this._gatewayLost = step.reason;
      this.emit({ type: 'gateway-outage-exceeded', at, since: this.outage.unreachableSince ?? at, reason: step.reason });
      return null;
    }
    if (step.started) this.emit({ type: 'gateway-unreachable', at, since: this.outage.unreachableSince ?? at, error });
    return step.waitMs;
  }

  private gatewayAnswered(): void {
    const since = this.outage.answered();
    if (since !== null) this.emit({ type: 'gateway-reachable', at: this.clock.now(), since });
  }

  /** A permission question from the relay: never forwarded, answered here by the host. */
  private async handlePermissionAsk(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): Promise<void> {
    const handler = this.options.onPermissionAsk;
    if (req.method !== 'POST' || !handler) return sendError(res, 404, 'not_found_error', 'not found');
    let parsed;
    try {
      parsed = PermissionRelayRequestSchema.safeParse(JSON.parse(body.toString('utf8')));
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success) return sendError(res, 400, 'invalid_request_error', 'a permission question needs {tool_name, input}');
    const relayGone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) relayGone.abort();
    });
    const answer = this.cancelController.signal.aborted
      ? { decision: 'deny' as const, message: 'The off-peak task was cancelled.' }
      : await handler(parsed.data, relayGone.signal);
    const json = JSON.stringify(answer);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
    res.end(json);
  }

  private send(
    target: URL,
    method: string,
    headers: http.OutgoingHttpHeaders,
    body: Buffer,
    signal: AbortSignal,
  ): Promise<http.IncomingMessage> {
    return new Promise((resolve, reject) => {
      // Over personal mode's channel the URL names no host to dial: the request carries only its path,
      // as socketFetch's do. A URL with a host would be resolved by the VS Code extension host's
      // patched http (its proxy support puts its own agent in place of ours).
      const request = this.options.upstreamChannel
        ? http.request({ agent: this.upstreamAgent, method, path: target.pathname + target.search, headers, signal }, resolve)
        : (target.protocol === 'https:' ? https : http).request(target, { method, headers, agent: this.upstreamAgent, signal }, resolve);
      request.on('error', reject);
      request.end(body);
    });
  }
}
