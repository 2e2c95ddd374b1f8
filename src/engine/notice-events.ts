// What a window's notice (src/engine/task-notices.ts: decided once across windows) becomes in the
// away notifications' outbox (docs/flows.md#away-notifications), with the key that makes a second
// write of the same event a no-op.
import type { OffPeakTask } from '../core/types';
import { notifyKeys } from '../notify/away-notifications';
import type { NotifyEvent } from '../protocol/notify';
import type { TaskNotice } from './task-notices';

export function awayEventOf(notice: TaskNotice, task: Pick<OffPeakTask, 'workspacePath' | 'endedAt'> | undefined): { key: string; event: NotifyEvent } {
  const ref = { taskId: notice.taskId, title: notice.title, folder: task?.workspacePath ?? '' };
  switch (notice.kind) {
    case 'input-needed':
      return { key: notifyKeys.question(notice.taskId, notice.ask.id), event: { kind: 'needs-input', ...ref, askId: notice.ask.id, tool: notice.ask.tool, question: notice.ask.summary } };
    case 'completed':
      return { key: notifyKeys.result(notice.taskId, task?.endedAt ?? null), event: { kind: 'ready', ...ref } };
    case 'failed':
      return { key: notifyKeys.result(notice.taskId, task?.endedAt ?? null), event: { kind: 'failed', ...ref, reason: notice.reason } };
  }
}
