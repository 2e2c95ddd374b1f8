// Connects the panel to the task service and store. The few things only VS Code knows (the
// secret key, open folders, terminals, modal dialogs) come in through `PanelHostBits`.
import { checkViewOf } from './task-card';
import type { AnswerResult, AskDecision, PendingAsk } from '../agent/questions/asks';
import { SESSION_OPEN_HERE } from '../agent/runtime/session-terminal';
import type { DisposableLike } from '../core/disposable';
import { workspaceKeyOf, type OffPeakTask, type TicketRecord } from '../core/types';
import type { OffPeakWindow } from '../gateway-client/client';
import { ServiceError, type AvailabilityState, type TaskService } from '../service';
import { changeConcerns, type IsolationMode, type QuestionRecord, type TaskStore } from '../store';
import type { AvailabilityView, QuestionView, SegmentView, SetupView } from '../protocol/webview';
import { bypassConfirmation, cancelConfirmation, deleteConfirmation, type Confirmation } from './confirmations';
import type { PanelBackend } from './panel-controller';
import { checkWorkspaceFolder } from './create-task-command';
import { applyConfirmation, deleteWorktreeConfirmation, discardConfirmation, discardReport, FolderFits, mergeConfirmation, workplaceViews } from './workplace-panel';
import { applyTaskChanges, mergeTaskBranch, type MergeInput } from '../agent/workplace/task-merge';
import { taskLogsDir } from '../agent/runtime/segment-logs';
import path from 'node:path';
import { discardTaskWorktree } from '../engine/task-worktree-cleanup';
import type { HistoryArchive } from '../service/history-archive';
import { bringBack, historyPager } from './history-panel';
import { scheduleHandlers, scheduleRunMarks, scheduleViews } from './schedule-panel';

/** The button the user chose: the question's second one only where the host can show it. */
async function confirmChoice(host: PanelHostBits, question: Confirmation): Promise<'action' | 'alternative' | undefined> {
  if (question.alternative !== undefined && host.confirmWithAlternative) return host.confirmWithAlternative({ ...question, alternative: question.alternative });
  return (await host.confirm(question)) ? 'action' : undefined;
}

/** The part of the gateway's client configs the panel shows (exposure and plan). */
export interface PanelClientConfigs {
  exposed: boolean;
  planEligible: boolean;
  upgradeHint: string | null;
  upgradeUrl: string | null;
}

/** The permission questions agents wait on (the HostEngine is one: every window's). */
export interface PanelAskSource {
  pendingAsks(): PendingAsk[];
  /** `inputDigest`: sha256 of the input the card showed (docs/flows.md#what-a-question-shows). */
  answerAsk(taskId: string, askId: string, decision: AskDecision, inputDigest: string): AnswerResult | Promise<AnswerResult>;
  /** Fires when a question is asked or answered. */
  onAsksChange(listener: () => void): DisposableLike;
}

