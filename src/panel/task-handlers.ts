// The panel's requests that act on a task, each mapped to one call of the service (task-actions,
// follow-ups, sessions): the checks of what the webview sent and the questions asked first stay
// here, the action itself is the service's.
import { ServiceError, refuseFollowUpWhileOpen, type TaskService } from '../service';
import type { HistoryArchive } from '../service/history-archive';
import type { TaskStore } from '../store';
import { bypassConfirmation, cancelConfirmation, deleteConfirmation } from './confirmations';
import { checkWorkspaceFolder } from './create-task-command';
import { bringBack } from './history-panel';
import { confirmChoice, type PanelHostBits } from './host-bits';
import type { PanelBackend } from './panel-controller';
import { uncommittedConfirmation } from './uncommitted-notice';
import { deleteWorktreeConfirmation, type FolderFits } from './workplace-panel';

type TaskRequests =
  'createTask' | 'editTask' | 'pause' | 'continue' | 'cancel' | 'delete' | 'deleteHistory' | 'openTerminal' | 'openSession' | 'followUp';

/** What the task handlers share with the rest of the backend. */
export interface TaskHandlerContext {
  service: TaskService;
  store: TaskStore;
  host: PanelHostBits;
  archive: HistoryArchive | undefined;
  folderFits: FolderFits;
  /** Loads availability and the client configs again (a refused take may mean they changed). */
  refresh(): Promise<unknown>;
  /** The folder's uncommitted files (a task on its own branch will not see them); null: unknown. */
  uncommitted?(folder: string): Promise<string[] | null>;
}

export function taskOrThrow(service: TaskService, taskId: string) {
  const task = service.getTask(taskId);
  if (!task) throw new Error('This task no longer exists.');
  return task;
}

export function taskHandlers({
  service,
  store,
  host,
  archive,
  folderFits,
  refresh,
  uncommitted,
}: TaskHandlerContext): Pick<PanelBackend, TaskRequests> {
  const restored = (taskId: string) => bringBack(store, archive, taskId);
  return {
    async createTask({ input }) {
      // The webview names a folder; only one open in this window, and existing, may run a task.
      const workspacePath = checkWorkspaceFolder(
        input.workspacePath,
        host.workspaces().map((w) => w.path),
      );
      const { ownBranch, ...form } = input;
      let isolation = host.isolation
        ? await folderFits.isolationOf(ownBranch, workspacePath, host.isolation())
        : ownBranch
          ? 'worktree'
          : undefined;
      // A new branch starts from the last commit: said first when the folder holds more (a chained step continues its branch).
      const notice =
        isolation === 'worktree' && !(input.afterTaskId && input.continueInBranch)
          ? uncommittedConfirmation((await uncommitted?.(workspacePath).catch(() => null)) ?? null)
          : undefined;
      if (notice) {
        const choice = await confirmChoice(host, notice);
        if (choice === undefined) return { taskId: null };
        if (choice === 'alternative') isolation = 'inPlace';
      }
      if (
        input.permissionMode === 'bypassPermissions' &&
        !(await host.confirm(bypassConfirmation(workspacePath, 'create', isolation === 'worktree' ? null : undefined)))
      )
        return { taskId: null };
      // The folder's identity comes from the host, never from the webview.
      const workspaceIdentity = host.workspaces().find((w) => w.path === workspacePath)?.identity ?? null;
      try {
        const task = await service.create({ ...form, workspacePath, workspaceIdentity, isolation });
        return { taskId: task.id };
      } catch (e) {
        // A refused take may mean the plan or the exposure changed: look again.
        void refresh().catch(() => undefined);
        // The create area shows the reason and a live countdown; the banner need not repeat a timestamp.
        if (e instanceof ServiceError && e.code === 'limit_reached')
          throw new Error('The gateway refused a new ticket: a limit was reached. The create button shows when you can queue again.');
        throw e;
      }
    },
    async editTask({ taskId, patch }) {
      // Switching a task to Bypass permissions asks as creating one with it does; declined, nothing changes.
      const current = taskOrThrow(service, taskId);
      if (patch.permissionMode === 'bypassPermissions' && current.permissionMode !== 'bypassPermissions') {
        const row = store.read((tx) => tx.isolation.get(taskId));
        if (
          !(await host.confirm(bypassConfirmation(current.workspacePath, 'edit', row?.mode === 'worktree' ? row.worktreePath : undefined)))
        )
          return { title: current.title, prompt: current.prompt };
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
      if (!(await host.confirm(cancelConfirmation(taskOrThrow(service, taskId))))) return { done: false };
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
      const branchQuestion = task && deleteWorktreeConfirmation(task, await service.bringHome.workLostByDelete(task));
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
      taskOrThrow(service, taskId);
      if (host.openSession) return { opened: await host.openSession(taskId) };
      await host.openTerminal(taskId);
      return { opened: 'transcript' as const };
    },
    async followUp({ taskId, prompt, title, permissionMode }) {
      await restored(taskId);
      const of = taskOrThrow(service, taskId);
      refuseFollowUpWhileOpen(of, host.sessionInUseHere);
      const mode = permissionMode ?? of.permissionMode;
      // A follow-up runs where the task it continues ran: in its worktree, if it had one.
      const row = store.read((tx) => tx.isolation.get(taskId));
      if (
        mode === 'bypassPermissions' &&
        !(await host.confirm(bypassConfirmation(of.workspacePath, 'create', row?.mode === 'worktree' ? row.worktreePath : undefined)))
      )
        return { taskId: null };
      try {
        const task = await service.followUp(taskId, { prompt, title, permissionMode: mode });
        return { taskId: task.id };
      } catch (e) {
        void refresh().catch(() => undefined);
        throw e;
      }
    },
  };
}
