// What a window's notice (src/engine/task-notices.ts: decided once across windows) becomes in the
// away notifications' outbox (docs/flows.md#away-notifications), with the key that makes a second
// write of the same event a no-op. A completed task with a check (docs/flows.md#checks) is ready
// for review when its check passed, and "check failed" when its rounds ran out.
import type { OffPeakTask } from '../core/types';
import type { TaskCheck } from '../store';
import { notifyKeys } from '../notify/away-notifications';
import type { NotifyEvent } from '../protocol/notify';
import type { TaskNotice } from './task-notices';

export function awayEventOf(
  notice: TaskNotice,
  task: Pick<OffPeakTask, 'workspacePath' | 'endedAt'> | undefined,
  check?: Pick<TaskCheck, 'command' | 'state' | 'round' | 'output'>,
): { key: string; event: NotifyEvent } {
  const ref = { taskId: notice.taskId, title: notice.title.slice(0, 2_000), folder: (task?.workspacePath ?? '').slice(0, 4_000) };
  switch (notice.kind) {
    case 'input-needed':
      return {
        key: notifyKeys.question(notice.taskId, notice.ask.id),
        event: {
          kind: 'needs-input',
          ...ref,
          askId: notice.ask.id,
          tool: notice.ask.tool.slice(0, 200),
          question: notice.ask.summary.slice(0, 2_000),
        },
      };
    case 'completed': {
      const key = notifyKeys.result(notice.taskId, task?.endedAt ?? null);
      // The notice's outcome decides (src/core/outcome.ts); the check gives its command, rounds and output.
      if (notice.outcome.kind === 'check_failed' && check)
        return {
          key,
          event: {
            kind: 'check-failed',
            ...ref,
            command: check.command.slice(0, 2_000),
            rounds: Math.max(1, check.round),
            output: (check.output ?? '').slice(-4_000),
          },
        };
      return {
        key,
        event: {
          kind: 'ready',
          ...ref,
          ...(notice.outcome.kind === 'ready' && check
            ? { checks: { command: check.command.slice(0, 2_000), round: Math.max(1, check.round) } }
            : {}),
        },
      };
    }
    case 'failed':
      return {
        key: notifyKeys.result(notice.taskId, task?.endedAt ?? null),
        event: { kind: 'failed', ...ref, reason: notice.reason.slice(0, 4_000) },
      };
  }
}
