// Everything one VS Code window runs, minus VS Code: the sql.js task store, the gateway client,
// the task service (sync, settle outbox, leader lease), the scheduler and the task runtime with
// its agent adapters. src/extension.ts builds one per window and connects it to VS Code; tests
// build it in plain Node.
import path from 'node:path';
import { ensurePrivateDir, narrowPrivateTree } from '../files/private-files';
import type { ClaudeCodeLocation } from '../agent/runtime/claude-code-locate';
import type { AgentAdapter, AgentKind } from '../agent/runtime/agent-adapter';
import { ClaudeCodeAdapter, type ClaudeCodeOptions, type ClaudeSettingSources } from '../agent/runtime/claude-code-adapter';
import { ReferenceAgentAdapter } from '../agent/runtime/reference-agent-adapter';
import { KeepAwake } from '../agent/runtime/keep-awake';
import { LoopbackProxyServer } from '../agent/proxy/loopback-proxy-server';
import { DEFAULT_ASK_PARK_MS, DEFAULT_ASK_TIMEOUT_MS, type AnswerResult, type AskDecision, type PendingAsk, type UnansweredQuestion } from '../agent/questions/asks';
import { askInputDigest, digestMatches } from '../core/ask-input';
import { TaskRuntime, type RuntimeEvent } from '../agent/runtime/task-runtime';
import type { TaskRuntimeOptions } from '../agent/runtime/task-runtime-options';
import { referenceSessionOf, sessionIsFree, sessionViewOf, type ReferenceSessionInput, type SessionView } from '../agent/runtime/session-terminal';
import type { ModelKeyRouteOptions } from '../agent/proxy/model-key-proxy';
import type { TerminalFeedSource } from '../agent/runtime/task-terminal-feed';
import type { Clock } from '../core/clock';
import type { DisposableLike } from '../core/disposable';
import { currentValue, type LiveValue } from '../core/live-value';
import { HistoryArchive, type HistoryKeep } from '../service/history-archive';
import { SingleFlight } from '../core/single-flight';
import type { OffPeakTask } from '../core/types';
import { GatewayClient } from '../gateway-client/client';
import { recoverInterrupted, type RecoveryReport } from '../scheduler/recovery';
import { Scheduler, type SchedulerOptions } from '../scheduler/scheduler';
import { WindowDispatcher } from '../scheduler/window-dispatcher';
import { WindowRegistry } from '../scheduler/window-registry';
import { TaskLifecycle, TaskService, type SyncConfig } from '../service';
import { RemoteCancelWatcher } from './remote-cancel-watcher';
import { SharedAsks } from './shared-asks';
import { TaskNotices, type TaskNotice } from './task-notices';
import { awayEventOf } from './notice-events';
import { AwayNotifications, type AwayNotificationsOptions } from '../notify/away-notifications';
import { pruneTaskLeftovers, transcriptOnDisk } from './task-leftovers';
import { pruneTaskWorktree } from './task-worktree-cleanup';
import { worktreeCounterpart } from '../agent/workplace/task-worktree';
import { changeConcerns, TaskStore, type StoreNotice, type TaskStoreOptions } from '../store';

