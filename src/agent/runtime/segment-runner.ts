/**
 * Runs ONE segment of a task: starts the local ticket proxy, spawns the agent (argv, never a
 * shell string) in the task's workspace, streams its output to a per-segment log file and to any
 * attached terminal view, stops it with SIGINT -> SIGTERM -> SIGKILL of its tree (Windows: Ctrl+C to
 * its console, then its tree terminated; src/core/process-control.ts), and maps how it ended to a segment outcome (docs/flows.md#segments). It knows nothing about the store: the task runtime applies outcomes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { systemClock, type Clock } from '../../core/clock';
import { commandInvocation, programToRun } from '../../core/executable-path';
import { gracefulSignals, killLeftovers, killTree, signalAgent, systemProcessHost, treeSpawnOptions, type ProcessHost } from '../../core/process-control';
import type { PermissionRelayAnswer, PermissionRelayRequest } from '../../protocol/permission-relay';
import { TypedLine, isYes } from '../../core/typed-line';
import type { AgentAdapter, AgentOutputReader, SegmentSpec } from './agent-adapter';
import { summarizeInput } from './claude-code-adapter';
import type { AskAnsweredBy, AskDecision, AskDelivery, AskRequest, PendingAsk } from '../questions/asks';
import { renderToolInput } from '../../core/ask-input';
import { terminalSafeText } from '../../core/untrusted-text';
import type { LoopbackProxyServer } from '../proxy/loopback-proxy-server';
import { ANSWERED_BY_TEXT, DENY_MESSAGES, ENDED_ANSWER, relayQuestionText } from '../questions/relay-ask-text';
import { ensurePrivateDir } from '../../files/private-files';
import { killTaggedProcesses, newSegmentTag, SEGMENT_TAG_ENV, writeSegmentPidRecord } from './segment-processes';
import { TicketProxy } from '../proxy/ticket-proxy';
import type { TicketProxyEvent, TicketProxyTimings } from '../proxy/ticket-proxy-types';
import { usageLimitTerminalText } from '../proxy/usage-limit-hold';

/** What a terminal (VS Code Pseudoterminal adapter, a test, a log) sees of a running segment. */
export interface TerminalView {
  /** Output text as it arrives ('\n' line ends; a pty adapter converts to '\r\n'). */
  write(text: string): void;
  /** The segment ended; the view may show the outcome and stop accepting input. */
  end?(outcome: SegmentOutcome): void;
}

export type SegmentOutcome =
  /** The agent finished the task; `check`: how the task's check ended (docs/flows.md#checks). */
  | { kind: 'completed'; summary: string; exitCode: number | null; check?: { passed: boolean; round: number } }
  /** The gateway ended the segment (3102/3001): requeue, retake, resume later. */
  | { kind: 'segment-expired' }
  /** The user cancelled the task (our own state). */
  | { kind: 'cancelled' }
  /** The host stopped the segment (shutdown, restart): requeue, resume the same session. */
  | { kind: 'interrupted' }
  /** Nobody answered the agent's question in time: the task parks on it (docs/flows.md#questions-park-the-task). */
  | { kind: 'parked'; askId: string }
  /** The account's usage limit resets later than a hold is worth: the task waits for `resetAt` (docs/flows.md#usage-limits). */
  | { kind: 'usage-limited'; resetAt: number }
  | { kind: 'failed'; reason: string; exitCode: number | null };

export interface StopTimings {
  /** After SIGINT, wait this long before SIGTERM. */
  sigintGraceMs: number;
  /** After SIGTERM, wait this long before SIGKILL. */
  sigtermGraceMs: number;
}

