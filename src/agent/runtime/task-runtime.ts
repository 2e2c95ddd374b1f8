/**
 * The task runtime of one window (docs/flows.md#segments): takes a claimed task
 * from the scheduler, runs ONE segment of it through the segment runner (first segment creates
 * the agent session, every later one resumes it with the continuation prompt), and applies the
 * outcome through the task lifecycle (the one writer of lifecycle changes):
 *   completed -> completed (+ files_changed), failed -> failed with the reason,
 *   segment expired (3102) -> requeue + retake with the same task id, resume later,
 *   cancelled -> already cancelled by the user action (the segment is just closed),
 *   interrupted (host shutting down) -> back to queued, same session and ticket,
 *   parked (a question nobody answered in time) -> needs_input, ticket settled, resumes once answered.
 * A task with a check runs it after the agent's turn, inside the segment (segment-work.ts).
 * A follow-up's first segment resumes the finished task's session with the follow-up's
 * instructions, with that session's agent (docs/flows.md#follow-up).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../../core/clock';
import type { DisposableLike } from '../../core/disposable';
import type { HeldQuestion, OffPeakTask, ParkQuestion, ParkResult, SegmentEndReason, SegmentUsage } from '../../core/types';
import { createSystemTimers, type Timers } from '../../core/timers';
import type { FollowUpLink, TaskStore, TerminalDetails } from '../../store';
import type { DispatchResult } from '../../scheduler/scheduler';
import { CONTINUATION_PROMPT, type AgentAdapter, type AgentKind } from './agent-adapter';
import { AskBroker, DEFAULT_ASK_PARK_MS, DEFAULT_ASK_TIMEOUT_MS, type AnswerResult, type AskAnsweredBy, type AskDecision, type PendingAsk, type UnansweredQuestion } from '../questions/asks';
import { parkQuestionOf, QuestionRecorder } from '../questions/question-record';
import { countFilesChanged, recordBaseCommit, recordFilesBaseline } from '../workplace/files-changed';
import type { KeepAwake } from './keep-awake';
import type { LoopbackProxyServer } from '../proxy/loopback-proxy-server';
import { segmentDirOf, taskLogsDir } from './segment-logs';
import { SegmentRun } from './segment-runner';
import type { SegmentOutcome, TerminalView } from './segment-outcome';
import type { StopTimings } from './segment-stop';
import type { TicketProxyEvent, TicketProxyTimings } from '../proxy/ticket-proxy-types';
import { UsageRecorder } from '../proxy/usage-recorder';
import { watchAgent } from './agent-watchdog';
import { SegmentWork, segmentCheckOf, ticketDeadlineOf, type CheckSettings } from './segment-work';
import type { RuntimeEvent, SegmentStartup } from './runtime-events';
import { listTaskChangesWithCount } from '../workplace/task-changes';
import { dropUnstartedWorktree, resolveWorkplace, type Workplace } from '../workplace/task-workplace';

/**
 * The one writer of task lifecycle changes (the service's TaskLifecycle implements it; the user
 * actions use the same one), handed to the runtime at construction.
 */
export interface TaskLifecyclePort {
  markStarted(taskId: string, ticketId: string, sessionId: string): Promise<boolean>;
  markAdmitted(ticketId: string, at?: number): Promise<void>;
  /** The segment's proxy cannot reach the gateway since `since` (its requests are held), or can again (null). */
  markGatewayUnreachable(ticketId: string, since: number | null): Promise<void>;
  /** Adds the tokens model answers of the segment used to its ledger row. */
  recordUsage(ticketId: string, usage: SegmentUsage): Promise<void>;
  endSegment(ticketId: string, reason: SegmentEndReason, error?: string): Promise<void>;
  /** The window closes under the segment; `held`: the questions open then, kept for the resumed session. */
  interrupt(taskId: string, ticketId: string, held?: readonly HeldQuestion[]): Promise<void>;
  expireSegment(taskId: string, ticketId: string): Promise<boolean>;
  complete(taskId: string, details?: TerminalDetails): Promise<boolean>;
  fail(taskId: string, details?: TerminalDetails): Promise<boolean>;
  park(taskId: string, ticketId: string, question: ParkQuestion, answer?: { decision: AskDecision; by: AskAnsweredBy }): Promise<ParkResult>;
  /** The account's usage limit holds the segment until `resetAt` (null: lifted); it parks the task until then (docs/flows.md#usage-limits). */
  markUsageLimit?(ticketId: string, resetAt: number | null): Promise<void>;
  parkForUsageLimit?(taskId: string, ticketId: string, resetAt: number): Promise<boolean>;
}

