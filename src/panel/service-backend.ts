// Connects the panel to the task service and store: the reads a snapshot is made of, and each
// request mapped to the service (the task actions in task-handlers.ts, bringing work home in
// bring-home-handlers.ts, schedules in schedule-panel.ts). What only VS Code knows comes in
// through `PanelHostBits` (host-bits.ts); the questions of every window through `PanelAskSource`.
import { checkViewOf } from './task-card';
import type { DisposableLike } from '../core/disposable';
import { workspaceKeyOf, type TicketRecord } from '../core/types';
import type { TaskService } from '../service';
import { changeConcerns, type TaskStore } from '../store';
import type { PanelBackend } from './panel-controller';
import { checkWorkspaceFolder } from './create-task-command';
import { FolderFits, workplaceViews } from './workplace-panel';
import type { HistoryArchive } from '../service/history-archive';
import { historyPager } from './history-panel';
import { scheduleHandlers, scheduleRunMarks, scheduleViews } from './schedule-panel';
import type { PanelAskSource, PanelHostBits } from './host-bits';
import { apiKeyCheck, availabilityView, questionView, segmentView, withOffPeakWindow } from './service-views';
import { taskHandlers } from './task-handlers';
import { bringHomeHandlers } from './bring-home-handlers';

/** `archive`: the history archive (docs/flows.md#archive); without it History is the task DB's rows only. */
export function createServiceBackend(
  service: TaskService,
  store: TaskStore,
  host: PanelHostBits,
  asks: PanelAskSource,
  archive?: HistoryArchive,
): PanelBackend {
  const folderFits = new FolderFits((folder) => service.bringHome.fit(folder));
  // The form's check command starts as the last one used for the folder (docs/flows.md#checks).
  const withLastCheck = <T extends { path: string }>(views: T[]) =>
    views.map((view) => {
      const identity = host.workspaces().find((w) => w.path === view.path)?.identity;
      const last = store.read((tx) => tx.checks.lastCommandFor(workspaceKeyOf(view.path, identity)));
      return last ? { ...view, lastCheckCommand: last } : view;
    });
  const liveHistory = () => {
    const links = store.read((tx) => tx.followUps.all());
    const reviewables = new Set(
      [...store.read((tx) => workplaceViews(tx, service.listTasks()))].filter(([, w]) => w.reviewable).map(([id]) => id),
    );
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
    availability: () =>
      withOffPeakWindow(
        availabilityView(service.availability.state, host.configs(), service.availability.health),
        service.availability.offPeakWindow,
      ),
    hasApiKey: () => host.hasApiKey(),
    models: () => host.models(),
    workspaces: async () =>
      withLastCheck(
        host.isolation
          ? await folderFits.views(host.workspaces(), host.isolation())
          : host.workspaces().map(({ name, path }) => ({ name, path })),
      ),
    workplaces: () => store.read((tx) => workplaceViews(tx, service.listTasks())),
    notice: () => host.notice(),
    reserve: () => host.reserve?.() ?? null,
    setup: async () => host.setup?.(),
    schedules: (now, zone) => scheduleViews(store, now, zone),
    scheduleRuns: (now, zone) => scheduleRunMarks(store, now, zone),
    ...scheduleHandlers(service, {
      checkFolder: (workspacePath) =>
        checkWorkspaceFolder(
          workspacePath,
          host.workspaces().map((w) => w.path),
        ),
      identityOf: (workspacePath) => host.workspaces().find((w) => w.path === workspacePath)?.identity ?? null,
      isolationOf: async (ownBranch, workspacePath) =>
        host.isolation ? await folderFits.isolationOf(ownBranch, workspacePath, host.isolation()) : ownBranch ? 'worktree' : undefined,
      confirm: (question) => host.confirm(question),
    }),
    ...taskHandlers({ service, store, host, archive, folderFits, refresh, uncommitted: (folder) => service.bringHome.uncommitted(folder) }),
    ...bringHomeHandlers(service, store, host, archive),
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
      return { marked: await service.markSeen(taskIds) };
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
