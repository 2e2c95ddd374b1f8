/**
 * The task runtime of one window (docs/flows.md#segments): takes a claimed task from the
 * scheduler, runs ONE segment of it through the segment runner (the first segment creates the
 * agent session, every later one resumes it with the continuation prompt; segment-start.ts), and
 * applies the outcome through the task lifecycle, the one writer of lifecycle changes
 * (segment-records.ts). What it is given: task-runtime-options.ts.
 * A task with a check runs it after the agent's turn, inside the segment (segment-work.ts).
 * A follow-up's first segment resumes the finished task's session with the follow-up's
 * instructions, with that session's agent (docs/flows.md#follow-up).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { DisposableLike } from '../../core/disposable';
import type { OffPeakTask } from '../../core/types';
import { createSystemTimers } from '../../core/timers';
import type { DispatchResult } from '../../scheduler/scheduler';
import type { AgentKind } from './agent-adapter';
import {
  AskBroker,
  DEFAULT_ASK_PARK_MS,
  DEFAULT_ASK_TIMEOUT_MS,
  type AnswerResult,
  type AskDecision,
  type PendingAsk,
} from '../questions/asks';
import { QuestionRecorder } from '../questions/question-record';
import { segmentDirOf } from './segment-logs';
import type { SegmentRun } from './segment-runner';
import type { TerminalView } from './segment-outcome';
import { UsageRecorder } from '../proxy/usage-recorder';
import type { SegmentWork } from './segment-work';
import type { SegmentStartup } from './runtime-events';
import { dropEmptyWorktree } from '../workplace/task-workplace';
import { SegmentRecords } from './segment-records';
import type { TaskRuntimeOptions } from './task-runtime-options';

export type { RuntimeEvent, SegmentStartup } from './runtime-events';

interface ActiveSegment {
  taskId: string;
  ticketId: string;
  run: SegmentWork;
  finished: Promise<void>;
}

export class TaskRuntime {
  private readonly active = new Map<string, ActiveSegment>();
  /** Segments being started (their agent may already run), until they are active or refused. */
  private readonly starting = new Map<string, Promise<DispatchResult>>();
  /** Set by `shutdown`: nothing new starts. */
  private closing = false;
  private readonly log: (line: string) => void;
  /** The pending permission questions of the agents this window runs. */
  readonly asks: AskBroker;
  /** Every question and its answer, in the task DB (the decision record). */
  readonly questions: QuestionRecorder;
  /** Token usage of the model answers, summed and written to the segments' ledger rows. */
  private readonly usage: UsageRecorder;
  /** What the segments write through the lifecycle: their proxies' events and their outcomes. */
  private readonly records: SegmentRecords;

  constructor(private readonly options: TaskRuntimeOptions) {
    this.log = options.log ?? (() => {});
    this.usage = new UsageRecorder(
      (ticketId, usage) => options.lifecycle.recordUsage(ticketId, usage),
      options.timers ?? createSystemTimers(),
      this.log,
      undefined,
      options.pricer,
    );
    this.questions = new QuestionRecorder(options.store, this.log);
    this.asks = new AskBroker({
      clock: options.clock,
      timeoutMs: options.askTimeoutMs ?? (() => DEFAULT_ASK_TIMEOUT_MS),
      unanswered: options.unansweredQuestion ?? (() => 'park'),
      parkAfterMs: options.askParkMs ?? (() => DEFAULT_ASK_PARK_MS),
      storedDecision: (taskId, digest) => this.questions.storedDecision(taskId, digest),
    });
    this.questions.attach(this.asks);
    const { store, lifecycle, runtimeDir, clock } = options;
    this.records = new SegmentRecords({
      store,
      lifecycle,
      runtimeDir,
      clock,
      onEvent: (event) => this.options.onEvent?.(event),
      asks: this.asks,
      questions: this.questions,
      usage: this.usage,
      log: this.log,
    });
    this.asks.onEvent((event) => {
      // A question answered from the user's stored decision needs nobody: it is not announced.
      if (event.type === 'asked') {
        if (!event.stored) this.options.onEvent?.({ type: 'input-needed', taskId: event.ask.taskId, ask: event.ask });
      } else if (event.type === 'answered')
        this.options.onEvent?.({
          type: 'input-answered',
          taskId: event.ask.taskId,
          ask: event.ask,
          decision: event.decision,
          by: event.by,
          at: event.at,
        });
      else if (event.type === 'parking') this.park(event.ask);
    });
  }

  /** Nobody answered in time: the segment stops (resumably) and the task parks on the question. */
  private park(ask: PendingAsk): void {
    const segment = this.active.get(ask.taskId);
    if (!segment) return;
    this.records.parking.set(ask.id, ask);
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
    this.closing = true;
    // A segment still starting may already have its agent: its start ends (refused before the
    // spawn, or active after it) before the active ones are interrupted, so it is stopped with
    // them and never left running against a listener that closes next.
    await Promise.allSettled([...this.starting.values()]);
    const segments = [...this.active.values()];
    // Their open questions are not answered "ended": kept for the record and asked again after the resume.
    for (const s of segments) this.records.held.set(s.taskId, this.asks.holdTask(s.taskId));
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
    if (this.active.has(taskId) || this.starting.has(taskId))
      return { status: 'refused', reason: 'a segment of this task already runs in this window' };
    if (this.closing) return { status: 'refused', reason: 'this window is closing' };
    const start = this.startSegment(taskId);
    this.starting.set(taskId, start);
    try {
      return await start;
    } finally {
      this.starting.delete(taskId);
    }
  }

  private async startSegment(taskId: string): Promise<DispatchResult> {
    const { store, lifecycle, clock } = this.options;
    const startup: SegmentStartup = { dispatchedAt: clock.now(), workplaceAt: 0, spawnedAt: 0 };
    const task = store.read((tx) => tx.tasks.get(taskId));
    if (!task || task.status !== 'queued' || !task.claimRunning)
      return { status: 'refused', reason: 'the task is no longer queued and claimed' };
    const ticketId = task.serverTicketId;
    if (!ticketId) return { status: 'failed', error: 'the task has no ticket yet' };
    const apiKey = await this.options.gateway.apiKey();
    if (!apiKey) return { status: 'failed', error: 'no gateway API key is set' };

    // Loaded at the first start (dist/runtime.js in the extension host): a window that runs no task never loads it.
    const {
      SegmentRun,
      watchAgent,
      SegmentWork,
      segmentCheckOf,
      ticketDeadlineOf,
      guardCheck,
      dropUnstartedWorktree,
      resolveWorkplace,
      recordFirstStart,
      sessionPlan,
      stopUnstarted,
    } = await import('./segment-kit');

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
    // Asked of the gateway while the workplace is made ready: the two do not wait for each other. The
    // gateway's default is an Anthropic model: an OpenAI agent (Codex) without one runs its own default.
    const model = task.model ? Promise.resolve(task.model) : adapter.api === 'openai' ? Promise.resolve(null) : this.defaultModel();
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
    const firstStart = record ? undefined : recordFirstStart(store, this.options.runtimeDir, this.log, task, agentKind, place);
    firstStart?.catch(() => undefined); // its failure is met below, after the agent started
    let openGate!: () => void;
    const started = new Promise<void>((resolve) => (openGate = resolve));

    const plan = sessionPlan(store, work, followUp, adapter);
    if ('failure' in plan) {
      await firstStart?.catch(() => undefined);
      await lifecycle.fail(taskId, { failureReason: plan.failure });
      await dropEmptyWorktree(store, taskId).catch(() => undefined); // never started: no branch is left behind
      return { status: 'fatal', error: plan.failure };
    }
    const { sessionId, resume, prompt } = plan;
    const ordinal = store.read((tx) => tx.tickets.get(ticketId)?.ordinal) ?? 0;
    const segmentDir = segmentDirOf(this.options.runtimeDir, taskId, ordinal, clock.now());
    // What the user answered while the task was parked is told to the resumed session; marked told at the first admitted model call (a segment whose ticket was over never told it).
    const decisions = resume ? this.questions.decisionsToState(taskId) : { text: '', askIds: [], askedAgain: [] };

    // A task with a check (docs/flows.md#checks): a fix round resumes with the failed check's output; a cut check runs again first.
    const modelName = await model;
    const checking = segmentCheckOf(store, taskId, ticketId, work.workspacePath, clock, this.options.checks);
    const guards = { store, taskId, permissionMode: task.permissionMode, folder: task.workspacePath, asks: this.asks };
    if (checking.check)
      guardCheck(checking.check, { ...guards, whenAgentChangedIt: () => this.options.checks?.whenAgentChangedIt?.() ?? 'run' });
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
        gateway: {
          anthropicBaseUrl: this.options.gateway.baseUrl.replace(/\/+$/, '') + '/api/anthropic',
          openaiBaseUrl: this.options.gateway.baseUrl.replace(/\/+$/, '') + '/api/openai',
          channel: this.options.gateway.channel,
          apiKey,
          ownLogin: this.options.gateway.ownLogin?.(agentKind) ?? false,
        },
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
        onProxyEvent: (event) => this.records.proxyEvent(taskId, ticketId, event, decisions),
        asks: {
          ask: (request, deliver) => this.asks.ask(taskId, request, deliver),
          answer: (askId, decision, by, inputDigest) => this.asks.answer(taskId, askId, decision, inputDigest, by),
          settle: (askId, decision, by) => this.asks.settle(askId, decision, by),
          end: () => this.asks.endTask(taskId),
        },
      });
    // The window began closing while this start got ready: no agent is started now.
    if (this.closing) {
      await firstStart?.catch(() => undefined);
      return { status: 'refused', reason: 'this window is closing' };
    }
    let run: SegmentRun | null;
    try {
      run = checking.startsWithCheck
        ? null
        : await startRun((!plan.followUp && decisions.text) || (resume && checking.fixPrompt) || prompt, resume, started);
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
    const segmentWork = new SegmentWork({
      first: run,
      check: checking.check,
      resume: resumeForFix,
      segmentDir,
      sessionId,
      taskId,
      windowId: this.options.windowId,
    });
    const segment: ActiveSegment = {
      taskId,
      ticketId,
      run: segmentWork,
      finished: segmentWork.done
        // The segment's last usage goes into its ledger row before the outcome ends the segment.
        .then(async (outcome) => {
          await this.usage.flush();
          return this.records.apply(task, place, ticketId, outcome);
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
    this.options.onEvent?.({
      type: 'segment-started',
      taskId,
      ticketId,
      sessionId,
      resume,
      pid: segmentWork.pid,
      at: clock.now(),
      startup,
    });
    openGate();
    return { status: 'started' };
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
}