export interface HostEngineOptions {
  /** globalStorage: tasks-index.sqlite, agent sessions, segment logs. */
  storageDir: string;
  gatewayUrl: string;
  /**
   * Personal mode: the local authority's Unix domain socket / Windows named pipe. Every call to
   * the gateway, the ticket proxies' included, goes there and never to a loopback port.
   */
  gatewaySocketPath?: string;
  /** The user's gateway key, read from SecretStorage on every use; never written anywhere else. */
  apiKey: () => Promise<string | undefined>;
  /** Personal mode: which agents use their own login, passed through untouched (docs/architecture.md#personal-mode). */
  ownLogin?: (agent: AgentKind) => boolean;
  clock: Clock;
  windowId: string;
  /** workspace_key values of the folders open in this window. */
  workspaceKeys: () => readonly string[];
  agent: () => AgentKind;
  /** How to start the bundled reference agent, e.g. [execPath, '<ext>/dist/reference-agent.js']. */
  referenceAgent: { command: string; argsPrefix: string[]; env?: Record<string, string> };
  /** Personal mode: the user's own model API and key, with which "Open session" continues a reference-agent session (docs/flows.md#open-session). */
  ownModel?: ModelKeyRouteOptions;
  /** Path of the `claude` executable, or where `locateClaudeCode` found it (Claude Code adapter). */
  claudeCommand: () => string | ClaudeCodeLocation;
  /** Which Claude Code setting files a task loads (read at each launch; default `user`). */
  claudeSettingSources?: () => ClaudeSettingSources;
  /** Claude Code's config dir and extra environment (default: the user's own). */
  claudeCode?: Pick<ClaudeCodeOptions, 'configDir' | 'env'>;
  /**
   * How to start the permission relay MCP server that lets a headless Claude Code ask, e.g.
   * [execPath, '<ext>/dist/permission-mcp.js']. Without it Claude Code denies its own asks.
   */
  permissionRelay?: { command: string; args: string[]; env?: Record<string, string> };
  /**
   * In `deny` mode, an unanswered permission question is denied after this long (default 10 min).
   * This and the next two may be getters: read at each question and each launch, so a setting
   * change applies without a reload (a question already open keeps what it was asked under).
   */
  askTimeoutMs?: LiveValue<number>;
  /** What an unanswered question does (`offPeak.unansweredQuestion`): park the task (default) or deny. */
  unansweredQuestion?: LiveValue<UnansweredQuestion>;
  /** In `park` mode, how long a question waits before the task parks (default 10 min). */
  askParkMs?: LiveValue<number>;
  /** Task checks' time limit and rounds (`offPeak.check.*`, read at each check; docs/flows.md#checks). */
  checks?: TaskRuntimeOptions['checks'];
  keepAwake: () => boolean;
  /** sql-wasm.wasm beside the extension bundle. */
  wasmPath?: string;
  sync?: Partial<SyncConfig>;
  lease?: { ttlMs?: number; tickMs?: number };
  /** Store tuning (tests trade durability and watch latency for speed; `fs`: a disk that fails, for fault tests). */
  storeTuning?: Pick<TaskStoreOptions, 'durable' | 'watch' | 'fs'>;
  schedulerTuning?: Pick<SchedulerOptions, 'idleTickMs'>;
  runtimeTuning?: Pick<TaskRuntimeOptions, 'proxyTimings' | 'stopTimings'>;
  onRuntimeEvent?: (event: RuntimeEvent) => void;
  /** A task completed, failed or needs input, decided once across all windows (see TaskNotices). */
  onNotice?: (notice: TaskNotice) => void;
  /** How long the lease holder leaves an unclaimed result to the window that ran it. */
  noticeGraceMs?: number;
  /** Away notifications (docs/flows.md#away-notifications): where they go and what they carry; none without it. */
  notify?: Omit<AwayNotificationsOptions, 'store' | 'windowId' | 'isLeader' | 'clock' | 'log'>;
  onStoreNotice?: (notice: StoreNotice) => void;
  /** `offPeak.history.keepDays` / `keepCount`, read at each archive run (docs/flows.md#archive; default 90 days, 500 tasks). */
  historyKeep?: () => HistoryKeep;
  log?: (line: string) => void;
}

/** Where an engine keeps its files under globalStorage (beside tasks-index.sqlite). */
/** Where task worktrees live (docs/flows.md#isolation): the user's checkouts, never narrowed. */
export function worktreesDirOf(storageDir: string): string {
  return path.join(storageDir, 'worktrees');
}

export function engineDirs(storageDir: string): { runtimeDir: string; referenceSessionsDir: string } {
  return { runtimeDir: path.join(storageDir, 'runtime'), referenceSessionsDir: path.join(storageDir, 'reference-agent-sessions') };
}

