// The status bar's view of this window's tasks (docs/flows.md#outcomes): the summary's counts, the
// account's usage limit (docs/flows.md#usage-limits) and its windows (docs/flows.md#capacity-and-cost),
// from the rows every window reads; src/extension.ts shows it and says when the limit is reached.
import { accountBar, latestAccountReading } from '../core/account-bar';
import type { OffPeakTask, TicketRecord } from '../core/types';
import type { TaskCheck } from '../store/repos/check-repo';
import { accountUsageLimitResetAt } from './task-card';
import { hostStatusView, statusTasksOf, type StatusBarView } from './task-summary';

export interface HostStatusInput {
  tasks: readonly OffPeakTask[];
  ticketsOf(taskId: string): readonly TicketRecord[];
  checks: ReadonlyMap<string, TaskCheck>;
  /** The tasks a schedule queued. */
  scheduled: { has(taskId: string): boolean };
  asks: readonly { taskId: string }[];
  unseen: readonly string[];
  lastSeenAt: number | null;
  /** The reserve of the account's windows (personal mode's `offPeak.personal.stopAtUtilization`), else null. */
  reserve: number | null;
  now: number;
}

/** The status bar's view, and when the account's usage limit resets (null: none holds). */
export function hostStatusOf(input: HostStatusInput): { view: StatusBarView; usageLimitAt: number | null } {
  const { tasks, now } = input;
  const usageLimitAt = accountUsageLimitResetAt(tasks, input.ticketsOf, now);
  const account = accountBar(latestAccountReading(tasks.flatMap((t) => input.ticketsOf(t.id))), input.reserve, now);
  const limit = usageLimitAt === null ? null : { resetAt: usageLimitAt, now };
  const summarized = statusTasksOf(tasks, input.checks, input.scheduled);
  return { view: hostStatusView(summarized, input.asks, input.unseen, input.lastSeenAt, limit, account), usageLimitAt };
}
