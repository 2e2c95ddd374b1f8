// Everything one VS Code window runs, minus VS Code: the sql.js task store, the gateway client,
// the task service (sync, settle outbox, leader lease, the user's actions), the scheduler and the
// task runtime with its agent adapters. It only wires them: src/extension.ts starts one per
// window and connects it to VS Code; tests start it in plain Node.
import { ensurePrivateDir, narrowPrivateTree } from '../files/private-files';
import { KeepAwake } from '../agent/runtime/keep-awake';
import { LoopbackProxyServer } from '../agent/proxy/loopback-proxy-server';
import { DEFAULT_ASK_PARK_MS, DEFAULT_ASK_TIMEOUT_MS } from '../agent/questions/asks';
import { TaskRuntime } from '../agent/runtime/task-runtime';
import type { SessionView } from '../agent/runtime/session-terminal';
import type { TerminalFeedSource } from '../agent/runtime/task-terminal-feed';
import { currentValue } from '../core/live-value';
import { HistoryArchive } from '../service/history-archive';
import type { OffPeakTask } from '../core/types';
import { GatewayClient } from '../gateway-client/client';
import type { RecoveryReport } from '../scheduler/recovery';
import { Scheduler } from '../scheduler/scheduler';
import { WindowDispatcher } from '../scheduler/window-dispatcher';
import { WindowRegistry } from '../scheduler/window-registry';
import { TaskLifecycle, TaskQuestions, TaskService, TaskSessions } from '../service';
import { pruneTaskWorktree } from '../service/bring-home';
import { RemoteCancelWatcher } from './remote-cancel-watcher';
import { SharedAsks } from './shared-asks';
import { TaskNotices } from './task-notices';
import { awayEventOf } from './notice-events';
import { AwayNotifications } from '../notify/away-notifications';
import { pruneTaskLeftovers, transcriptOnDisk } from './task-leftovers';
import { changeConcerns, TaskStore } from '../store';
import { taskLogsDir } from '../agent/runtime/segment-logs';
import path from 'node:path';
import { engineDirs, worktreesDirOf, type HostEngineOptions } from './engine-options';
import { agentAdapters, sessionStarter } from './agent-starts';
import { RecoverySweep } from './recovery-sweep';
import { makePricer, priceOverrides } from '../core/price-list';
import type { Pricer } from '../core/spend';

export { engineDirs, worktreesDirOf, type HostEngineOptions } from './engine-options';

/** The parts of a started engine, each built once by HostEngine.start. */
export interface HostEngineParts {
  store: TaskStore;
  gateway: GatewayClient;
  service: TaskService;
  runtime: TaskRuntime;
  scheduler: Scheduler;
  windows: WindowRegistry;
  keepAwake: KeepAwake;
  proxyListener: LoopbackProxyServer;
  remoteCancels: RemoteCancelWatcher;
  notices: TaskNotices;
  /** This window's questions published for every window, and the answers others leave here. */
  asks: SharedAsks;
  /** Answering permission questions, parked ones included, from any window. */
  questions: TaskQuestions;
  /** "Open session". */
  sessions: TaskSessions<SessionView>;
  recovery: RecoverySweep;
  runtimeDir: string;
  /** Finished tasks beyond the History limits, in tasks-archive.sqlite (docs/flows.md#archive). */
  archive: HistoryArchive;
  /** Sent by the lease holder only, once per event across windows (docs/flows.md#away-notifications). */
  away: AwayNotifications;
}

export class HostEngine {
  private disposed = false;
  readonly store: TaskStore;
  readonly gateway: GatewayClient;
  readonly service: TaskService;
  readonly runtime: TaskRuntime;
  readonly scheduler: Scheduler;
  readonly windows: WindowRegistry;
  readonly proxyListener: LoopbackProxyServer;
  readonly notices: TaskNotices;
  readonly questions: TaskQuestions;
  readonly sessions: TaskSessions<SessionView>;
  readonly archive: HistoryArchive;
  readonly away: AwayNotifications;

