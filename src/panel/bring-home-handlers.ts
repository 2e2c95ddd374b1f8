// The panel's requests that bring a finished task's work home (docs/flows.md#bring-it-home):
// Merge, Apply, Discard and the worktree to open, each asked first and then done by the
// service's BringHome; "Open pull request" by its PullRequests (docs/flows.md#pull-requests);
// "Review changes" opens in VS Code.
import type { TaskService } from '../service';
import type { HistoryArchive } from '../service/history-archive';
import type { TaskStore } from '../store';
import { bringBack } from './history-panel';
import type { PanelHostBits } from './host-bits';
import type { PanelBackend } from './panel-controller';
import { taskOrThrow } from './task-handlers';
import { applyConfirmation, discardConfirmation, discardReport, mergeConfirmation } from './workplace-panel';

type BringHomeRequests =
  'discardChanges' | 'mergeChanges' | 'applyChanges' | 'openWorktree' | 'reviewChanges' | 'openPullRequest' | 'followUpFromReview';

export function bringHomeHandlers(
  service: TaskService,
  store: TaskStore,
  host: PanelHostBits,
  archive: HistoryArchive | undefined,
): Pick<PanelBackend, BringHomeRequests> {
  const { bringHome } = service;
  return {
    async discardChanges({ taskId }) {
      const plan = bringHome.discardPlan(taskId);
      if (!(await host.confirm(discardConfirmation(plan.task, plan.isolation, plan)))) return { done: false };
      return { done: true, report: discardReport(await bringHome.discard(taskId)) };
    },
    async mergeChanges({ taskId }) {
      const plan = bringHome.plan(taskId, 'merge');
      if (!(await host.confirm(mergeConfirmation(plan.task, plan.isolation, plan.check, plan.steps))))
        return { outcome: 'declined' as const };
      const result = await bringHome.merge(plan);
      if (result.outcome === 'conflict') await host.openMergeEditor?.(plan.task.workspacePath, result.files);
      return result;
    },
    async applyChanges({ taskId }) {
      const plan = bringHome.plan(taskId, 'apply');
      if (!(await host.confirm(applyConfirmation(plan.task, plan.isolation, plan.check, plan.steps)))) return { done: false };
      await bringHome.apply(plan);
      return { done: true };
    },
    openPullRequest({ taskId }) {
      return service.pullRequests.open(taskId);
    },
    async followUpFromReview({ taskId }) {
      return { taskId: (await service.pullRequests.followUpFromReview(taskId)).id };
    },
    async openWorktree({ taskId }) {
      const folder = bringHome.worktreeToOpen(taskId);
      if (!host.openFolderInNewWindow) throw new Error('Opening a window needs VS Code.');
      await host.openFolderInNewWindow(folder);
      return {};
    },
    async reviewChanges({ taskId, path }) {
      await bringBack(store, archive, taskId);
      taskOrThrow(service, taskId);
      if (!host.reviewChanges) throw new Error('Review changes needs VS Code.');
      await host.reviewChanges(taskId, path);
      return {};
    },
  };
}