/** Claude Code with its path read at each launch: the user may change the setting at any time. */
function claudeCodeFromSetting(command: () => string | ClaudeCodeLocation, fixed: Omit<ClaudeCodeOptions, 'command'>, settingSources?: () => ClaudeSettingSources): AgentAdapter {
  const current = () => {
    const at = command();
    const launch = typeof at === 'string' ? { command: at } : { command: at.command, argsPrefix: at.argsPrefix, env: { ...fixed.env, ...at.env } };
    return new ClaudeCodeAdapter({ ...fixed, ...launch, settingSources: settingSources?.() });
  };
  return {
    kind: 'claude-code',
    launch: (spec) => current().launch(spec),
    createReader: (spec) => current().createReader(spec),
    sessionExists: (sessionId, workspacePath) => current().sessionExists(sessionId, workspacePath),
  };
}

export class HostEngine {
  private disposed = false;
  private readonly recovering = new SingleFlight<void>();
  private readonly recoveryReports: RecoveryReport[] = [];
  /** Running tasks the holder's last tick found without any pid record (requeued if the next one does too). */
  private unrecorded = new Set<string>();

  private constructor(
    readonly store: TaskStore,
    readonly gateway: GatewayClient,
    readonly service: TaskService,
    readonly runtime: TaskRuntime,
    readonly scheduler: Scheduler,
    readonly windows: WindowRegistry,
    private readonly keepAwake: KeepAwake,
    readonly proxyListener: LoopbackProxyServer,
    private readonly remoteCancels: RemoteCancelWatcher,
    readonly notices: TaskNotices,
    private readonly asks: SharedAsks,
    private readonly runtimeDir: string,
    private readonly windowId: string,
    private readonly log: (line: string) => void,
    private readonly sessionStarts: { command: () => string; configDir?: string; settingSources?: () => ClaudeSettingSources; reference: Omit<ReferenceSessionInput, 'baseUrl'>; ownModel?: ModelKeyRouteOptions },
    private readonly unanswered: () => UnansweredQuestion,
    /** Finished tasks beyond the History limits, in tasks-archive.sqlite (docs/flows.md#archive). */
    readonly archive: HistoryArchive,
    /** Sent by the lease holder only, once per event across windows (docs/flows.md#away-notifications). */
    readonly away: AwayNotifications,
  ) {}