export interface PanelHostBits {
  hasApiKey(): Promise<boolean>;
  /** Asks for the key (a password box); resolves false when none was saved (the box was dismissed). */
  setApiKey(): Promise<unknown>;
  /** Open folders; `identity` routes a task to the window that has it open (remote windows). */
  workspaces(): { name: string; path: string; identity: string | null }[];
  models(): string[];
  /** The gateway's client configs as last loaded; undefined while unknown. */
  configs(): PanelClientConfigs | undefined;
  /** Loads the client configs again (the panel opened, or a take was refused). */
  reloadConfigs(): Promise<unknown>;
  openTerminal(taskId: string): Promise<unknown>;
  /**
   * The Session entry (docs/flows.md#open-session): what it opened. Absent: the task's terminal
   * (the transcript), as openTerminal.
   */
  openSession?(taskId: string): Promise<'interactive' | 'transcript'>;
  /** Whether the user's own Claude Code runs on this session in a terminal of this window (a follow-up must wait). */
  sessionInUseHere?(sessionId: string): boolean;
  /** Shows a modal question; true when the user chose `action`. */
  confirm(question: Confirmation): Promise<boolean>;
  /** Shows a modal question with its `alternative` as a second button: which one the user chose (absent: `confirm`, no alternative). */
  confirmWithAlternative?(question: Confirmation & { alternative: string }): Promise<'action' | 'alternative' | undefined>;
  /** The reference agent's transcript of a task that deleting its session would remove (absent: none). */
  sessionTranscript?(task: OffPeakTask): string | undefined;
  /** "Review changes" (docs/flows.md#review): the task's changes, or one file's, in the diff editor. */
  reviewChanges?(taskId: string, path?: string): Promise<unknown>;
  /** "Open worktree in new window". */
  openFolderInNewWindow?(folder: string): Promise<unknown>;
  /** A merge stopped on conflicts: the merge editor on the first conflicted file (absent: nothing opens). */
  openMergeEditor?(folder: string, files: string[]): Promise<unknown>;
  /** The machine setting `offPeak.isolation` (absent: in place, as before isolation existed). */
  isolation?(): IsolationMode;
  notice(): string | undefined;
  /** Opens the first-run walkthrough (absent: the request does nothing). */
  openWalkthrough?(): PromiseLike<unknown>;
  /** The mode, agent, credential, model API and hours line (`setupView`; absent: not shown). */
  setup?(): Promise<SetupView | undefined>;
}

const REASONS: Record<string, string> = {
  quota: 'The off-peak ticket quota is used up for now.',
  live_limit: 'You already hold as many live tickets as the gateway allows; one must finish first.',
  limit_reached: 'The gateway refused a new ticket: a limit was reached.',
  disabled: 'The gateway is not handing out off-peak tickets right now.',
  not_eligible: 'Your plan does not include off-peak tasks.',
  unavailable: 'No off-peak ticket can be taken right now.',
};

/** Adds when the closed off-peak windows open (queued tasks wait for that) to the create area's view. */
export function withOffPeakWindow(view: AvailabilityView, window: OffPeakWindow | undefined): AvailabilityView {
  return window && !window.open ? { ...view, offPeakOpensAt: window.opensAt } : view;
}

export function availabilityView(
  state: AvailabilityState,
  configs: PanelClientConfigs | undefined,
  health: { lastSuccessAt?: number; nextCheckAt?: number } = {},
): AvailabilityView {
  if (configs && !configs.exposed) {
    return { kind: 'hidden', canCreate: false, reason: 'Off-peak tasks are not available for your account yet.' };
  }
  const planLocked = (configs && !configs.planEligible) || (state.status === 'disabled' && state.reason === 'not_eligible');
  if (planLocked) {
    return {
      kind: 'plan_locked',
      canCreate: false,
      reason: REASONS.not_eligible,
      upgradeHint: configs?.upgradeHint ?? undefined,
      upgradeUrl: configs?.upgradeUrl ?? undefined,
    };
  }
  switch (state.status) {
    case 'enabled':
      return { kind: 'enabled', canCreate: true, canTakeNumber: state.canTakeNumber, lastSuccessAt: health.lastSuccessAt };
    case 'disabled':
      return {
        kind: 'limited',
        canCreate: false,
        reason: REASONS[state.reason] ?? REASONS.unavailable,
        nextTakeAt: state.nextTakeAt,
        lastSuccessAt: health.lastSuccessAt,
        nextCheckAt: health.nextCheckAt,
      };
    case 'error':
      if (state.refusedStatus !== undefined) {
        return {
          kind: 'key_refused',
          canCreate: false,
          reason: `The gateway refused the API key (${state.refusedStatus}).`,
          refusedStatus: state.refusedStatus,
          lastSuccessAt: health.lastSuccessAt,
          nextCheckAt: health.nextCheckAt,
        };
      }
      return {
        kind: 'unreachable',
        canCreate: false,
        // The service words a gateway failure as "the gateway could not be reached (…)": one sentence, not two.
        reason: state.message.startsWith('the gateway ') ? `T${state.message.slice(1)}.` : `The gateway cannot be reached (${state.message}).`,
        lastSuccessAt: health.lastSuccessAt,
        nextCheckAt: health.nextCheckAt,
      };
    case 'unknown':
      return { kind: 'checking', canCreate: false, reason: 'Checking whether a ticket can be taken…' };
  }
}

