/**
 * Runs ONE segment of a task (docs/flows.md#segments): starts the local ticket proxy, spawns the
 * agent in the task's workspace (segment-launch.ts), streams its output to a per-segment log file
 * and to any attached terminal view, relays its questions (segment-questions.ts), stops it
 * (segment-stop.ts) and maps how it ended to a segment outcome (segment-outcome.ts). It knows
 * nothing about the store: the task runtime applies outcomes.
 */
import type { ChannelConnect } from '../../core/channel-agent';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../../core/clock';
import { systemProcessHost, type ProcessHost } from '../../core/process-control';
import { TerminalLines } from '../../core/untrusted-text';
import { ensurePrivateDir } from '../../files/private-files';
import type { LoopbackProxyServer } from '../proxy/loopback-proxy-server';
import { TicketProxy } from '../proxy/ticket-proxy';
import type { TicketProxyEvent, TicketProxyTimings } from '../proxy/ticket-proxy-types';
import { usageLimitTerminalText } from '../proxy/usage-limit-hold';
import { ENDED_ANSWER } from '../questions/relay-ask-text';
import type { PermissionRelayAnswer, PermissionRelayRequest } from '../../protocol/permission-relay';
import type { AgentAdapter, AgentLaunch, AgentOutputReader, SegmentSpec } from './agent-adapter';
import { spawnAgent } from './segment-launch';
import { segmentOutcome, type SegmentOutcome, type StopReason, type TerminalView } from './segment-outcome';
import { writeSegmentPidRecord } from './segment-processes';
import { SegmentQuestions, type SegmentAsks } from './segment-questions';
import { AgentStop, type StopTimings } from './segment-stop';

/** How the segment's proxy reaches the gateway. */
export interface SegmentGateway {
  /** The gateway's Anthropic base (`<gateway>/api/anthropic`). */
  anthropicBaseUrl: string;
  /** The gateway's OpenAI base (`<gateway>/api/openai`), for an agent that speaks the Responses API (Codex). */
  openaiBaseUrl?: string;
  /** The gateway is reached over connections from here (personal mode: the local authority's proven channel). */
  channel?: ChannelConnect;
  /** The user's gateway key. */
  apiKey: string;
  /** The agent's own credential passes through (the key goes in x-offpeak-key). */
  ownLogin?: boolean;
}

export interface SegmentRunOptions {
  adapter: AgentAdapter;
  spec: Omit<SegmentSpec, 'proxyBaseUrl' | 'segmentDir'>;
  gateway: SegmentGateway;
  ticketId: string;
  /** Per-segment directory: log file, prompt file, pid file. */
  segmentDir: string;
  clock?: Clock;
  proxyTimings?: TicketProxyTimings;
  /** When the ticket's time runs out (from the ledger), or null: a gateway outage is not waited for past it. */
  ticketDeadline?: () => number | null;
  stopTimings?: Partial<StopTimings>;
  /** How the agent's tree is started and stopped (injectable platform). */
  processes?: ProcessHost;
  onProxyEvent?: (event: TicketProxyEvent) => void;
  /** Where the agent's permission questions go (the runtime's ask broker, bound to this task). */
  asks?: SegmentAsks;
  /** The window's one loopback listener the segment's proxy registers on (else the proxy opens its own). */
  proxyListener?: LoopbackProxyServer;
  /** The agent's requests wait for this before they go to the gateway (TicketProxyOptions.startGate). */
  startGate?: Promise<void>;
  /** The window running the segment, written in its pid record (docs/flows.md#recovery). */
  windowId?: string;
  /**
   * Keep the pid record once the agent exited, until `releasePidFile()`: the task runtime holds it
   * until the segment's outcome is applied, so no window takes the task for abandoned meanwhile.
   */
  holdPidFile?: boolean;
}

const REPLAY_CHARS = 200_000;
const STDERR_TAIL_CHARS = 2_000;