export type { RuntimeEvent, SegmentStartup } from './runtime-events';

export interface TaskRuntimeOptions {
  store: TaskStore;
  lifecycle: TaskLifecyclePort;
  /** The adapters this window can run, and which one new tasks use. */
  adapters: Partial<Record<AgentKind, AgentAdapter>>;
  defaultAgent: () => AgentKind;
  /**
   * The model for a task that names none: the gateway's default model (its configs), asked when a
   * segment starts. Undefined or null leaves the choice to the agent.
   */
  defaultModel?: () => Promise<string | null | undefined> | string | null | undefined;
  /** `ownLogin(agent)`: that agent's own login passes through to the model API (personal mode). */
  gateway: { baseUrl: string; socketPath?: string; apiKey: () => Promise<string | undefined>; ownLogin?: (agent: AgentKind) => boolean };
  /** Per-task segment directories (logs, pid files) live here. */
  runtimeDir: string;
  /** This window's id, written in each segment's pid record (docs/flows.md#recovery). */
  windowId?: string;
  /** Tasks' own worktrees (docs/flows.md#isolation) live here; default `<runtimeDir>/worktrees`. */
  worktreesDir?: string;
  clock: Clock;
  /** For the usage recorder's periodic write; real timers by default. */
  timers?: Timers;
  keepAwake?: KeepAwake;
  proxyTimings?: TicketProxyTimings;
  /** One loopback listener for all of this window's segment proxies (each with its own secret). */
  proxyListener?: LoopbackProxyServer;
  stopTimings?: Partial<StopTimings>;
  /** An agent's unanswered permission question is denied after this long (when the agent sets no deadline). */
  askTimeoutMs?: () => number;
  /** What an unanswered question does: park the task (default) or deny after `askTimeoutMs`. */
  unansweredQuestion?: () => UnansweredQuestion;
  /** In park mode, how long a question waits before the task parks. */
  askParkMs?: () => number;
  /** The machine settings of task checks (docs/flows.md#checks); default 15 min, 2 rounds. */
  checks?: CheckSettings;
  onEvent?: (event: RuntimeEvent) => void;
  log?: (line: string) => void;
}

interface ActiveSegment {
  taskId: string;
  ticketId: string;
  run: SegmentWork;
  finished: Promise<void>;
}

export class TaskRuntime {
  private readonly active = new Map<string, ActiveSegment>();
  private readonly starting = new Set<string>();
  private readonly log: (line: string) => void;
  /** The pending permission questions of the agents this window runs. */
  readonly asks: AskBroker;
  /** Every question and its answer, in the task DB (the decision record). */
  readonly questions: QuestionRecorder;
  /** Questions the task parks on while its agent stops, by ask id. */
  private readonly parking = new Map<string, PendingAsk>();
  /** Questions open when the window began to close, by task id: kept for the resumed session. */
  private readonly held = new Map<string, PendingAsk[]>();
  /** Token usage of the model answers, summed and written to the segments' ledger rows. */
  private readonly usage: UsageRecorder;