/** What saving an API key found: the gateway accepted it, refused it, or could not be asked. */
export function apiKeyCheck(state: AvailabilityState): { accepted: boolean | null; text: string } {
  switch (state.status) {
    case 'enabled':
    case 'disabled':
      return { accepted: true, text: 'The gateway accepted the API key.' };
    case 'error':
      return state.refusedStatus !== undefined
        ? { accepted: false, text: `The gateway refused the API key (${state.refusedStatus}). Check the key and set it again.` }
        : { accepted: null, text: `The API key is saved, but the gateway could not be reached to check it (${state.message}).` };
    case 'unknown':
      return { accepted: null, text: 'The API key is saved; it is checked at the next gateway answer.' };
  }
}

export function segmentView(t: TicketRecord): SegmentView {
  return {
    ordinal: t.ordinal,
    ticketId: t.ticketId,
    serverState: t.serverState,
    queuedAt: t.takenAt,
    readyAt: t.readyAt,
    admittedAt: t.activeAt,
    startedAt: t.segmentStartedAt,
    endedAt: t.segmentEndedAt,
    endReason: t.endReason,
    usage: t.usage,
  };
}

export function questionView(q: QuestionRecord): QuestionView {
  return { askId: q.askId, tool: q.tool, summary: q.summary, askedAt: q.askedAt, parkedAt: q.parkedAt, decision: q.decision, answeredBy: q.answeredBy, answeredAt: q.answeredAt };
}