/** One running segment: its agent process and proxy, its output, and how it ends (`done`). */
export class SegmentRun {
  readonly done: Promise<SegmentOutcome>;
  readonly logFile: string;
  readonly pidFile: string;
  private readonly views = new Set<TerminalView>();
  private replay = '';
  private stderrTail = '';
  private stopReason: StopReason | null = null;
  private limitResetAt = 0;
  private parkedAskId: string | null = null;
  private interruptedByUser = false;
  private toldInputIgnored = false;
  /** The reader drives the agent over its stdin (Codex's JSON-RPC): no keystroke goes there. */
  private driven = false;
  private exited = false;
  private resolveDone!: (outcome: SegmentOutcome) => void;
  private readonly log: fs.WriteStream;
  /** Aborted when the agent exits: a question its reader relayed is then denied as ended. */
  private readonly agentGone = new AbortController();
  private readonly questions: SegmentQuestions;
  private readonly stopper: AgentStop;

  private constructor(
    private readonly options: SegmentRunOptions,
    readonly proxy: TicketProxy,
    private readonly child: ChildProcess,
    private readonly reader: AgentOutputReader,
    private readonly tag: string,
    stopTimings: StopTimings,
  ) {
    this.logFile = path.join(options.segmentDir, 'agent.log');
    this.pidFile = path.join(options.segmentDir, 'agent.pid');
    this.log = fs.createWriteStream(this.logFile, { flags: 'a', mode: 0o600 });
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    const host = { show: (text: string) => this.show(text), exited: () => this.exited };
    this.questions = new SegmentQuestions(options.asks, { ...host, clock: options.clock });
    this.stopper = new AgentStop(child, options.processes ?? systemProcessHost(), stopTimings, host);
  }

  /**
   * Starts the proxy and spawns the agent; resolves once the process is running.
   * Rejects (after cleaning up) if the agent cannot be started at all, e.g. not installed.
   */
  static async start(options: SegmentRunOptions): Promise<SegmentRun> {
    // A missing working folder makes spawn report the program as missing (ENOENT): say what is.
    if (!fs.statSync(options.spec.workspacePath, { throwIfNoEntry: false })?.isDirectory()) {
      throw new Error(
        `could not start the ${options.adapter.kind} agent: the folder it works in, ${options.spec.workspacePath}, does not exist`,
      );
    }
    // Only the user may enter: the prompt and the agent's settings (the proxy's secret URL) live here.
    ensurePrivateDir(options.segmentDir);
    const relay: { run?: SegmentRun } = {};
    const proxy = await TicketProxy.start({
      upstreamBaseUrl: (options.adapter.api === 'openai' ? options.gateway.openaiBaseUrl : undefined) ?? options.gateway.anthropicBaseUrl,
      upstreamChannel: options.gateway.channel,
      apiKey: options.gateway.apiKey,
      passAgentCredential: options.gateway.ownLogin,
      ticketId: options.ticketId,
      clock: options.clock,
      ...options.proxyTimings,
      ticketDeadline: options.ticketDeadline,
      listener: options.proxyListener,
      startGate: options.startGate,
      // The relay cannot ask before the agent runs, so the run exists by then.
      onPermissionAsk: options.asks
        ? (request, signal) => relay.run?.questions.relayPermissionAsk(options.asks!, request, signal) ?? Promise.resolve(ENDED_ANSWER)
        : undefined,
    });
    const spec: SegmentSpec = {
      ...options.spec,
      proxyBaseUrl: proxy.baseUrl,
      segmentDir: options.segmentDir,
      ownLogin: options.gateway.ownLogin,
    };
    let launch: AgentLaunch;
    let started: { child: ChildProcess; tag: string };
    try {
      launch = options.adapter.launch(spec);
      started = await spawnAgent(options.adapter.kind, launch, spec.workspacePath, options.processes ?? systemProcessHost());
    } catch (err) {
      await proxy.close();
      throw err;
    }
    const { child, tag } = started;
    const run = new SegmentRun(options, proxy, child, options.adapter.createReader(spec), tag, {
      sigintGraceMs: options.stopTimings?.sigintGraceMs ?? 5_000,
      sigtermGraceMs: options.stopTimings?.sigtermGraceMs ?? 5_000,
    });
    run.wire(launch.eventsOnFd3);
    if (launch.stdin === 'driver') {
      run.driven = true;
      const asks = options.asks;
      if (asks) run.reader.relayAsk = (request) => run.relayAsk(asks, request);
      run.reader.drive?.(child.stdin!);
    }
    relay.run = run;
    return run;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.exited;
  }