  constructor(private readonly options: TaskRuntimeOptions) {
    this.log = options.log ?? (() => {});
    this.usage = new UsageRecorder((ticketId, usage) => options.lifecycle.recordUsage(ticketId, usage), options.timers ?? createSystemTimers(), this.log);
    this.questions = new QuestionRecorder(options.store, this.log);
    this.asks = new AskBroker({
      clock: options.clock,
      timeoutMs: options.askTimeoutMs ?? (() => DEFAULT_ASK_TIMEOUT_MS),
      unanswered: options.unansweredQuestion ?? (() => 'park'),
      parkAfterMs: options.askParkMs ?? (() => DEFAULT_ASK_PARK_MS),
      storedDecision: (taskId, digest) => this.questions.storedDecision(taskId, digest),
    });
    this.questions.attach(this.asks);
    this.asks.onEvent((event) => {
      // A question answered from the user's stored decision needs nobody: it is not announced.
      if (event.type === 'asked') {
        if (!event.stored) this.options.onEvent?.({ type: 'input-needed', taskId: event.ask.taskId, ask: event.ask });
      }
      else if (event.type === 'answered') this.options.onEvent?.({ type: 'input-answered', taskId: event.ask.taskId, ask: event.ask, decision: event.decision, by: event.by, at: event.at });
      else if (event.type === 'parking') this.park(event.ask);
    });
  }

  /** Nobody answered in time: the segment stops (resumably) and the task parks on the question. */
  private park(ask: PendingAsk): void {
    const segment = this.active.get(ask.taskId);
    if (!segment) return;
    this.parking.set(ask.id, ask);
    this.log(`runtime: ${ask.taskId} parks on its unanswered question ${ask.id}`);
    void segment.run.park(ask.id);
  }

  /** The open permission questions of one task (oldest first), or of every task this window runs. */
  pendingAsks(taskId?: string): PendingAsk[] {
    return this.asks.pending(taskId);
  }

  /**
   * Answers a task's permission question from the host (a card's Allow/Deny, a notification).
   * The first answer wins, whoever gives it; a later one (or one for an ask that is gone) is ignored.
   * `inputDigest`: of the input shown where the answer was given; another input's answer is refused.
   */
  answerAsk(taskId: string, askId: string, decision: AskDecision, inputDigest: string, by: 'host' | 'other-window' = 'host'): AnswerResult {
    return this.asks.answer(taskId, askId, decision, inputDigest, by);
  }

  /** Fires when a permission question is asked or answered. */
  onAsksChange(listener: () => void): DisposableLike {
    return this.asks.onEvent(() => listener());
  }

  /** Task ids with a live agent process in this window. */
  get runningTaskIds(): string[] {
    return [...this.active.keys()];
  }

  /** Whether this window runs the task or is starting it (its pid record may already exist). */
  owns(taskId: string): boolean {
    return this.active.has(taskId) || this.starting.has(taskId);
  }

  segment(taskId: string): SegmentWork | undefined {
    return this.active.get(taskId)?.run;
  }

  /** Resolves when the task's current segment (if any) has ended and its outcome was applied. */
  async segmentFinished(taskId: string): Promise<void> {
    await this.active.get(taskId)?.finished;
  }

  attachTerminal(taskId: string, view: TerminalView): (() => void) | undefined {
    return this.active.get(taskId)?.run.attach(view);
  }

  writeInput(taskId: string, data: string): void {
    this.active.get(taskId)?.run.writeInput(data);
  }

  /** The service's agent stopper: the user cancelled (the task is already `cancelled` in the store). */
  async stopTask(taskId: string): Promise<void> {
    const segment = this.active.get(taskId);
    if (!segment) return;
    await segment.run.cancel();
    await segment.finished;
  }

  /** Clean exit: interrupt every segment; each goes back to queued with its session and ticket. */
  async shutdown(): Promise<void> {
    const segments = [...this.active.values()];
    // Their open questions are not answered "ended": kept for the record and asked again after the resume.
    for (const s of segments) this.held.set(s.taskId, this.asks.holdTask(s.taskId));
    await Promise.all(segments.map((s) => s.run.interrupt()));
    await Promise.all(segments.map((s) => s.finished));
    this.options.keepAwake?.dispose();
  }