  private constructor(private readonly parts: HostEngineParts) {
    ({
      store: this.store,
      gateway: this.gateway,
      service: this.service,
      runtime: this.runtime,
      scheduler: this.scheduler,
      windows: this.windows,
      proxyListener: this.proxyListener,
      notices: this.notices,
      questions: this.questions,
      sessions: this.sessions,
      archive: this.archive,
      away: this.away,
    } = parts);
  }

  static async start(options: HostEngineOptions): Promise<HostEngine> {
    const log = options.log ?? (() => {});
    const { clock, windowId } = options;
    // globalStorage holds prompts, logs and sessions: private to the user, also when it already existed.
    ensurePrivateDir(options.storageDir);
    const { runtimeDir, referenceSessionsDir } = engineDirs(options.storageDir);
    ensurePrivateDir(runtimeDir);
    narrowPrivateTree(options.storageDir, { skip: [worktreesDirOf(options.storageDir)] });
    const store = await TaskStore.open({
      ...options.storeTuning,
      directory: options.storageDir,
      clock,
      wasmPath: options.wasmPath,
      onNotice: options.onStoreNotice,
    });
    const gateway = new GatewayClient({
      baseUrl: options.gatewayUrl,
      channel: options.gatewayChannel,
      apiKey: options.apiKey,
      clock,
    });
    const askTimeoutMs = () => currentValue(options.askTimeoutMs ?? DEFAULT_ASK_TIMEOUT_MS);
    const unanswered = () => currentValue(options.unansweredQuestion ?? 'park');
    const askParkMs = () => currentValue(options.askParkMs ?? DEFAULT_ASK_PARK_MS);
    // The shipped price list is a bundle of its own (docs/architecture.md#lazy-bundles), loaded in the background.
    let listed: Pricer = () => null;
    if (!options.pricer)
      void import('../core/listed-prices').then(
        (m) => (listed = m.listedPrice),
        (err: unknown) =>
          log(`prices: the price list could not be loaded (${(err as Error).message}); answers are priced by offPeak.prices only`),
      );
    // The agent's own deadline is a safety net behind the host's: in park mode it comes well after the park.
    const agentAskTimeoutMs = () => (unanswered() === 'park' ? askParkMs() + 5 * 60_000 : askTimeoutMs());
    const adapters = agentAdapters(options, referenceSessionsDir, {
      timeoutMs: agentAskTimeoutMs,
      parkMs: () => (unanswered() === 'park' ? askParkMs() : undefined),
    });
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
    const away = new AwayNotifications({
      target: async () => undefined,
      enabled: () => false,
      ...options.notify,
      store,
      windowId,
      isLeader: () => service.isLeader,
      clock,
      log,
    });
    const runtime = new TaskRuntime({
      store,
      lifecycle,
      adapters,
      defaultAgent: options.agent,
      // A task that names no model runs on the gateway's default, as the form's "Gateway default" says.
      defaultModel: async () => (await gateway.configs()).default_model,
      gateway: { baseUrl: options.gatewayUrl, channel: options.gatewayChannel, apiKey: options.apiKey, ownLogin: options.ownLogin },
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
      pricer: options.pricer ?? (() => makePricer(priceOverrides(options.priceSetting?.()), listed)),
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
      // globalStorage's runtime folder of the task (engineDirs), removed with the task.
      taskPrivateDir: (taskId) => taskLogsDir(path.join(store.directory, 'runtime'), taskId),
      pullRequests: options.pullRequests,
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
    const scheduler = new Scheduler({
      store,
      dispatcher,
      clock,
      isLeader: () => service.isLeader,
      idleTickMs: Infinity,
      ...options.schedulerTuning,
      log,
    });
    const leftovers = { runtimeDir, referenceSessionsDir };
    // The session transcript stays unless the user deleted the session too, and while a follow-up
    // shares it (docs/flows.md#cancel-delete-history, #follow-up).
    const pruneDeleted = ({
      task,
      deleteSession,
    }: {
      task: Pick<OffPeakTask, 'id' | 'sessionId'> & Partial<Pick<OffPeakTask, 'status' | 'claimRunning'>>;
      deleteSession: boolean;
    }) => {
      const shared = task.sessionId !== null && store.read((tx) => tx.followUps.sessionInUse(task.sessionId!, task.id));
      const agentElsewhere = (task.status === 'running' || task.claimRunning === true) && !stoppedHere.delete(task.id);
      pruneTaskLeftovers(leftovers, task, { deleteSession: deleteSession && !shared, agentElsewhere }, log);
      void pruneTaskWorktree(store, task.id, log);
    };
    // Cancel/Delete in another window stop the agent this window runs (through the shared DB).
    const remoteCancels = new RemoteCancelWatcher({ store, runtime, pruneDeleted, log });
    const recovery = new RecoverySweep({ store, runtimeDir, windowId, lifecycle, runtime, windows, scheduler, log });
    const engine = new HostEngine({
      store,
      gateway,
      service,
      runtime,
      scheduler,
      windows,
      keepAwake,
      proxyListener,
      remoteCancels,
      notices,
      asks,
      questions: new TaskQuestions({ store, lifecycle, relay: asks, unanswered }),
      sessions: new TaskSessions({ store, start: sessionStarter(proxyListener, options, referenceSessionsDir) }),
      recovery,
      runtimeDir,
      archive: new HistoryArchive({
        store,
        clock,
        keep: options.historyKeep,
        wasmPath: options.wasmPath,
        durable: options.storeTuning?.durable,
        log,
      }),
      away,
    });
    service.onDidWake(() => scheduler.wake());
    service.onDidDelete(pruneDeleted);
    // Merged on the forge: told once, by the window that recorded it (docs/flows.md#pull-requests).
    service.pullRequests.onDidMerge(({ taskId }) => notices.pullRequestMerged(taskId));
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
        void recovery.sweep();
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
      if (service.isLeader) void recovery.recover().then(() => scheduler.wake());
    });
    remoteCancels.start();
    notices.start();
    asks.start();
    await service.start();
    away.start();
    await windows.start();
    if (service.isLeader) await recovery.recover();
    scheduler.start();
    if (service.isLeader) void engine.archive.runIfDue(); // the first start after the upgrade archives in the background
    return engine;
  }