/** `archive`: the history archive (docs/flows.md#archive); without it History is the task DB's rows only. */
export function createServiceBackend(service: TaskService, store: TaskStore, host: PanelHostBits, asks: PanelAskSource, archive?: HistoryArchive): PanelBackend {
  const restored = (taskId: string) => bringBack(store, archive, taskId);
  const folderFits = new FolderFits();
  // The form's check command starts as the last one used for the folder (docs/flows.md#checks).
  const withLastCheck = <T extends { path: string }>(views: T[]) =>
    views.map((view) => {
      const identity = host.workspaces().find((w) => w.path === view.path)?.identity;
      const last = store.read((tx) => tx.checks.lastCommandFor(workspaceKeyOf(view.path, identity)));
      return last ? { ...view, lastCheckCommand: last } : view;
    });
  const taskOrThrow = (taskId: string) => {
    const task = service.getTask(taskId);
    if (!task) throw new Error('This task no longer exists.');
    return task;
  };
  /** A finished task with its own worktree, not merged, applied or discarded yet: what Merge and Apply work on. */
  const bringHomeInput = (taskId: string, action: string) => {
    const task = taskOrThrow(taskId);
    const isolation = store.read((tx) => tx.isolation.get(taskId));
    if (!isolation?.worktreePath || !isolation.branch || !isolation.baseCommit || isolation.missingAt !== null || isolation.broughtHome !== null) {
      throw new Error(`This task has no branch of its own to ${action}.`);
    }
    if (!['completed', 'failed', 'cancelled'].includes(task.status)) throw new Error(`${action[0].toUpperCase()}${action.slice(1)} a task once it has finished.`);
    const input: MergeInput = {
      folder: task.workspacePath,
      worktreePath: isolation.worktreePath,
      branch: isolation.branch,
      baseCommit: isolation.baseCommit,
      message: task.title || task.prompt.split('\n')[0].slice(0, 72),
      // globalStorage's runtime folder of the task (engineDirs), removed with the task.
      privateDir: taskLogsDir(path.join(store.directory, 'runtime'), taskId),
    };
    return { task, isolation, input };
  };
  const liveHistory = () => {
    const links = store.read((tx) => tx.followUps.all());
    const reviewables = new Set([...store.read((tx) => workplaceViews(tx, service.listTasks()))].filter(([, w]) => w.reviewable).map(([id]) => id));
    return service.history().map((row) => {
      const link = links.get(row.taskId);
      const withLink = link ? { ...row, followUpOfId: link.followUpOf, followUpOfTitle: link.ofTitle } : row;
      return reviewables.has(row.taskId) ? { ...withLink, reviewable: true } : withLink;
    });
  };
  const refresh = async () => {
    await Promise.all([service.availability.refresh(), host.reloadConfigs()]);
    return {};
  };
  return {
    listTasks: () => service.listTasks(),
    ticketsByTask() {
      const byTask = new Map<string, TicketRecord[]>();
      for (const t of store.read((tx) => tx.tickets.list())) {
        const list = byTask.get(t.taskId);
        if (list) list.push(t);
        else byTask.set(t.taskId, [t]);
      }
      return byTask;
    },
    history: () => liveHistory(),
    historyPage: (params) => historyPager(store, archive, liveHistory)(params),
    historyArchived: () => archive?.hasArchive() ?? false,
    followUpLinks: () => store.read((tx) => tx.followUps.all()),
    availability: () => withOffPeakWindow(availabilityView(service.availability.state, host.configs(), service.availability.health), service.availability.offPeakWindow),
    hasApiKey: () => host.hasApiKey(),
    models: () => host.models(),
    workspaces: async () => withLastCheck(host.isolation ? await folderFits.views(host.workspaces(), host.isolation()) : host.workspaces().map(({ name, path }) => ({ name, path }))),
    workplaces: () => store.read((tx) => workplaceViews(tx, service.listTasks())),
    notice: () => host.notice(),
    setup: async () => host.setup?.(),
    schedules: (now, zone) => scheduleViews(store, now, zone),
    scheduleRuns: (now, zone) => scheduleRunMarks(store, now, zone),
    ...scheduleHandlers(service, {
      checkFolder: (workspacePath) => checkWorkspaceFolder(workspacePath, host.workspaces().map((w) => w.path)),
      identityOf: (workspacePath) => host.workspaces().find((w) => w.path === workspacePath)?.identity ?? null,
      isolationOf: async (ownBranch, workspacePath) => (host.isolation ? await folderFits.isolationOf(ownBranch, workspacePath, host.isolation()) : ownBranch ? 'worktree' : undefined),
      confirm: (question) => host.confirm(question),
    }),
    async createTask({ input }) {
      // The webview names a folder; only one open in this window, and existing, may run a task.
      const workspacePath = checkWorkspaceFolder(input.workspacePath, host.workspaces().map((w) => w.path));
      const { ownBranch, ...form } = input;
      const isolation = host.isolation ? await folderFits.isolationOf(ownBranch, workspacePath, host.isolation()) : ownBranch ? 'worktree' : undefined;
      if (input.permissionMode === 'bypassPermissions' && !(await host.confirm(bypassConfirmation(workspacePath, 'create', isolation === 'worktree' ? null : undefined)))) return { taskId: null };
      // The folder's identity comes from the host, never from the webview.
      const workspaceIdentity = host.workspaces().find((w) => w.path === workspacePath)?.identity ?? null;
      try {
        const task = await service.create({ ...form, workspacePath, workspaceIdentity, isolation });
        return { taskId: task.id };
      } catch (e) {
        // A refused take may mean the plan or the exposure changed: look again.
        void refresh().catch(() => undefined);
        // The create area shows the reason and a live countdown; the banner need not repeat a timestamp.
        if (e instanceof ServiceError && e.code === 'limit_reached') throw new Error('The gateway refused a new ticket: a limit was reached. The create button shows when you can queue again.');
        throw e;
      }
    },
    async editTask({ taskId, patch }) {
      // Switching a task to Bypass permissions asks as creating one with it does; declined, nothing changes.
      const current = taskOrThrow(taskId);
      if (patch.permissionMode === 'bypassPermissions' && current.permissionMode !== 'bypassPermissions') {
        const row = store.read((tx) => tx.isolation.get(taskId));
        if (!(await host.confirm(bypassConfirmation(current.workspacePath, 'edit', row?.mode === 'worktree' ? row.worktreePath : undefined)))) return { title: current.title, prompt: current.prompt };
      }
      const task = await service.edit(taskId, patch);
      return { title: task.title, prompt: task.prompt };
    },
    async pause({ taskId }) {
      await service.pause(taskId);
      return {};
    },
    async continue({ taskId }) {
      const { ticket, error } = await service.continue(taskId);
      return error ? { ticket, error } : { ticket };
    },
    async cancel({ taskId }) {
      if (!(await host.confirm(cancelConfirmation(taskOrThrow(taskId))))) return { done: false };
      await service.cancel(taskId);
      return { done: true };
    },
    async delete({ taskId }) {
      await restored(taskId);
      const task = service.getTask(taskId);
      const question = task && deleteConfirmation(task, host.sessionTranscript?.(task) !== undefined);
      const choice = question ? await confirmChoice(host, question) : 'action';
      if (!choice) return { done: false };
      // A worktree's branch with work merged nowhere goes with the task: asked first (docs/flows.md#isolation).
      const isolation = store.read((tx) => tx.isolation.get(taskId));
      const shared = isolation?.worktreePath ? store.read((tx) => tx.isolation.sharersOf(isolation.worktreePath!, taskId)).length : 0;
      const branchQuestion = task && (await deleteWorktreeConfirmation(task, isolation, shared));
      if (branchQuestion && !(await host.confirm(branchQuestion))) return { done: false };
      await service.delete(taskId, { deleteSession: choice === 'alternative' });
      // A copy a crash left in the archive must not bring the task back (docs/flows.md#archive).
      await archive?.forget(taskId);
      return { done: true };
    },
    async deleteHistory({ taskId }) {
      await restored(taskId);
      const { hidden, reason } = await service.deleteFromHistory(taskId);
      return reason ? { hidden, reason } : { hidden };
    },
    async openTerminal({ taskId }) {
      await restored(taskId);
      await host.openTerminal(taskId);
      return {};
    },
    async openSession({ taskId }) {
      await restored(taskId);
      taskOrThrow(taskId);
      if (host.openSession) return { opened: await host.openSession(taskId) };
      await host.openTerminal(taskId);
      return { opened: 'transcript' as const };
    },
    async followUp({ taskId, prompt, title, permissionMode }) {
      await restored(taskId);
      const of = taskOrThrow(taskId);
      if (of.sessionId && host.sessionInUseHere?.(of.sessionId)) {
        throw new Error(SESSION_OPEN_HERE);
      }
      const mode = permissionMode ?? of.permissionMode;
      // A follow-up runs where the task it continues ran: in its worktree, if it had one.
      const row = store.read((tx) => tx.isolation.get(taskId));
      if (mode === 'bypassPermissions' && !(await host.confirm(bypassConfirmation(of.workspacePath, 'create', row?.mode === 'worktree' ? row.worktreePath : undefined)))) return { taskId: null };
      try {
        const task = await service.followUp(taskId, { prompt, title, permissionMode: mode });
        return { taskId: task.id };
      } catch (e) {
        void refresh().catch(() => undefined);
        throw e;
      }
    },
    async discardChanges({ taskId }) {
      const task = taskOrThrow(taskId);
      const isolation = store.read((tx) => tx.isolation.get(taskId));
      if (!isolation?.worktreePath) throw new Error('This task has no branch of its own to discard.');
      if (!(await host.confirm(discardConfirmation(task, isolation)))) return { done: false };
      return { done: true, report: discardReport(await discardTaskWorktree(store, taskId)) };
    },
    async mergeChanges({ taskId }) {
      const { task, isolation, input } = bringHomeInput(taskId, 'merge');
      if (!(await host.confirm(mergeConfirmation(task, isolation, store.read((tx) => tx.checks.get(taskId)))))) return { outcome: 'declined' as const };
      const result = await mergeTaskBranch(input);
      if (result.kind === 'refused') throw new Error(`Not merged: ${result.reason}`);
      if (result.kind === 'conflict') {
        await host.openMergeEditor?.(task.workspacePath, result.files);
        return { outcome: 'conflict' as const, into: result.into, files: result.files };
      }
      await store.mutate((tx) => tx.isolation.recordBroughtHome(taskId, 'merged'));
      return { outcome: 'merged' as const, into: result.into };
    },
    async applyChanges({ taskId }) {
      const { task, isolation, input } = bringHomeInput(taskId, 'apply');
      if (!(await host.confirm(applyConfirmation(task, isolation, store.read((tx) => tx.checks.get(taskId)))))) return { done: false };
      const result = await applyTaskChanges(input);
      if (result.kind === 'refused') throw new Error(`Not applied: ${result.reason}`);
      await store.mutate((tx) => tx.isolation.recordBroughtHome(taskId, 'applied'));
      return { done: true };
    },
    async openWorktree({ taskId }) {
      taskOrThrow(taskId);
      const isolation = store.read((tx) => tx.isolation.get(taskId));
      if (!isolation?.worktreePath || isolation.missingAt !== null || isolation.broughtHome !== null) throw new Error("This task's worktree is not there.");
      if (!host.openFolderInNewWindow) throw new Error('Opening a window needs VS Code.');
      await host.openFolderInNewWindow(isolation.worktreePath);
      return {};
    },
    async reviewChanges({ taskId, path }) {
      await restored(taskId);
      taskOrThrow(taskId);
      if (!host.reviewChanges) throw new Error('Review changes needs VS Code.');
      await host.reviewChanges(taskId, path);
      return {};
    },
    async segments({ taskId }) {
      return { segments: service.ticketsOf(taskId).map(segmentView) };
    },
    async questions({ taskId }) {
      return { questions: store.read((tx) => tx.questions.forTask(taskId)).map(questionView) };
    },
    refusals: () => store.read((tx) => tx.questions.denials()),
    allowedNotRun: () => store.read((tx) => tx.questions.allowedNotRun()),
    checks: () => new Map([...store.read((tx) => tx.checks.all())].map(([taskId, check]) => [taskId, checkViewOf(check)])),
    async answerAsk({ taskId, askId, decision, inputDigest }) {
      return { outcome: await asks.answerAsk(taskId, askId, decision, inputDigest) };
    },
    pendingAsks: () => asks.pendingAsks(),
    unseenTaskIds: () => new Set(store.read((tx) => tx.outcomes.unseen())),
    lastSeenAt: () => store.read((tx) => tx.outcomes.lastSeenAt()),
    async markSeen({ taskIds }) {
      return { marked: await store.mutate((tx) => tx.outcomes.markSeen(taskIds)) };
    },
    async setApiKey() {
      if ((await host.setApiKey()) === false) return { saved: false };
      return { saved: true, check: apiKeyCheck(await service.availability.recheck()) };
    },
    refresh,
    async openWalkthrough() {
      await host.openWalkthrough?.();
      return {};
    },
    onDidChange(listener): DisposableLike {
      const fire = () => listener();
      // Only what the panel shows: a window registering or a backoff record pushes nothing.
      const storeSub = store.onDidChange((change) => {
        if (changeConcerns(change, 'tasks', 'tickets', 'outcomes', 'questions')) listener();
      });
      const availabilitySub = service.availability.onDidChange(fire);
      const syncSub = service.onDidSync(fire);
      // Only a question asked or answered changes what the cards show of asks; other runtime events do not push.
      const asksSub = asks.onAsksChange(fire);
      return {
        dispose() {
          asksSub.dispose();
          storeSub.dispose();
          availabilitySub.dispose();
          syncSub.dispose();
        },
      };
    },
  };
}