  /**
   * Runs one segment of a claimed task (the scheduler's dispatch). Resolves once the agent runs
   * and the task is marked running (or why not); the segment goes on in the background.
   */
  async runTask(claimed: OffPeakTask): Promise<DispatchResult> {
    const taskId = claimed.id;
    if (this.active.has(taskId) || this.starting.has(taskId)) return { status: 'refused', reason: 'a segment of this task already runs in this window' };
    this.starting.add(taskId);
    try {
      return await this.startSegment(taskId);
    } finally {
      this.starting.delete(taskId);
    }
  }

  private async startSegment(taskId: string): Promise<DispatchResult> {
    const { store, lifecycle, clock } = this.options;
    const startup: SegmentStartup = { dispatchedAt: clock.now(), workplaceAt: 0, spawnedAt: 0 };
    const task = store.read((tx) => tx.tasks.get(taskId));
    if (!task || task.status !== 'queued' || !task.claimRunning) return { status: 'refused', reason: 'the task is no longer queued and claimed' };
    const ticketId = task.serverTicketId;
    if (!ticketId) return { status: 'failed', error: 'the task has no ticket yet' };
    const apiKey = await this.options.gateway.apiKey();
    if (!apiKey) return { status: 'failed', error: 'no gateway API key is set' };

    if (!fs.statSync(task.workspacePath, { throwIfNoEntry: false })?.isDirectory()) {
      await lifecycle.fail(taskId, { failureReason: `The workspace folder ${task.workspacePath} no longer exists.` });
      return { status: 'fatal', error: 'workspace missing' };
    }

    const record = store.read((tx) => tx.runtime.get(taskId));
    const followUp = store.read((tx) => tx.followUps.get(taskId));
    const agentKind = ((record ?? followUp)?.agent as AgentKind | undefined) ?? this.options.defaultAgent();
    const adapter = this.options.adapters[agentKind];
    if (!adapter) {
      const reason = `This task's session belongs to the ${agentKind} agent, which is not available in this window.`;
      await lifecycle.fail(taskId, { failureReason: reason });
      return { status: 'fatal', error: reason };
    }
    // Asked of the gateway while the workplace is made ready: the two do not wait for each other.
    const model = task.model ? Promise.resolve(task.model) : this.defaultModel();
    // Its own worktree (made at the first start) or its folder, the same path for every segment.
    const where = await resolveWorkplace(store, task, this.options.worktreesDir ?? path.join(this.options.runtimeDir, 'worktrees'));
    if (where.kind === 'wait') return { status: 'refused', reason: where.reason };
    if (where.kind === 'failed') {
      await lifecycle.fail(taskId, { failureReason: where.reason });
      return { status: 'fatal', error: where.reason };
    }
    const place = where.place;
    startup.workplaceAt = clock.now();
    const work: OffPeakTask = { ...task, workspacePath: place.folder };
    // What files_changed is measured against, the folder before the agent acts, is taken while the
    // agent starts up: its requests wait at the proxy until the start is recorded (`started`).
    const firstStart = record ? undefined : this.recordFirstStart(task, agentKind, place);
    firstStart?.catch(() => undefined); // its failure is met below, after the agent started
    let openGate!: () => void;
    const started = new Promise<void>((resolve) => (openGate = resolve));

    // First segment vs resume: the session exists once the agent has started it.
    const plan = followUp ? this.followUpSegment(work, followUp, adapter) : undefined;
    if (plan && 'failure' in plan) {
      await lifecycle.fail(taskId, { failureReason: plan.failure });
      return { status: 'fatal', error: plan.failure };
    }
    const sessionId = plan?.sessionId ?? task.sessionId ?? crypto.randomUUID();
    const resume = plan ? true : task.sessionId !== null && (adapter.sessionExists?.(sessionId, work.workspacePath) ?? true);
    const prompt = plan ? plan.prompt : resume ? CONTINUATION_PROMPT : task.prompt;
    const ordinal = store.read((tx) => tx.tickets.get(ticketId)?.ordinal) ?? 0;
    const segmentDir = segmentDirOf(this.options.runtimeDir, taskId, ordinal, clock.now());
    // What the user answered while the task was parked is told to the resumed session; marked told at the first admitted model call (a segment whose ticket was over never told it).
    const decisions = resume ? this.questions.decisionsToState(taskId) : { text: '', askIds: [], askedAgain: [] };

    // A task with a check (docs/flows.md#checks): a fix round resumes with the failed check's output; a cut check runs again first.
    const modelName = await model;
    const checking = segmentCheckOf(store, taskId, ticketId, work.workspacePath, clock, this.options.checks);
    const startRun = (text: string, resumed: boolean, startGate?: Promise<void>) =>
      SegmentRun.start({
        adapter,
        spec: {
          taskId,
          sessionId,
          resume: resumed,
          prompt: text,
          permissionMode: task.permissionMode,
          model: modelName,
          thoughtLevel: task.thoughtLevel,
          workspacePath: work.workspacePath,
        },
        gateway: { anthropicBaseUrl: this.options.gateway.baseUrl.replace(/\/+$/, '') + '/api/anthropic', socketPath: this.options.gateway.socketPath, apiKey, ownLogin: this.options.gateway.ownLogin?.(agentKind) ?? false },
        ticketId,
        segmentDir,
        clock,
        proxyTimings: this.options.proxyTimings,
        ticketDeadline: () => ticketDeadlineOf(store, ticketId),
        proxyListener: this.options.proxyListener,
        startGate,
        stopTimings: this.options.stopTimings,
        windowId: this.options.windowId,
        holdPidFile: true,
        onProxyEvent: (event) => this.onProxyEvent(taskId, ticketId, event, decisions),
        asks: {
          ask: (request, deliver) => this.asks.ask(taskId, request, deliver),
          answer: (askId, decision, by, inputDigest) => this.asks.answer(taskId, askId, decision, inputDigest, by),
          settle: (askId, decision, by) => this.asks.settle(askId, decision, by),
          end: () => this.asks.endTask(taskId),
        },
      });
    let run: SegmentRun | null;
    try {
      run = checking.startsWithCheck ? null : await startRun((!plan && decisions.text) || (resume && checking.fixPrompt) || prompt, resume, started);
    } catch (err) {
      await firstStart?.catch(() => undefined); // its git runs are over before the worktree may go
      const reason = (err as Error).message;
      // Never started (not a follow-up, no session yet): no offpeak/… branch is left behind.
      const left = !followUp && task.sessionId === null ? await dropUnstartedWorktree(store, taskId) : [];
      await lifecycle.fail(taskId, { failureReason: left.length ? `${reason} (could not remove ${left.join(' and ')})` : reason });
      return { status: 'fatal', error: reason };
    }
    startup.spawnedAt = clock.now();
    if (run) watchAgent(run);

    // The guarded transition: refused if the task was cancelled (or changed) while we started.
    let marked: boolean;
    try {
      await firstStart;
      marked = await lifecycle.markStarted(taskId, ticketId, sessionId);
    } catch (err) {
      // The write failed (a disk error, a file held open on Windows): the scheduler releases the
      // claim on this answer, so the agent must be gone first, or another window starts it too.
      if (run) await stopUnstarted(run);
      return { status: 'failed', error: `the task could not be marked running (${(err as Error).message}); its agent was stopped` };
    }
    if (!marked) {
      if (run) await stopUnstarted(run);
      return { status: 'refused', reason: 'the task was paused or cancelled while its agent started' };
    }

    const release = this.options.keepAwake?.acquire();
    const resumeForFix = (text: string) => startRun(text, true).then((next) => (watchAgent(next), next));
    const segmentWork = new SegmentWork({ first: run, check: checking.check, resume: resumeForFix, segmentDir, sessionId, taskId, windowId: this.options.windowId });
    const segment: ActiveSegment = {
      taskId,
      ticketId,
      run: segmentWork,
      finished: segmentWork.done
        // The segment's last usage goes into its ledger row before the outcome ends the segment.
        .then(async (outcome) => {
          await this.usage.flush();
          return this.applyOutcome(task, place, ticketId, outcome);
        })
        .catch((err: unknown) => this.log(`runtime: applying the outcome of ${taskId} failed: ${(err as Error).message}`))
        .finally(() => {
          // Only now: until the outcome is written, the record tells the lease holder this window runs the task.
          segmentWork.releasePidFile();
          this.active.delete(taskId);
          release?.();
        }),
    };
    this.active.set(taskId, segment);
    this.options.onEvent?.({ type: 'segment-started', taskId, ticketId, sessionId, resume, pid: segmentWork.pid, at: clock.now(), startup });
    openGate();
    return { status: 'started' };
  }

