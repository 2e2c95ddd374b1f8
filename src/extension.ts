// Composition root: the only place that wires VS Code to the vscode-free core. Activation
// registers everything synchronously and starts the engine (store, service, scheduler, runtime)
// in the background, so a slow disk or an unreachable gateway never delays VS Code. The engine's
// code (sql.js and its wasm, the gateway client, the agent runtime) is not even loaded until
// then, nor is the panel's until the panel is first needed: both are imported dynamically, and
// the build puts them in dist/engine.js (personal mode's authority in dist/personal.js), which
// Node loads on first use (scripts/host-bundles.mjs, docs/architecture.md#lazy-bundles).
import path from 'node:path';
import * as vscode from 'vscode';
import { systemClock } from './core/clock';
import { newToken } from './core/ids';
import { SerialRestarts } from './core/serial-restarts';
import { shortTaskTitle } from './core/task-title';
import { workspaceKeyOf } from './core/types';
import type { HostEngine } from './engine/host-engine';
import { TaskAuditLog } from './engine/task-audit';
import { modelChoices } from './panel/model-choices';
import type { PanelClientConfigs } from './panel/host-bits';
import type { PanelBackend } from './panel/panel-controller';
import { hostStatusView, storeStatusTasks } from './panel/task-summary';
import { accountUsageLimitResetAt } from './panel/task-card';
import { ApiKeyStore } from './vscode/api-key';
import { registerCommands } from './vscode/commands';
import { registerSessionCommands, SessionTerminals } from './vscode/session-commands';
import { onDidOpenReview, registerReview, reviewTaskChanges } from './vscode/review';
import { Notifier } from './vscode/notifier';
import { DesktopNotifications } from './vscode/desktop-notifications';
import { NotifyTargetStore, readNotifySettings, registerNotifyCommands } from './vscode/notify-commands';
import type { TasksPanel } from './vscode/panel';
import { checkSettings, engineAgent, readSettings } from './vscode/settings';
import { TaskStatusBar } from './vscode/status-bar';
import { TaskTerminals } from './vscode/task-terminals';
import { openWorkspaces } from './vscode/workspaces';
import type { LocalAuthority } from './personal/local-authority';
import {
  importHandedOverModelKey,
  loginFailedAt,
  missingModelKeyNotice,
  modelKeyRefusals,
  modelKeyStore,
  ownLoginOf,
  ownModelOf,
  panelSetup,
  registerModelKeyCommands,
  startPersonalAuthority,
} from './vscode/personal-mode';
import { registerOpenSetting, WalkthroughContext } from './vscode/walkthrough';
import { vscodePanelHost } from './vscode/panel-host';
import { forgeToken } from './vscode/forge-auth';

/** What the extension exposes to its own integration tests (and nothing else relies on). */
export interface OffPeakApi {
  engine(): HostEngine | undefined;
  whenStarted(): Promise<HostEngine | undefined>;
  /** Engines started and not disposed: never more than one. */
  liveEngines(): number;
  storageDir: string;
}

let current: OffPeakExtension | undefined;

export function activate(context: vscode.ExtensionContext): OffPeakApi {
  current = new OffPeakExtension(context);
  context.subscriptions.push(current);
  return current.api;
}

export async function deactivate(): Promise<void> {
  // Running segments go back to the queue with their session; claims are released.
  await current?.stopEngines();
}

