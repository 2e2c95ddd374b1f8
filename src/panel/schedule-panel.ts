// The panel's side of repeating schedules (docs/flows.md#schedules-and-chains): the Schedules
// section's views, a run's mark on its card, and the four requests. Words are made here, on the
// host, in the machine's zone; the webview shows them as plain text.
import { describeRule, nextOccurrence } from '../core/schedule-rules';
import { formatDueTime } from '../core/zoned-time';
import type { OffPeakTask } from '../core/types';
import type { TaskService } from '../service';
import type { IsolationMode, ScheduleDraftRecord, ScheduleRecord, ScheduleRunRecord, StoreReadTx, TaskStore } from '../store';
import type { ScheduleDraft, ScheduleRunMark, ScheduleView } from '../protocol/schedules';
import type { RequestHandlers } from '../protocol/webview';
import { bypassConfirmation, type Confirmation } from './confirmations';

type ScheduleMethods = 'createSchedule' | 'editSchedule' | 'pauseSchedule' | 'deleteSchedule';

/** What the schedule requests need from the rest of the panel backend. */
export interface ScheduleHostBits {
  /** The folder the webview named, checked: only one open in this window (throws otherwise). */
  checkFolder(workspacePath: string): string;
  /** The folder's identity (routes a run to the window that has it open). */
  identityOf(workspacePath: string): string | null;
  /** "Run on its own branch" as the folder allows it. */
  isolationOf(ownBranch: boolean | undefined, workspacePath: string): Promise<IsolationMode | undefined>;
  confirm(question: Confirmation): Promise<boolean>;
}

/** What a run's task came to, in words: "Completed", "Ready for review · checks pass", "Failed: …". */
function runResultText(task: OffPeakTask | undefined, check: ReturnType<StoreReadTx['checks']['get']>): string {
  if (!task) return 'Its task was deleted';
  switch (task.status) {
    case 'completed':
      if (check?.state === 'passed') return 'Ready for review · checks pass';
      if (check?.state === 'failed') return 'Completed · checks fail';
      return 'Completed';
    case 'failed':
      return task.failureReason ? `Failed: ${task.failureReason}` : 'Failed';
    case 'cancelled':
      return task.failureReason ?? 'Cancelled';
    case 'needs_input':
      return 'Waiting for your answer';
    case 'running':
    case 'awaiting':
      return 'Running';
    default:
      return task.status === 'paused' ? 'Paused' : 'Queued';
  }
}

/** The last occurrence handled, as the Schedules section says it. */
function lastRunView(tx: StoreReadTx, run: ScheduleRunRecord | undefined): ScheduleView['lastRun'] {
  if (!run) return null;
  const task = run.taskId ? tx.tasks.get(run.taskId) : undefined;
  let text = run.outcome === 'skipped' ? (run.note ?? 'Skipped') : runResultText(task, run.taskId ? tx.checks.get(run.taskId) : undefined);
  if (run.catchUp) text = `${run.missedCount > 0 ? `Missed ${run.missedCount}, caught up` : 'Caught up'} · ${text}`;
  return { taskId: task ? task.id : null, at: run.dueAt, text, catchUp: run.catchUp };
}

function draftView(s: ScheduleRecord): ScheduleDraft {
  const draft: ScheduleDraft = {
    title: s.title,
    prompt: s.prompt,
    workspacePath: s.workspacePath,
    permissionMode: s.permissionMode,
    model: s.model,
    thoughtLevel: s.thoughtLevel,
    ownBranch: s.isolation === 'worktree',
  };
  if (s.checkCommand) draft.checkCommand = s.checkCommand;
  return draft;
}

/** The Schedules section: every schedule not deleted, oldest first, with its next and last run. */
export function scheduleViews(store: TaskStore, now: number, zone: string): ScheduleView[] {
  return store.read((tx) =>
    tx.schedules.list().map((s) => {
      const next = s.paused ? null : nextOccurrence(s.rule, Math.max(s.handledThrough, now), s.zone);
      return {
        id: s.id,
        title: s.title,
        ruleText: describeRule(s.rule),
        rule: s.rule,
        paused: s.paused,
        nextRunAt: next,
        nextRunText: next === null ? null : formatDueTime(next, now, zone),
        lastRun: lastRunView(tx, tx.schedules.runsOf(s.id, 1)[0]),
        draft: draftView(s),
      };
    }),
  );
}

/** By task id: the schedule that queued it and for when ("Nightly deps · Tue 02:00 (catch-up)"). */
export function scheduleRunMarks(store: TaskStore, now: number, zone: string): Map<string, ScheduleRunMark> {
  return store.read((tx) => {
    const runs = tx.schedules.runsByTask();
    if (runs.size === 0) return new Map();
    const titles = tx.schedules.titles();
    return new Map(
      [...runs].map(([taskId, run]) => [
        taskId,
        {
          scheduleId: run.scheduleId,
          scheduleTitle: titles.get(run.scheduleId) ?? '',
          dueText: formatDueTime(run.dueAt, now, zone),
          catchUp: run.catchUp,
        },
      ]),
    );
  });
}

/** Deleting a schedule asks: its future runs are gone, a queued run stays. */
export function deleteScheduleConfirmation(s: ScheduleRecord): Confirmation {
  return {
    message: `Delete the schedule "${s.title.length > 60 ? `${s.title.slice(0, 59)}…` : s.title}"?`,
    detail: `${describeRule(s.rule)}: no further run is queued. A run already queued stays in the list as an ordinary task.`,
    action: 'Delete Schedule',
  };
}

/** The Schedules section's requests. */
export function scheduleHandlers(service: TaskService, host: ScheduleHostBits): Pick<RequestHandlers, ScheduleMethods> {
  /** The webview's draft as the store keeps it; null when the user declined Bypass permissions. */
  const draftOf = async (draft: ScheduleDraft, wasBypass: boolean): Promise<ScheduleDraftRecord | null> => {
    const workspacePath = host.checkFolder(draft.workspacePath);
    const isolation = (await host.isolationOf(draft.ownBranch, workspacePath)) ?? null;
    if (
      draft.permissionMode === 'bypassPermissions' &&
      !wasBypass &&
      !(await host.confirm(bypassConfirmation(workspacePath, 'create', isolation === 'worktree' ? null : undefined)))
    )
      return null;
    const { ownBranch: _ownBranch, checkCommand, ...rest } = draft;
    return { ...rest, workspacePath, workspaceIdentity: host.identityOf(workspacePath), isolation, checkCommand: checkCommand ?? null };
  };
  return {
    async createSchedule({ draft, rule }) {
      const record = await draftOf(draft, false);
      if (!record) return { scheduleId: null };
      return { scheduleId: (await service.schedules.create(record, rule)).id };
    },
    async editSchedule({ id, draft, rule }) {
      const current = service.schedules.list().find((s) => s.id === id);
      const record = await draftOf(draft, current?.permissionMode === 'bypassPermissions');
      if (!record) return { done: false };
      await service.schedules.edit(id, record, rule);
      return { done: true };
    },
    async pauseSchedule({ id, paused }) {
      await service.schedules.setPaused(id, paused);
      return {};
    },
    async deleteSchedule({ id }) {
      const current = service.schedules.list().find((s) => s.id === id);
      if (current && !(await host.confirm(deleteScheduleConfirmation(current)))) return { done: false };
      await service.schedules.delete(id);
      return { done: true };
    },
  };
}