  /**
   * A follow-up always resumes the finished task's session: with its own instructions until a
   * model request of it was admitted (then the agent has them), with the continuation prompt after.
   */
  private followUpSegment(task: OffPeakTask, link: FollowUpLink, adapter: AgentAdapter): { sessionId: string; prompt: string } | { failure: string } {
    if (!(adapter.sessionExists?.(link.sessionId, task.workspacePath) ?? true)) {
      return { failure: `The session of "${link.ofTitle}" is gone (its agent no longer has it), so this follow-up cannot continue it.` };
    }
    const heard = task.sessionId !== null && this.options.store.read((tx) => tx.tickets.forTask(task.id)).some((t) => t.activeAt !== null);
    return { sessionId: link.sessionId, prompt: heard ? CONTINUATION_PROMPT : task.prompt };
  }

  /** The gateway's default model; a failure to learn it leaves the choice to the agent (logged). */
  private async defaultModel(): Promise<string | null> {
    try {
      return (await this.options.defaultModel?.()) ?? null;
    } catch (err) {
      this.log(`runtime: the gateway's default model is unknown (${(err as Error).message}); the agent chooses`);
      return null;
    }
  }

  private onProxyEvent(taskId: string, ticketId: string, event: TicketProxyEvent, told: { askIds: string[]; askedAgain: string[] }): void {
    if (event.type === 'admitted') {
      void this.questions.markStated(told.askIds, told.askedAgain);
      this.options.lifecycle.markAdmitted(ticketId, event.at).catch((err: unknown) => this.log(`runtime: recording admission failed: ${(err as Error).message}`));
      this.options.onEvent?.({ type: 'admitted', taskId, ticketId, at: event.at });
    } else if (event.type === 'holding') {
      this.options.onEvent?.({ type: 'holding', taskId, ticketId, waitMs: event.waitMs, at: event.at });
    } else if (event.type === 'usage') {
      this.usage.add(ticketId, event.model, event.usage);
    } else if (event.type === 'usage-limit') {
      this.options.lifecycle.markUsageLimit?.(ticketId, event.resetAt).catch((err: unknown) => this.log(`runtime: recording the usage limit failed: ${(err as Error).message}`));
      this.options.onEvent?.({ type: 'usage-limit', taskId, ticketId, resetAt: event.resetAt, park: event.park, at: event.at });
    } else if (event.type === 'gateway-unreachable' || event.type === 'gateway-reachable') {
      // In the ledger, so every window's card says "Gateway unreachable since …" (docs/flows.md#segments).
      const since = event.type === 'gateway-unreachable' ? event.since : null;
      this.options.lifecycle.markGatewayUnreachable(ticketId, since).catch((err: unknown) => this.log(`runtime: recording the gateway outage failed: ${(err as Error).message}`));
      this.options.onEvent?.({ type: 'gateway-unreachable', taskId, ticketId, since, at: event.at });
    }
  }