  static async start(options: HostEngineOptions): Promise<HostEngine> {
    const log = options.log ?? (() => {});
    const { clock, windowId } = options;
    // globalStorage holds prompts, logs and sessions: private to the user, also when it already existed.
    ensurePrivateDir(options.storageDir);
    const { runtimeDir, referenceSessionsDir } = engineDirs(options.storageDir);
    ensurePrivateDir(runtimeDir);
    narrowPrivateTree(options.storageDir, { skip: [worktreesDirOf(options.storageDir)] });
    const store = await TaskStore.open({ ...options.storeTuning, directory: options.storageDir, clock, wasmPath: options.wasmPath, onNotice: options.onStoreNotice });
    const gateway = new GatewayClient({ baseUrl: options.gatewayUrl, socketPath: options.gatewaySocketPath, apiKey: options.apiKey, clock });
    const askTimeoutMs = () => currentValue(options.askTimeoutMs ?? DEFAULT_ASK_TIMEOUT_MS);
    const unanswered = () => currentValue(options.unansweredQuestion ?? 'park');
    const askParkMs = () => currentValue(options.askParkMs ?? DEFAULT_ASK_PARK_MS);
    // The agent's own deadline is a safety net behind the host's: in park mode it comes well after the park.
    const agentAskTimeoutMs = () => (unanswered() === 'park' ? askParkMs() + 5 * 60_000 : askTimeoutMs());
    const adapters: Partial<Record<AgentKind, AgentAdapter>> = {
      reference: new ReferenceAgentAdapter({
        ...options.referenceAgent,
        askTimeoutMs: agentAskTimeoutMs,
        askParkMs: () => (unanswered() === 'park' ? askParkMs() : undefined),
        sessionsDir: referenceSessionsDir,
      }),
    };
    adapters['claude-code'] = claudeCodeFromSetting(options.claudeCommand, { ...options.claudeCode, permissionRelay: options.permissionRelay, askTimeoutMs: agentAskTimeoutMs }, options.claudeSettingSources);
    const keepAwake = new KeepAwake({ enabled: options.keepAwake });
    // One local port for all of this window's segments: a remote window offers each new port for forwarding.
    const proxyListener = new LoopbackProxyServer();
    // One lifecycle writer for the runtime's outcomes and the user's actions. Built first, it lets
    // the runtime come before the service, which is handed the runtime's stopper: no cycle.
    const lifecycle = new TaskLifecycle(store, log);
    const notices = new TaskNotices({
      store,
      windowId,
      // Asked once the engine runs, when the service below exists.
      isLeader: () => service.isLeader,
      clock,
      leaderGraceMs: options.noticeGraceMs,
      onNotice: (notice) => {
        options.onNotice?.(notice);
        const { key, event } = store.read((tx) => awayEventOf(notice, tx.tasks.get(notice.taskId), tx.checks.get(notice.taskId)));
        void away.enqueue(key, event);
      },
      log,
    });
    const away = new AwayNotifications({ target: async () => undefined, enabled: () => false, ...options.notify, store, windowId, isLeader: () => service.isLeader, clock, log });
    const runtime = new TaskRuntime({
      store,
      lifecycle,
      adapters,
      defaultAgent: options.agent,
      // A task that names no model runs on the gateway's default, as the form's "Gateway default" says.
      defaultModel: async () => (await gateway.configs()).default_model,
      gateway: { baseUrl: options.gatewayUrl, socketPath: options.gatewaySocketPath, apiKey: options.apiKey, ownLogin: options.ownLogin },
      runtimeDir,
      windowId,
      worktreesDir: worktreesDirOf(options.storageDir),
      clock,
      keepAwake,
      proxyListener,
      askTimeoutMs,
      unansweredQuestion: unanswered,
      askParkMs,
      checks: options.checks,
      ...options.runtimeTuning,
      onEvent: (event) => {
        options.onRuntimeEvent?.(event);
        notices.runtimeEvent(event);
      },
      log,
    });
    // Tasks whose agent a cancel or delete of this window stopped here (so no other window removes their transcript).
    const stoppedHere = new Set<string>();
    const service = new TaskService({
      store,
      gateway,
      clock,
      windowId,
      lifecycle,
      stopAgent: (taskId) => {
        if (runtime.runningTaskIds.includes(taskId)) stoppedHere.add(taskId);
        return runtime.stopTask(taskId);
      },
      sync: options.sync,
      lease: options.lease,
      log,
    });
    // Questions asked here show, and can be answered, in every window's panel.
    const asks = new SharedAsks({ store, windowId, runtime, log });
    // Whatever this window's runtime is given to run, its result is this window's to notify.
    const runHere = (task: OffPeakTask) => {
      notices.noteRunHere(task.id);
      return runtime.runTask(task);
    };
    // Other windows (processes) learn of tasks for their workspaces through the shared DB.
    const windows = new WindowRegistry({ store, windowId, workspaceKeys: options.workspaceKeys, clock, runLocal: runHere, log });
    const dispatcher = new WindowDispatcher(windowId, () => windows.remoteHosts());
    dispatcher.register({ windowId, workspaceKeys: options.workspaceKeys, runTask: runHere });
    // No safety-net tick of its own: the lease tick below is the engine's one idle heartbeat.
    const scheduler = new Scheduler({ store, dispatcher, clock, isLeader: () => service.isLeader, idleTickMs: Infinity, ...options.schedulerTuning, log });
    const leftovers = { runtimeDir, referenceSessionsDir };
    // The session transcript stays unless the user deleted the session too, and while a follow-up
    // shares it (docs/flows.md#cancel-delete-history, #follow-up).
    const pruneDeleted = ({ task, deleteSession }: { task: Pick<OffPeakTask, 'id' | 'sessionId'> & Partial<Pick<OffPeakTask, 'status' | 'claimRunning'>>; deleteSession: boolean }) => {
      const shared = task.sessionId !== null && store.read((tx) => tx.followUps.sessionInUse(task.sessionId!, task.id));
      const agentElsewhere = (task.status === 'running' || task.claimRunning === true) && !stoppedHere.delete(task.id);
      pruneTaskLeftovers(leftovers, task, { deleteSession: deleteSession && !shared, agentElsewhere }, log);
      void pruneTaskWorktree(store, task.id, log);
    };
    // Cancel/Delete in another window stop the agent this window runs (through the shared DB).
    const remoteCancels = new RemoteCancelWatcher({ store, runtime, pruneDeleted, log });
    const engine = new HostEngine(store, gateway, service, runtime, scheduler, windows, keepAwake, proxyListener, remoteCancels, notices, asks, runtimeDir, windowId, log, {
      command: () => {
        const at = options.claudeCommand();
        return typeof at === 'string' ? at : at.found;
      },
      configDir: options.claudeCode?.configDir,
      settingSources: options.claudeSettingSources,
      reference: { command: options.referenceAgent.command, argsPrefix: options.referenceAgent.argsPrefix, sessionsDir: referenceSessionsDir },
      ownModel: options.ownModel,
    }, unanswered, new HistoryArchive({ store, clock, keep: options.historyKeep, wasmPath: options.wasmPath, durable: options.storeTuning?.durable, log }), away);
    service.onDidWake(() => scheduler.wake());
    service.onDidDelete(pruneDeleted);
    store.onDidChange((change) => {
      if (changeConcerns(change, 'tasks', 'tickets', 'windows', 'dispatch')) scheduler.wake();
    });
    // The lease tick (every DEFAULT_LEASE_TICK_MS) is the one timer an idle window wakes up for:
    // each window looks at the DB file then (which re-arms the store's own poll, so that never
    // fires while the engine runs), and the holder's scheduler re-checks. Every wake-up of an idle
    // window costs CPU on its own, so the checks share one.
    service.leadership.onDidTick((leader) => {
      try {
        store.checkForExternalChange();
      } catch {
        // store closing: nothing to look at
      }
      engine.archive.unloadIfIdle(); // the history archive is read only when asked, and not kept
      if (leader) {
        void scheduler.tick();
        away.kick(); // retries and the end of quiet hours have timers; this is their backup
        // A window that crashed while another held the lease left its tasks running: found here,
        // within one tick (docs/flows.md#recovery).
        void engine.sweep();
        // At most once a day, in the background (docs/flows.md#archive).
        void engine.archive.runIfDue();
      }
    });
    service.leadership.onDidChange(() => {
      // A new lease holder notifies the results nobody claimed (their window is gone).
      notices.scan();
      // …and sends what the outbox holds (a hand-over neither loses nor repeats an event).
      away.kick();
      // A window that becomes the leader (first start, or the old leader died) recovers what the
      // previous holder left running before it schedules anything.
      if (service.isLeader) void engine.recover().then(() => scheduler.wake());
    });
    remoteCancels.start();
    notices.start();
    asks.start();
    await service.start();
    away.start();
    await windows.start();
    if (service.isLeader) await engine.recover();
    scheduler.start();
    if (service.isLeader) void engine.archive.runIfDue(); // the first start after the upgrade archives in the background
    return engine;
  }