  /** The agent session this segment works in (its files outlive the process). */
  get sessionId(): string {
    return this.options.spec.sessionId;
  }

  /** Shows the output so far, then everything that follows; returns a detach function. */
  attach(view: TerminalView): () => void {
    if (this.replay) view.write(this.replay);
    this.views.add(view);
    return () => this.views.delete(view);
  }

  /**
   * Keystrokes from the task's terminal. Ctrl+C interrupts the agent as a terminal would (SIGINT;
   * the task then fails with that reason). Other keys go to an agent that reads the terminal
   * (answers to permission prompts); an agent whose stdin is its prompt file reads none.
   */
  writeInput(data: string): void {
    if (this.exited) return;
    if (data.includes('\x03')) {
      this.interruptedByUser = true;
      this.show('^C\n');
      // Where Ctrl+C cannot be sent (process-control.ts), the agent's tree is stopped instead.
      void this.signal('SIGINT').then((sent) => (sent ? undefined : this.stop()));
      return;
    }
    if (this.child.stdin?.writable && !this.driven) this.child.stdin.write(data);
    else if (this.questions.relaying) this.questions.feed(data);
    else if (!this.toldInputIgnored) {
      this.toldInputIgnored = true;
      this.show(`\n[off-peak] the ${this.options.adapter.kind} agent does not read terminal input here; Ctrl+C stops it\n`);
    }
  }

  /** Removes the segment's pid record (at the agent's exit, or later with `holdPidFile`). */
  releasePidFile(): void {
    fs.rmSync(this.pidFile, { force: true });
  }

  /** The user cancelled the task: stop the agent; the outcome is `cancelled`. */
  cancel(): Promise<void> {
    this.stopReason ??= 'cancelled';
    this.proxy.cancel();
    return this.stop();
  }

  /** The host is going away: stop the agent; the outcome is `interrupted` (resume later). */
  interrupt(): Promise<void> {
    this.stopReason ??= 'interrupted';
    return this.stop();
  }

  /**
   * Nobody answered `askId` in time and the task parks on it: stop the agent (resumably, as for an
   * interruption); the outcome is `parked`, the session resumes once the question is answered.
   */
  park(askId: string): Promise<void> {
    if (this.stopReason === null) {
      this.stopReason = 'parked';
      this.parkedAskId = askId;
      this.show(
        `\n[off-peak] nobody answered in time: the task waits for your answer without holding capacity, and resumes this session once it is answered\n`,
      );
    }
    return this.stop();
  }

  /** A question the reader relays: ended (denied) if the agent exits first, never once answered. */
  private async relayAsk(asks: SegmentAsks, request: PermissionRelayRequest): Promise<PermissionRelayAnswer> {
    const ended = new AbortController();
    const end = () => ended.abort();
    this.agentGone.signal.addEventListener('abort', end, { once: true });
    try {
      return await this.questions.relayPermissionAsk(asks, request, ended.signal);
    } finally {
      this.agentGone.signal.removeEventListener('abort', end);
    }
  }

