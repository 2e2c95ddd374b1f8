// History beyond the snapshot's first page (docs/flows.md#archive): pages of the task DB's and the
// archive's rows, the filter box's search, and archived tasks brought back before an action.
import { matchesHistoryFilter, type HistoryRow } from '../core/history';
import type { TicketRecord } from '../core/types';
import { totalUsage } from '../core/usage';
import type { HistoryArchive } from '../service/history-archive';
import type { FollowUpLink, TaskStore } from '../store';
import type { AllowedNotRunView, HistoryRowView, PanelParams, PanelResult, RefusalCount } from '../protocol/webview';
import { reviewable } from './workplace-panel';
import { checkViewOf } from './task-card';
import type { CheckView } from '../protocol/check-view';

/** The task DB's History rows as the snapshot shows them (follow-up link, Review), newest first. */
export type LiveHistory = () => (HistoryRow & Partial<Pick<HistoryRowView, 'followUpOfId' | 'followUpOfTitle' | 'reviewable'>>)[];

/** A History row as the panel shows it: its tokens summed from its ledger rows, what it was refused, and an allowed action that did not run. */
export function historyRowView(
  row: HistoryRow & Partial<HistoryRowView>,
  tickets: readonly TicketRecord[],
  refusals: RefusalCount | undefined,
  notRun?: AllowedNotRunView,
  check?: CheckView,
): HistoryRowView {
  return {
    ...row,
    usage: totalUsage(tickets),
    ...(refusals && refusals.denied > 0 ? { refusals } : {}),
    ...(notRun && row.status === 'succeeded' ? { allowedNotRun: notRun } : {}),
    ...(check ? { check } : {}),
  };
}

function withLink<T extends HistoryRow>(row: T, link: FollowUpLink | undefined): T {
  return link ? { ...row, followUpOfId: link.followUpOf, followUpOfTitle: link.ofTitle } : row;
}

/** The `historyPage` request: live rows decorated as in the snapshot, archived rows from the archive's own rows. */
export function historyPager(store: TaskStore, archive: HistoryArchive | undefined, live: LiveHistory) {
  return async ({ offset, limit, filter }: PanelParams<'historyPage'>): Promise<PanelResult<'historyPage'>> => {
    const liveRows = live();
    const denials = store.read((tx) => tx.questions.denials());
    const notRun = store.read((tx) => tx.questions.allowedNotRun());
    const checks = store.read((tx) => tx.checks.all());
    const liveView = (row: HistoryRow) => {
      const check = checks.get(row.taskId);
      return historyRowView(
        row,
        store.read((tx) => tx.tickets.forTask(row.taskId)),
        denials.get(row.taskId),
        notRun.get(row.taskId),
        check && checkViewOf(check),
      );
    };
    if (!archive) {
      const matching = liveRows.filter((r) => matchesHistoryFilter(r, filter));
      return { rows: matching.slice(offset, offset + limit).map(liveView), total: matching.length };
    }
    const page = await archive.page(liveRows, { offset, limit, filter });
    const rows = page.rows.map(({ row, archived }) => {
      if (!archived) return liveView(row);
      const view = withLink(row, archived.link);
      return {
        ...historyRowView(view, archived.tickets, archived.denials, undefined, archived.check && checkViewOf(archived.check)),
        ...(reviewable(archived.task, archived.isolation) ? { reviewable: true } : {}),
        archived: true,
      };
    });
    return { rows, total: page.total };
  };
}

/**
 * Before an action on a task the task DB does not have: an archived task is brought back (its rows
 * written into the task DB, then taken out of the archive), so every action finds it as any task.
 */
export async function bringBack(store: TaskStore, archive: HistoryArchive | undefined, taskId: string): Promise<void> {
  if (!archive || store.read((tx) => tx.tasks.get(taskId))) return;
  await archive.restore(taskId);
}