  /** What a task's terminal reads: its live segment in this window, its segment logs and its ledger. */
  terminalSource(): TerminalFeedSource {
    return {
      runtimeDir: this.runtimeDir,
      segment: (taskId) => this.runtime.segment(taskId),
      taskStatus: (taskId) => this.service.getTask(taskId)?.status,
      tickets: (taskId) => this.service.ticketsOf(taskId),
    };
  }

  /** The reference agent's transcript of a task that deleting its session would remove (none while a follow-up shares it). */
  deletableTranscript(task: Pick<OffPeakTask, 'id' | 'sessionId'>): string | undefined {
    if (task.sessionId && this.store.read((tx) => tx.followUps.sessionInUse(task.sessionId!, task.id))) return undefined;
    return transcriptOnDisk(engineDirs(this.store.directory), task);
  }

  /**
   * What "Open session" opens for a task (docs/flows.md#open-session): `claude --resume` for a
   * finished Claude Code task whose session no other task works on, else its transcript.
   */
  async sessionView(taskId: string, hostEnv: Readonly<Record<string, string | undefined>> = process.env): Promise<SessionView> {
    const { task, agent, busy, isolation } = this.store.read((tx) => {
      const t = tx.tasks.get(taskId);
      return { task: t, agent: tx.runtime.get(taskId)?.agent, busy: t?.sessionId ? tx.followUps.liveUsersOfSession(t.sessionId, taskId).length > 0 : false, isolation: tx.isolation.get(taskId) };
    });
    if (!task) throw new Error('This task no longer exists.');
    // A task on its own branch ran in its worktree: Claude Code finds the session from there (docs/flows.md#isolation).
    const ranIn = isolation?.mode === 'worktree' && isolation.worktreePath && isolation.broughtHome?.kind !== 'discarded' ? worktreeCounterpart(task.workspacePath, isolation.worktreePath) : task.workspacePath;
    const starts = this.sessionStarts;
    const claude = { command: starts.command(), configDir: starts.configDir, hostEnv, proxyPort: this.proxyListener.listeningPort, settingSources: starts.settingSources?.() };
    const reference = agent === 'reference' && sessionIsFree(task, busy) ? await referenceSessionOf(this.proxyListener, starts.reference, starts.ownModel) : undefined;
    const route = reference && 'route' in reference ? reference.route : undefined;
    try {
      const view = sessionViewOf({ ...task, workspacePath: ranIn }, agent, claude, busy, reference && ('why' in reference ? reference : reference.input));
      return view.kind === 'interactive' && route ? { ...view, close: () => route.revoke() } : view;
    } catch (e) {
      route?.revoke();
      throw e;
    }
  }