export interface SegmentRunOptions {
  adapter: AgentAdapter;
  spec: Omit<SegmentSpec, 'proxyBaseUrl' | 'segmentDir'>;
  /** The gateway's Anthropic base (`<gateway>/api/anthropic`) and the user's key. */
  /** `ownLogin`: the agent's own credential passes through (the key goes in x-offpeak-key). */
  /** `socketPath`: the gateway is reached over this Unix domain socket / named pipe (personal mode). */
  gateway: { anthropicBaseUrl: string; socketPath?: string; apiKey: string; ownLogin?: boolean };
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

/** The runtime's pending asks as one segment sees them (AskBroker bound to the task). */
export interface SegmentAsks {
  ask(request: AskRequest, deliver: AskDelivery): PendingAsk;
  /** An answer typed in the task's terminal, read by the host (an agent that does not read its terminal), for the input it showed. */
  answer(askId: string, decision: AskDecision, by: 'terminal', inputDigest: string): unknown;
  settle(askId: string, decision: AskDecision, by: AskAnsweredBy): void;
  /** The segment ended: what is still open is denied. */
  end(): void;
}

const REPLAY_CHARS = 200_000;
const STDERR_TAIL_CHARS = 2_000;

export class SegmentRun {
  readonly done: Promise<SegmentOutcome>;
  readonly logFile: string;
  readonly pidFile: string;
  private readonly views = new Set<TerminalView>();
  private replay = '';
  private stderrTail = '';
  private stopReason: 'cancelled' | 'interrupted' | 'expired' | 'gateway-lost' | 'parked' | 'usage-limited' | null = null;
  private limitResetAt = 0;
  private parkedAskId: string | null = null;
  private interruptedByUser = false;
  private toldInputIgnored = false;
  /** The agent's ask ids -> the broker's, while open. */
  private readonly askIds = new Map<string, string>();
  /** Questions relayed from an agent that does not read its terminal (Claude Code), oldest first. */
  private readonly relayAsks: PendingAsk[] = [];
  /** What is typed in the terminal for them: the host reads it and answers the oldest. */
  private readonly typed = new TypedLine({
    active: () => this.relayAsks.length > 0,
    echo: (text) => this.show(text),
    line: (text) => {
      const ask = this.relayAsks[0];
      // The terminal showed this question's whole input: the answer is for that input.
      if (ask) this.options.asks?.answer(ask.id, isYes(text) ? 'allow' : 'deny', 'terminal', ask.inputDigest);
    },
  });
  private stopping: Promise<void> | null = null;
  private exited = false;
  private resolveDone!: (outcome: SegmentOutcome) => void;
  private readonly log: fs.WriteStream;

  private constructor(
    private readonly options: SegmentRunOptions,
    readonly proxy: TicketProxy,
    private readonly child: ChildProcess,
    private readonly reader: AgentOutputReader,
    private readonly tag: string,
    private readonly stopTimings: StopTimings,
  ) {
    this.logFile = path.join(options.segmentDir, 'agent.log');
    this.pidFile = path.join(options.segmentDir, 'agent.pid');
    this.log = fs.createWriteStream(this.logFile, { flags: 'a', mode: 0o600 });
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  /**
   * Starts the proxy and spawns the agent; resolves once the process is running.
   * Rejects (after cleaning up) if the agent cannot be started at all, e.g. not installed.
   */
  static async start(options: SegmentRunOptions): Promise<SegmentRun> {
    // A missing working folder makes spawn report the program as missing (ENOENT): say what is.
    if (!fs.statSync(options.spec.workspacePath, { throwIfNoEntry: false })?.isDirectory()) {
      throw new Error(`could not start the ${options.adapter.kind} agent: the folder it works in, ${options.spec.workspacePath}, does not exist`);
    }
    // Only the user may enter: the prompt and the agent's settings (the proxy's secret URL) live here.
    ensurePrivateDir(options.segmentDir);
    const relay: { run?: SegmentRun } = {};
    const proxy = await TicketProxy.start({
      upstreamBaseUrl: options.gateway.anthropicBaseUrl,
      upstreamSocketPath: options.gateway.socketPath,
      apiKey: options.gateway.apiKey,
      passAgentCredential: options.gateway.ownLogin,
      ticketId: options.ticketId,
      clock: options.clock,
      ...options.proxyTimings,
      ticketDeadline: options.ticketDeadline,
      listener: options.proxyListener,
      startGate: options.startGate,
      // The relay cannot ask before the agent runs, so the run exists by then.
      onPermissionAsk: options.asks ? (request, signal) => relay.run?.relayPermissionAsk(options.asks!, request, signal) ?? Promise.resolve(ENDED_ANSWER) : undefined,
    });
    const spec: SegmentSpec = { ...options.spec, proxyBaseUrl: proxy.baseUrl, segmentDir: options.segmentDir, ownLogin: options.gateway.ownLogin };
    let launch;
    try {
      launch = options.adapter.launch(spec);
    } catch (err) {
      await proxy.close();
      throw err;
    }
    // Every process of the segment inherits the tag, so one that left the group is found at the end.
    const tag = newSegmentTag();
    const env: NodeJS.ProcessEnv = { ...process.env, ...launch.env, OFFPEAK_AGENT_PARENT_PID: String(process.pid), [SEGMENT_TAG_ENV]: tag };
    for (const name of launch.unsetEnv ?? []) delete env[name];
    let stdinFd: number | undefined;
    let stdinText: Buffer | undefined; // Windows: a prompt file goes through a pipe (treeSpawnOptions)
    let child: ChildProcess;
    const processes = options.processes ?? systemProcessHost();
    try {
      if (launch.stdin !== 'terminal' && processes.platform === 'win32') stdinText = fs.readFileSync(launch.stdin.file);
      else if (launch.stdin !== 'terminal') stdinFd = fs.openSync(launch.stdin.file, 'r');
      // From PATH only, never the task's folder; a Windows .cmd/.ps1 through its interpreter, as the OS would.
      const program = commandInvocation(programToRun(launch.command), launch.args);
      child = spawn(program.file, program.args, {
        windowsVerbatimArguments: program.windowsVerbatimArguments,
        cwd: spec.workspacePath,
        env,
        stdio: [stdinFd ?? 'pipe', 'pipe', 'pipe', launch.eventsOnFd3 ? 'pipe' : 'ignore', launch.answersOnFd4 ? 'pipe' : 'ignore'],
        // POSIX: its own process group, so the final SIGKILL also reaches the agent's own children.
        ...treeSpawnOptions(processes),
      });
      await once(child, 'spawn'); // rejects with the 'error' of a program that cannot start
      child.on('error', () => undefined); // a later one (a signal that could not be sent) is not the start's
      if (stdinText) child.stdin?.on('error', () => undefined).end(stdinText);
    } catch (err) {
      await proxy.close();
      throw new Error(`could not start the ${options.adapter.kind} agent (${launch.command}): ${(err as Error).message}`);
    } finally {
      if (stdinFd !== undefined) fs.closeSync(stdinFd); // the child holds its own copy
    }
    const run = new SegmentRun(options, proxy, child, options.adapter.createReader(spec), tag, {
      sigintGraceMs: options.stopTimings?.sigintGraceMs ?? 5_000,
      sigtermGraceMs: options.stopTimings?.sigtermGraceMs ?? 5_000,
    });
    run.wire(launch.eventsOnFd3);
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
    if (this.child.stdin?.writable) this.child.stdin.write(data);
    else if (this.relayAsks.length > 0) this.typed.feed(data);
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
      this.show(`\n[off-peak] nobody answered in time: the task waits for your answer without holding capacity, and resumes this session once it is answered\n`);
    }
    return this.stop();
  }