  /** What a task's terminal reads: its live segment in this window, its segment logs and its ledger. */
  terminalSource(): TerminalFeedSource {
    return {
      runtimeDir: this.parts.runtimeDir,
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

  /** What each recovery this window ran did, oldest first (none until it held the lease). */
  get recoveries(): readonly RecoveryReport[] {
    return this.parts.recovery.recoveries;
  }

  /** Puts tasks left running by a window that is gone back in the queue (same session): run on becoming the lease holder. */
  recover(): Promise<unknown> {
    return this.parts.recovery.recover();
  }

  /** The lease holder's tick: see RecoverySweep.sweep. */
  sweep(): Promise<unknown> {
    return this.parts.recovery.sweep();
  }

  /** Clean exit: running segments go back to the queue with their session, claims are released. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.parts.remoteCancels.dispose();
    this.notices.dispose();
    await this.scheduler.stop();
    await this.windows.stop();
    await this.parts.remoteCancels.idle();
    await this.runtime.shutdown();
    await this.runtime.questions.idle();
    await this.parts.asks.stop();
    await this.proxyListener.close();
    await this.scheduler.idle();
    await this.notices.idle();
    await this.away.dispose(); // before the lease goes: a post in flight is recorded first
    await this.service.stop();
    await this.parts.recovery.idle(); // no lease tick starts another once the service stopped
    await this.archive.close();
    this.parts.keepAwake.dispose();
    await this.store.close();
  }
}