  /**
   * The open permission questions of every window's agents, and the questions parked tasks wait
   * on (docs/flows.md#questions-park-the-task), oldest first.
   */
  pendingAsks(taskId?: string): PendingAsk[] {
    // Another window's question parks or denies by the same machine setting as this window's.
    const open = this.asks.pending(taskId).map((a) => (a.onDeadline ? a : { ...a, onDeadline: this.unanswered() }));
    return [...open, ...this.parkedAsks(taskId)].sort((a, b) => a.askedAt - b.askedAt);
  }

  /**
   * Answers a permission question (the first answer wins: host, terminal or deadline); one asked
   * in another window gets the answer through the shared DB; one a task parked on is answered in
   * the DB, from any window, and the task is queued to resume. `inputDigest` names the input shown
   * where the answer was given (docs/flows.md#what-a-question-shows): another input's is refused.
   */
  async answerAsk(taskId: string, askId: string, decision: AskDecision, inputDigest: string): Promise<AnswerResult> {
    const result = await this.asks.answer(taskId, askId, decision, inputDigest);
    if (result !== 'unknown') return result;
    const parked = this.parkedAsks(taskId).find((a) => a.id === askId);
    if (parked && !digestMatches(parked.input, inputDigest)) return 'input-mismatch';
    return this.service.lifecycle.answerParked(taskId, askId, decision, 'host');
  }