  /** A question from the permission relay (Claude Code): pending at the host, shown and answerable here. */
  private relayPermissionAsk(asks: SegmentAsks, request: PermissionRelayRequest, signal: AbortSignal): Promise<PermissionRelayAnswer> {
    if (this.exited) return Promise.resolve(ENDED_ANSWER);
    return new Promise((resolve) => {
      // Allow runs the tool with this whole input (`updatedInput`), so the whole input is what every surface shows.
      const ask = asks.ask({ tool: request.tool_name, summary: summarizeInput(request.input), input: renderToolInput(request.input), call: request.input }, (decision, by) => {
        this.closeRelayAsk(ask, `\n    → ${decision === 'allow' ? 'allowed' : 'denied'}${ANSWERED_BY_TEXT[by]}\n`);
        resolve(decision === 'allow' ? { decision } : { decision, message: DENY_MESSAGES[by] });
      });
      // One question on screen at a time: the last one the terminal shows is the one a typed answer goes to.
      if (this.relayAsks.push(ask) === 1) this.showRelayQuestion(ask);
      signal.addEventListener(
        'abort',
        () => {
          this.closeRelayAsk(ask, '');
          asks.settle(ask.id, 'deny', 'ended');
          resolve(ENDED_ANSWER);
        },
        { once: true },
      );
    });
  }

  private showRelayQuestion(ask: PendingAsk): void {
    this.typed.reset();
    const seconds = Math.max(0, Math.round((ask.deadlineAt - (this.options.clock ?? systemClock).now()) / 1000));
    this.show(relayQuestionText(ask, seconds));
  }

  /** A relayed question is answered or ended: its line is written, and the next waiting one shows. */
  private closeRelayAsk(ask: PendingAsk, line: string): void {
    const i = this.relayAsks.indexOf(ask);
    if (i < 0) return;
    this.relayAsks.splice(i, 1);
    if (i === 0 && line) this.show(line);
    if (i === 0 && this.relayAsks.length > 0 && !this.exited) this.showRelayQuestion(this.relayAsks[0]);
  }