class OffPeakExtension implements vscode.Disposable {
  private engine: HostEngine | undefined;
  /** The engine across setting changes: restarts one at a time, never two engines (docs/architecture.md#personal-mode). */
  private readonly engines: SerialRestarts<HostEngine>;
  private backend: PanelBackend | undefined;
  private storeNotice: string | undefined;
  /** Personal mode: why the local authority cannot run right now (a take-over that keeps failing). */
  private authorityProblem: string | undefined;
  /** The other mode's unfinished tasks, which wait in their own queue (docs/architecture.md#personal-mode). */
  private otherQueue: string | undefined;
  /** Personal mode: the chosen agent needs the model API key and none is set. */
  private personalNotice: string | undefined;
  private allowedModels: string[] = [];
  private clientConfigs: PanelClientConfigs | undefined;
  /** Results no panel in any window has shown yet (status bar and the panel's tab title). */
  private unseenResults = 0;
  /** The first-run walkthrough's context keys (docs/flows.md#first-run). */
  private readonly walkthrough: WalkthroughContext;
  /** The usage-limit reset last notified (one notification per reset). */
  private usageLimitNotified: number | undefined;
  private readonly windowId = `window-${process.pid}-${newToken().slice(0, 8)}`;
  private readonly output = vscode.window.createOutputChannel('Off-Peak Tasks', { log: true });
  /** Each task's lifecycle in the Output channel (a night can be audited in the morning). */
  private readonly audit = new TaskAuditLog((line) => this.output.info(line));
  private readonly apiKey: ApiKeyStore;
  /** Personal mode's model API key (SecretStorage). */
  private readonly modelKey: ApiKeyStore;
  /** The model API refused the model key when asked for its list: said once per model API and key. */
  private readonly keyRefusals = modelKeyRefusals();
  /** Personal mode: the local authority this window runs or follows. */
  private authority: LocalAuthority | undefined;
  private panelInstance: TasksPanel | undefined;
  private readonly terminals: TaskTerminals;
  private readonly sessions: SessionTerminals;
  private readonly statusBar: TaskStatusBar;
  private readonly notifier: Notifier;
  /** Where away notifications go (SecretStorage; docs/flows.md#away-notifications). */
  private readonly notifyTargets: NotifyTargetStore;
  /** When no VS Code window has focus, a question or result also shows as an OS notification (docs/flows.md#desktop-notifications). */
  private readonly desktop: DesktopNotifications;
  private readonly storageDir: string;
  readonly api: OffPeakApi;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.storageDir = context.globalStorageUri.fsPath;
    this.walkthrough = new WalkthroughContext(context.extension);
    registerOpenSetting(context);
    this.apiKey = new ApiKeyStore(context.secrets);
    this.modelKey = modelKeyStore(context.secrets);
    registerModelKeyCommands(context, this.modelKey);
    this.notifyTargets = new NotifyTargetStore(context.secrets);
    registerNotifyCommands(context, this.notifyTargets, (l) => this.output.info(l));
    const recheckModelKey = async () => {
      this.keyRefusals.keyChanged();
      this.personalNotice = await missingModelKeyNotice(this.modelKey);
      this.panelInstance?.refresh();
      await this.updateWalkthrough();
      // A key set or changed: the model API may now list (other) models.
      await this.loadClientConfigs();
    };
    context.subscriptions.push(
      this.modelKey.onDidChange(() => void recheckModelKey()),
      vscode.workspace.onDidChangeConfiguration(
        (e) =>
          ['offPeak.agent', 'offPeak.claudeCodePath', 'offPeak.personal.modelCredential'].some((k) => e.affectsConfiguration(k)) &&
          void recheckModelKey(),
      ),
    );
    this.terminals = new TaskTerminals(() => this.engine?.terminalSource());
    this.statusBar = new TaskStatusBar();
    this.notifier = new Notifier({
      showPanel: () => this.panel.show(),
      showTerminal: (taskId, title) => this.terminals.show(taskId, title),
      answerAsk: async (taskId, askId, decision, inputDigest) =>
        (await this.engine?.questions.answerAsk(taskId, askId, decision, inputDigest)) === 'accepted',
    });
    this.desktop = new DesktopNotifications(this.storageDir, this.windowId, (l) => this.output.info(l));
    context.subscriptions.push(this.notifier, this.desktop);
    this.api = {
      engine: () => this.engine,
      whenStarted: () => this.engines.whenStarted(),
      liveEngines: () => this.engines.liveCount,
      storageDir: this.storageDir,
    };