  private parkedAsks(taskId?: string): PendingAsk[] {
    try {
      return this.store.read((tx) => {
        // Parked questions of parked tasks; those kept across a window's close while their task waits to resume.
        const waiting = new Map(tx.tasks.list({ status: ['needs_input', 'queued', 'paused'], ...(taskId ? { ids: [taskId] } : {}) }).map((t) => [t.id, t.status]));
        const listed = tx.questions.parkedOpen([...waiting.keys()]).filter((q) => {
          const status = waiting.get(q.taskId);
          return q.answeredBy === 'interrupted' ? status === 'queued' || status === 'paused' : status === 'needs_input';
        });
        return listed.map((q) => ({
          id: q.askId,
          taskId: q.taskId,
          tool: q.tool,
          summary: q.summary,
          input: q.input,
          inputDigest: askInputDigest(q.input),
          askedAt: q.askedAt,
          deadlineAt: q.parkedAt ?? q.askedAt,
          onDeadline: 'park' as const,
          callDigest: q.callDigest,
          parkedAt: q.parkedAt ?? q.askedAt,
          ...(q.answeredBy === 'interrupted' ? { interrupted: true } : {}),
        }));
      });
    } catch {
      return [];
    }
  }

  /** Fires when a permission question is asked or answered in any window; fires until the returned subscription is disposed. */
  onAsksChange(listener: () => void): DisposableLike {
    return this.asks.onChange(listener);
  }

  /** What each recovery this window ran did, oldest first (none until it held the lease). */
  get recoveries(): readonly RecoveryReport[] {
    return this.recoveryReports;
  }

  /** Puts tasks left running by a window that is gone back in the queue (same session): run on becoming the lease holder. */
  recover(): Promise<unknown> {
    return this.recovering.run(() => this.recoverNow('holder'));
  }

  /**
   * The lease holder's tick: drops the registrations of windows whose process is gone and
   * recovers what they left running. A running task without any pid record is requeued only
   * when the previous tick found it so too (its record may be about to be written).
   */
  sweep(): Promise<unknown> {
    return this.recovering.run(() => this.recoverNow('tick'));
  }

  private async recoverNow(kind: 'holder' | 'tick'): Promise<void> {
    try {
      if (kind === 'tick') await this.windows.dropDeadWindows();
      const seen = new Set<string>();
      const report = await recoverInterrupted(this.store, this.runtimeDir, (ids) => this.service.lifecycle.requeueInterrupted(ids), (id) => this.runtime.owns(id), {
        windowId: this.windowId,
        isLiveWindow: (id, pid) => this.windows.isLive(id, pid),
        requeueUnrecorded:
          kind === 'holder'
            ? undefined
            : (id) => {
                seen.add(id);
                return this.unrecorded.has(id);
              },
      });
      if (kind === 'tick') this.unrecorded = seen;
      const acted = report.requeued.length > 0 || report.killedOrphans.length > 0;
      if (kind === 'holder' || acted) this.recoveryReports.push(report);
      if (report.killedOrphans.length > 0) this.log(`stopped ${report.killedOrphans.length} orphaned agent process group(s)`);
      if (report.requeued.length > 0) {
        this.log(`recovered ${report.requeued.length} interrupted task(s)`);
        this.scheduler.wake();
      }
    } catch (e) {
      this.log(`recovery failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Clean exit: running segments go back to the queue with their session, claims are released. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.remoteCancels.dispose();
    this.notices.dispose();
    await this.scheduler.stop();
    await this.windows.stop();
    await this.remoteCancels.idle();
    await this.runtime.shutdown();
    await this.runtime.questions.idle();
    await this.asks.stop();
    await this.proxyListener.close();
    await this.scheduler.idle();
    await this.notices.idle();
    await this.away.dispose(); // before the lease goes: a post in flight is recorded first
    await this.service.stop();
    await this.recovering.idle(); // no lease tick starts another once the service stopped
    await this.archive.close();
    this.keepAwake.dispose();
    await this.store.close();
  }
}