  private wire(eventsOnFd3: boolean): void {
    const { child, reader } = this;
    writeSegmentPidRecord(this.pidFile, { pid: child.pid, windowId: this.options.windowId, sessionId: this.options.spec.sessionId, taskId: this.options.spec.taskId, tag: this.tag });
    const asks = this.options.asks;
    if (asks) {
      const answers = child.stdio[4] as NodeJS.WritableStream | null | undefined;
      answers?.on('error', () => undefined); // the agent may exit with an answer in flight
      reader.onAsk = (agentAsk) => {
        const ask = asks.ask(agentAsk, (decision, by) => {
          // The agent keeps its own deadline (the same one) and is gone when the segment ended.
          if (by === 'timeout' || by === 'ended') return;
          // The agent takes the first answer it gets; the terminal may have beaten this one.
          // The digest names the input the answer was given for (the broker checked it); the agent refuses another.
          if (answers && !this.exited) answers.write(JSON.stringify({ ask_id: agentAsk.agentAskId, decision, input_sha256: ask.inputDigest }) + '\n');
        });
        this.askIds.set(agentAsk.agentAskId, ask.id);
      };
      reader.onAskSettled = ({ agentAskId, decision, by }) => {
        const askId = this.askIds.get(agentAskId);
        this.askIds.delete(agentAskId);
        if (askId) asks.settle(askId, decision, by);
      };
    }
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
    child.stderr!.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
      // Whatever the agent's tools print may reach stderr: no control sequence gets to the terminal.
      this.show(terminalSafeText(chunk));
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

  private get processes(): ProcessHost {
    return this.options.processes ?? systemProcessHost();
  }

  private stop(): Promise<void> {
    if (this.exited) return Promise.resolve();
    this.stopping ??= (async () => {
      const grace: Partial<Record<NodeJS.Signals, number>> = { SIGINT: this.stopTimings.sigintGraceMs, SIGTERM: this.stopTimings.sigtermGraceMs };
      for (const signal of gracefulSignals(this.processes)) {
        if (this.exited) return;
        // The grace bounds the step too: one that could not be sent skips to the forced stop.
        const graceOver = this.waitForExit(grace[signal] ?? 0);
        if (!(await Promise.race([this.signal(signal), graceOver.then(() => true)]))) break;
        await graceOver;
      }
      if (this.exited) return;
      // The whole tree by force (Windows: found while the agent still runs).
      if (this.child.pid) await killTree(this.child.pid, this.processes);
      await this.waitForExit(5_000);
    })();
    return this.stopping;
  }

  /** A graceful signal to the agent (Windows: Ctrl+C to its console); false when it could not be sent (logged). */
  private async signal(signal: NodeJS.Signals): Promise<boolean> {
    const result = this.child.pid ? await signalAgent(this.child.pid, signal, this.processes) : 'gone';
    if (result === 'failed' && !this.exited) this.show(`\n[off-peak] could not send ${this.processes.platform === 'win32' ? 'Ctrl+C' : signal} to the agent: stopping it by force\n`);
    return result === 'sent';
  }

  private waitForExit(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.exited) return resolve();
      const timer = setTimeout(resolve, ms);
      this.child.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private async finish(code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    this.exited = true;
    this.options.asks?.end();
    this.show(this.reader.end());
    // Whatever the agent started in its group (Windows: its tree) must not outlive the segment...
    if (this.child.pid) await killLeftovers(this.child.pid, this.processes);
    // ...and neither may what left the group (setsid, setpgid, a double fork): found by its tag.
    killTaggedProcesses(this.tag, this.processes);
    const outcome = this.outcome(code, signal);
    await this.proxy.close();
    if (!this.options.holdPidFile) this.releasePidFile();
    await new Promise<void>((resolve) => this.log.end(resolve));
    for (const view of this.views) view.end?.(outcome);
    this.resolveDone(outcome);
  }

  private outcome(code: number | null, signal: NodeJS.Signals | null): SegmentOutcome {
    if (this.stopReason === 'cancelled') return { kind: 'cancelled' };
    if (this.stopReason === 'interrupted') return { kind: 'interrupted' };
    if (this.stopReason === 'parked' && this.parkedAskId) return { kind: 'parked', askId: this.parkedAskId };
    if (this.stopReason === 'usage-limited') return { kind: 'usage-limited', resetAt: this.limitResetAt };
    if (this.stopReason === 'expired' || this.proxy.state === 'expired') return { kind: 'segment-expired' };
    const lost = this.proxy.failureReason;
    if (lost !== null) return { kind: 'failed', reason: lost, exitCode: code };
    const result = this.reader.result();
    if (code === 0 && result?.ok) return { kind: 'completed', summary: result.summary, exitCode: code };
    let reason: string;
    if (this.interruptedByUser) reason = 'the agent was stopped with Ctrl+C in its terminal';
    else if (result && !result.ok) reason = result.error;
    else if (code === 0) reason = 'the agent exited without reporting a result';
    else if (signal) reason = `the agent was killed by ${signal}`;
    else reason = `the agent exited with code ${code}`;
    const tail = this.stderrTail.trim().split('\n').slice(-3).join(' | ');
    if (tail && !reason.includes(tail)) reason += ` (${tail})`;
    return { kind: 'failed', reason: reason.slice(0, 2_000), exitCode: code };
  }
}