  private async applyOutcome(task: OffPeakTask, place: Workplace, ticketId: string, outcome: SegmentOutcome): Promise<void> {
    const { lifecycle } = this.options;
    const taskId = task.id;
    switch (outcome.kind) {
      case 'completed':
        await lifecycle.complete(taskId, { filesChanged: await this.filesChanged(task, place) });
        break;
      case 'failed':
        await lifecycle.fail(taskId, { failureReason: outcome.reason, filesChanged: await this.filesChanged(task, place) });
        break;
      case 'segment-expired':
        // Requeued without a ticket; the window's task service retakes with the same task id.
        await this.filesChanged(task, place); // the card's list, counted after every segment
        await lifecycle.expireSegment(taskId, ticketId);
        break;
      case 'cancelled':
        await lifecycle.endSegment(ticketId, 'cancelled');
        break;
      case 'usage-limited':
        // Ended without failing, ticket settled; the new ticket waits in the gateway's queue until the reset.
        await this.filesChanged(task, place);
        await (lifecycle.parkForUsageLimit ? lifecycle.parkForUsageLimit(taskId, ticketId, outcome.resetAt) : lifecycle.expireSegment(taskId, ticketId));
        break;
      case 'interrupted': {
        // The ticket stays live: the scheduler dispatches the task again at once with it.
        await this.questions.idle(); // the questions' own records first
        const held = (this.held.get(taskId) ?? []).map((ask) => ({ question: parkQuestionOf(ask), answer: this.asks.takeParkingAnswer(ask.id) }));
        await lifecycle.interrupt(taskId, ticketId, held);
        break;
      }
      case 'parked': {
        const ask = this.parking.get(outcome.askId);
        this.parking.delete(outcome.askId);
        if (!ask) break;
        await this.questions.idle(); // the question's own record first
        const result = await lifecycle.park(taskId, ticketId, parkQuestionOf(ask), this.asks.takeParkingAnswer(ask.id));
        this.log(`runtime: ${taskId} ${result === 'parked' ? 'parked: it waits for the answer' : result === 'requeued' ? 'was answered while it parked: queued again' : 'ended while it parked'}`);
        break;
      }
    }
    // A segment that ended otherwise while it parked (expired, cancelled) leaves nothing to park on.
    for (const [askId, ask] of this.parking) if (ask.taskId === taskId) this.parking.delete(askId);
    this.held.delete(taskId);
    this.options.onEvent?.({ type: 'segment-ended', taskId, ticketId, outcome, at: this.options.clock.now() });
  }