  private wire(eventsOnFd3: boolean): void {
    const { child, reader } = this;
    writeSegmentPidRecord(this.pidFile, {
      pid: child.pid,
      windowId: this.options.windowId,
      sessionId: this.options.spec.sessionId,
      taskId: this.options.spec.taskId,
      tag: this.tag,
    });
    this.questions.wireAgent(reader, child.stdio[4] as NodeJS.WritableStream | null | undefined);
    this.proxy.onEvent((event) => {
      this.options.onProxyEvent?.(event);
      if (event.type === 'segment-expired') {
        this.stopReason ??= 'expired';
        this.show(`\n[off-peak] the ticket's segment ended; the task will resume with a new ticket\n`);
        // The agent was answered "do not retry"; make sure it really stops.
        void this.stop();
      } else if (event.type === 'holding' && event.attempt === 1 && !event.usageLimit) {
        this.show(`\n[off-peak] waiting for admission by the gateway…\n`);
      } else if (event.type === 'gateway-unreachable') {
        this.show(`\n[off-peak] the gateway cannot be reached (${event.error}); the request waits for it…\n`);
      } else if (event.type === 'gateway-reachable') {
        this.show(`\n[off-peak] the gateway is reachable again\n`);
      } else if (event.type === 'usage-limit' && event.resetAt !== null) {
        this.show(`\n[off-peak] ${usageLimitTerminalText(event.resetAt, event.park)}\n`);
        if (event.park && this.stopReason === null) [this.stopReason, this.limitResetAt] = ['usage-limited', event.resetAt];
        if (event.park) void this.stop(); // resumably, as for a parked question
      } else if (event.type === 'gateway-outage-exceeded' || event.type === 'model-api-unusable') {
        this.stopReason ??= 'gateway-lost';
        this.show(`\n[off-peak] ${event.reason}\n`);
        // The agent was answered "do not retry"; make sure it really stops.
        void this.stop();
      }
    });
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => this.show(reader.stdout(chunk)));
    child.stderr!.setEncoding('utf8');
    const stderrLines = new TerminalLines(false);
    child.stderr!.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
      // Whatever the agent's tools print may reach stderr: no control sequence gets to the terminal, no line reads as a question.
      this.show(stderrLines.text(chunk));
    });
    if (eventsOnFd3) {
      let pending = '';
      const events = child.stdio[3] as NodeJS.ReadableStream;
      events.setEncoding('utf8');
      events.on('data', (chunk: string) => {
        pending += chunk;
        let nl: number;
        while ((nl = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          try {
            reader.event?.(JSON.parse(line) as Record<string, unknown>);
          } catch {
            // a malformed event line is ignored; the exit code still decides
          }
        }
      });
    }
    child.stdin?.on('error', () => undefined); // the agent may exit with input pending
    child.on('close', (code, signal) => void this.finish(code, signal));
  }

  private show(text: string): void {
    if (!text) return;
    this.log.write(text);
    this.replay = (this.replay + text).slice(-REPLAY_CHARS);
    for (const view of this.views) {
      try {
        view.write(text);
      } catch {
        // a broken view must not stop the agent
      }
    }
  }

  private stop(): Promise<void> {
    return this.stopper.stop();
  }

  private signal(signal: NodeJS.Signals): Promise<boolean> {
    return this.stopper.signal(signal);
  }

  private async finish(code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    this.exited = true;
    this.agentGone.abort();
    this.options.asks?.end();
    this.show(this.reader.end());
    await this.stopper.killLeftovers(this.tag);
    const outcome = this.outcome(code, signal);
    await this.proxy.close();
    if (!this.options.holdPidFile) this.releasePidFile();
    await new Promise<void>((resolve) => this.log.end(resolve));
    for (const view of this.views) view.end?.(outcome);
    this.resolveDone(outcome);
  }

  private outcome(code: number | null, signal: NodeJS.Signals | null): SegmentOutcome {
    return segmentOutcome({
      stopReason: this.stopReason,
      parkedAskId: this.parkedAskId,
      limitResetAt: this.limitResetAt,
      proxyExpired: this.proxy.state === 'expired',
      proxyFailure: this.proxy.failureReason,
      result: this.reader.result(),
      interruptedByUser: this.interruptedByUser,
      stderrTail: this.stderrTail,
      code,
      signal,
    });
  }
}