    const panel = () => this.panel;
    registerCommands(context, {
      get panel() {
        return panel();
      },
      apiKey: this.apiKey,
      engine: () => this.engine,
      whenStarted: () => this.api.whenStarted(),
      terminals: this.terminals,
      models: () => this.allowedModels,
      personal: () => this.authority !== undefined,
    });
    const sessions = new SessionTerminals(this.terminals);
    this.sessions = sessions;
    context.subscriptions.push(sessions);
    registerSessionCommands(context, {
      whenStarted: () => this.api.whenStarted(),
      terminals: this.terminals,
      sessions,
      showPanel: () => void this.panel.show(),
    });
    registerReview(
      context,
      () => this.api.whenStarted(),
      () => this.engine,
    );
    context.subscriptions.push(
      this.output,
      this.apiKey,
      this.modelKey,
      { dispose: () => this.panelInstance?.dispose() },
      this.terminals,
      this.statusBar,
      this.apiKey.onDidChange(() => {
        // A key was set: the availability snapshot and the sync can proceed now.
        void this.engine?.service.availability.refresh();
        this.panelInstance?.refresh();
        void this.loadClientConfigs();
        void this.updateWalkthrough();
      }),
      // A window reload brings the panel back where it was (its webview keeps scroll and expanded cards).
      vscode.window.registerWebviewPanelSerializer('offPeak.tasks', {
        deserializeWebviewPanel: async (webviewPanel) => this.panel.restore(webviewPanel),
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.engine?.windows.workspacesChanged()),
      onDidOpenReview(() => (this.walkthrough.noteReviewed(), void this.updateWalkthrough())),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (['offPeak.gatewayUrl', 'offPeak.mode', 'offPeak.personal'].some((s) => e.affectsConfiguration(s))) this.restartEngine();
      }),
    );
    this.engines = new SerialRestarts(
      () => this.startEngine(),
      (engine) => this.stopEngine(engine),
      (e: unknown) => this.output.error(`restart: ${e instanceof Error ? e.message : String(e)}`),
    );
  }

  /** The panel, created when first shown (a synchronous require: commands show it at once). */
  private get panel(): TasksPanel {
    if (!this.panelInstance) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { TasksPanel } = require('./vscode/panel') as typeof import('./vscode/panel');
      this.panelInstance = new TasksPanel(
        this.context.extensionUri,
        () => this.backend,
        systemClock,
        (l) => this.output.info(l),
      );
      this.panelInstance.setUnseenResults(this.unseenResults);
    }
    return this.panelInstance;
  }

  private async startEngine(): Promise<HostEngine | undefined> {
    const settings = readSettings();
    const dist = path.join(this.context.extensionPath, 'dist');
    try {
      // A macrotask first: a microtask would still run before VS Code records activate() as done.
      await new Promise((resolve) => setImmediate(resolve));
      const [{ HostEngine }, { createServiceBackend }, { otherQueueNotice, personalTasksDir }] = await Promise.all([
        import('./engine/host-engine'),
        import('./panel/service-backend'),
        import('./personal/other-queue'),
      ]);
      // A key `npm start -- --personal` handed over: in this window's SecretStorage before anything reads it.
      await importHandedOverModelKey(this.storageDir, this.modelKey, (l) => this.output.info(l));
      // Personal mode: this machine's local authority (started here, or another window's).
      const personal =
        settings.mode === 'personal'
          ? await startPersonalAuthority({
              storageDir: this.storageDir,
              wasmPath: path.join(dist, 'sql-wasm.wasm'),
              modelKey: this.modelKey,
              log: (l) => this.output.info(l),
              onProblem: (problem) => {
                this.authorityProblem = problem;
                this.panelInstance?.refresh();
              },
            })
          : undefined;
      this.authority = personal;
      // The two modes' queues never mix: personal mode's tasks have a database of their own.
      const engine = await HostEngine.start({
        storageDir: personal ? personalTasksDir(this.storageDir) : this.storageDir,
        gatewayUrl: personal?.url ?? settings.gatewayUrl,
        gatewayChannel: personal?.connect,
        apiKey: personal ? async () => personal.key : () => this.apiKey.get(),
        ownLogin: personal ? ownLoginOf : undefined,
        clock: systemClock,
        windowId: this.windowId,
        workspaceKeys: () => openWorkspaces().map((w) => workspaceKeyOf(w.path, w.identity)),
        // The agent of each new task (docs/flows.md#which-agent), and how to start Claude Code.
        ...engineAgent(),
        referenceAgent: {
          // The extension host's own runtime runs the bundled agent (ELECTRON_RUN_AS_NODE is set by the adapter).
          command: process.execPath,
          argsPrefix: [path.join(dist, 'reference-agent.js')],
        },
        ownModel: personal ? ownModelOf(this.modelKey) : undefined,
        // Claude Code (headless) asks through this MCP server; Claude Code starts it with the same runtime.
        permissionRelay: { command: process.execPath, args: [path.join(dist, 'permission-mcp.js')] },
        // Read at each question and launch: a change applies without a reload.
        askTimeoutMs: () => readSettings().askTimeoutMinutes * 60_000,
        unansweredQuestion: () => readSettings().unansweredQuestion,
        askParkMs: () => readSettings().askParkMinutes * 60_000,
        checks: checkSettings(),
        claudeSettingSources: () => readSettings().claudeCodeSettingSources,
        keepAwake: () => readSettings().keepAwake,
        // Open pull request: the settings at each use, the token from VS Code's GitHub session.
        pullRequests: { settings: () => readSettings().pullRequest, token: forgeToken },
        wasmPath: path.join(dist, 'sql-wasm.wasm'),
        historyKeep: () => readSettings().history,
        onRuntimeEvent: (event) => {
          const task = this.engine?.service.getTask(event.taskId);
          this.audit.runtimeEvent(event, task);
          // Answered anywhere (the first answer reaches this runtime), timed out or ended: its notification closes.
          if (event.type === 'input-answered') return this.notifier.questionClosed(event.ask.id);
          if (event.type !== 'segment-started') return;
          this.terminals.attach(event.taskId, shortTaskTitle(task, event.taskId));
        },
        onNotice: (notice) => {
          this.notifier.show(notice);
          this.desktop.raise(notice);
        },
        // Sent by the lease holder, once across windows; the target and settings read at each send.
        notify: {
          target: () => this.notifyTargets.get(),
          enabled: () => this.notifyTargets.isSet,
          include: () => readNotifySettings().include,
          quietHours: () => readNotifySettings().quietHours,
          presence: () => this.desktop.anyWindowFocused(),
        },
        onStoreNotice: (notice) => {
          this.output.warn(notice.message);
          if (notice.kind === 'corrupt-moved-aside') this.storeNotice = notice.message;
          // A disk that keeps failing is shown too (the store raises it at most once a minute).
          if (notice.kind === 'corrupt-moved-aside' || notice.kind === 'io-error')
            void vscode.window.showWarningMessage(`Off-Peak Tasks: ${notice.message}`);
        },
        log: (line) => this.output.info(line),
      });
      this.engine = engine;
      this.backend = createServiceBackend(
        engine.service,
        engine.store,
        {
          ...vscodePanelHost(),
          hasApiKey: () => (personal ? Promise.resolve(true) : this.apiKey.has()),
          setApiKey: () => this.apiKey.prompt(),
          models: () => this.allowedModels,
          configs: () => this.clientConfigs,
          reloadConfigs: () => this.loadClientConfigs(),
          sessionTranscript: (task) => engine.deletableTranscript(task),
          openTerminal: async (taskId) => {
            const task = engine.service.getTask(taskId);
            this.terminals.show(taskId, shortTaskTitle(task, taskId));
          },
          openSession: async (taskId) => this.sessions.show(engine, taskId),
          sessionInUseHere: (sessionId) => this.sessions.inUse(sessionId),
          reviewChanges: (taskId, file) => reviewTaskChanges(engine, taskId, file),
          notice: () => this.storeNotice ?? this.authorityProblem ?? this.personalNotice ?? this.otherQueue,
          setup: () => panelSetup(this.modelKey, Date.now(), loginFailedAt(engine.service.listTasks())),
        },
        engine.questions,
        engine.archive,
      );
      const refreshStatus = () => {
        const { unseen, lastSeenAt } = engine.store.read((tx) => ({ unseen: tx.outcomes.unseen(), lastSeenAt: tx.outcomes.lastSeenAt() }));
        this.unseenResults = unseen.length;
        const tasks = engine.service.listTasks();
        this.audit.tasks(tasks);
        const asks = engine.questions.pendingAsks();
        const now = Date.now();
        const limitAt = accountUsageLimitResetAt(tasks, (id) => engine.service.ticketsOf(id), now);
        const summarized = engine.store.read((tx) => storeStatusTasks(tx, tasks));
        this.statusBar.update(hostStatusView(summarized, asks, unseen, lastSeenAt, limitAt === null ? null : { resetAt: limitAt, now }));
        // Once per reset, from one window (the lease holder): when held tasks resume (docs/flows.md#usage-limits).
        if (limitAt !== null && limitAt !== this.usageLimitNotified && engine.service.isLeader) {
          this.usageLimitNotified = limitAt;
          const at = new Date(limitAt).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
          void vscode.window.showInformationMessage(`Off-Peak Tasks: the account's usage limit is reached; held tasks resume at ${at}.`);
        }
        // A question answered anywhere (a parked one included) closes its notification here too.
        this.notifier.questionsStillOpen(new Set(asks.map((a) => a.id)));
        // A deleted task (here or in another window) takes its terminal along.
        this.terminals.retainOnly(new Set(tasks.map((t) => t.id)));
        this.panelInstance?.setUnseenResults(this.unseenResults);
        void this.updateWalkthrough();
      };
      const sub = engine.store.onDidChange((change) => {
        // not a renewal, a window, a backoff; a result shown in another window's panel counts
        // (and a ledger change: the account's usage limit, docs/flows.md#usage-limits)
        if (change.topics.has('tasks') || change.topics.has('outcomes') || change.topics.has('tickets')) refreshStatus();
      });
      // A question asked or answered in any window: "N need input" comes and goes with it.
      const asksSub = engine.questions.onAsksChange(refreshStatus);
      this.context.subscriptions.push({ dispose: () => sub.dispose() }, { dispose: () => asksSub.dispose() });
      refreshStatus();
      this.personalNotice = await missingModelKeyNotice(this.modelKey);
      this.otherQueue = await otherQueueNotice(this.storageDir, settings.mode, path.join(dist, 'sql-wasm.wasm'));
      this.panelInstance?.reconnect();
      void engine.service.availability.refresh();
      void this.loadClientConfigs();
      this.output.info(
        `started: ${personal ? `personal mode, local authority ${personal.socketPath}${personal.serving ? ' (run by this window)' : ''}` : `gateway ${settings.gatewayUrl}`}, storage ${this.storageDir}, leader ${engine.service.isLeader}`,
      );
      return engine;
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      this.output.error(`could not start: ${message}`);
      void vscode.window.showErrorMessage(`Off-Peak Tasks could not start: ${message}`);
      return undefined;
    }
  }

  /** Completes the walkthrough's steps from the real state (after every change the panel would show). */
  private async updateWalkthrough(): Promise<void> {
    const failedAt = loginFailedAt(this.engine?.service.listTasks() ?? []);
    this.walkthrough.refresh(this.engine, await panelSetup(this.modelKey, Date.now(), failedAt), await this.apiKey.has());
  }

  /** The gateway's client configs (exposure and plan for the panel) and the models it serves (the form's Model list). */
  private async loadClientConfigs(): Promise<void> {
    const gateway = this.engine?.gateway;
    if (!gateway) return;
    const configs = await gateway.configs().catch((e: unknown) => {
      this.output.info(`client configs unavailable: ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    });
    this.allowedModels = await modelChoices(gateway, configs, (status) => this.keyRefusals.refused(status));
    if (configs) {
      this.clientConfigs = {
        exposed: configs.exposure.enabled,
        planEligible: configs.plan.eligible,
        upgradeHint: configs.plan.upgrade_hint,
        upgradeUrl: configs.plan.upgrade_url,
      };
    }
    this.panelInstance?.refresh();
  }

  private restartEngine(): void {
    this.engines.restart();
  }

  /** Stops for good (deactivation), after a restart under way. */
  async stopEngines(): Promise<void> {
    await this.engines.stopAll();
  }

  private async stopEngine(engine: HostEngine | undefined): Promise<void> {
    this.engine = undefined;
    this.backend = undefined;
    // The old gateway's exposure and plan say nothing about the next one.
    this.clientConfigs = undefined;
    await engine?.dispose().catch((e: unknown) => this.output.error(`stop: ${e instanceof Error ? e.message : String(e)}`));
    // Last: another window takes the authority over (docs/architecture.md#personal-mode).
    const authority = this.authority;
    this.authority = undefined;
    this.authorityProblem = undefined;
    await authority?.dispose().catch((e: unknown) => this.output.error(`stop: ${e instanceof Error ? e.message : String(e)}`));
  }

  dispose(): void {
    void this.stopEngines();
  }
}