  /** The first start's record: the agent that owns the session, the commit and the snapshot files_changed is measured against. */
  private async recordFirstStart(task: OffPeakTask, agent: AgentKind, place: Workplace): Promise<void> {
    const [baseCommit, snapshot] = await Promise.all([place.changes.baseCommit ?? recordBaseCommit(place.folder), recordFilesBaseline(place.changes.folder, taskLogsDir(this.options.runtimeDir, task.id))]);
    if (!snapshot) this.log(`runtime: no snapshot of ${place.changes.folder} could be taken; the task's files changed will read "unknown"`);
    await this.options.store.mutate((tx) => tx.runtime.recordFirstStart({ taskId: task.id, agent, baseCommit }));
  }

  /**
   * The task's changed files with line counts, written to its isolation row for the card and
   * the review (docs/flows.md#review); their number, or the plain count when the list is unknown.
   */
  private async filesChanged(task: OffPeakTask, place: Workplace): Promise<number | null> {
    const taskDir = taskLogsDir(this.options.runtimeDir, task.id);
    if (!place.isolation) return countFilesChanged(place.changes.folder, taskDir);
    const listed = await listTaskChangesWithCount({ ...place.changes, taskDir }).catch((err: unknown) => {
      this.log(`runtime: the changed files of ${task.id} could not be listed: ${(err as Error).message}`);
      return null;
    });
    await this.options.store.mutate((tx) => tx.isolation.recordChanges(task.id, listed?.changes ?? null)).catch(() => undefined);
    return listed ? listed.count : countFilesChanged(place.changes.folder, taskDir);
  }
}

/** Stops an agent whose start could not be recorded, before the scheduler hears back. */
async function stopUnstarted(run: SegmentRun): Promise<void> {
  await run.cancel().then(() => run.done);
  run.releasePidFile();
}
