// The status bar's view of this window's tasks (docs/flows.md#outcomes): the summary's counts, the
// account's usage limit (docs/flows.md#usage-limits) and its windows (docs/flows.md#capacity-and-cost),
// from the rows every window reads; src/extension.ts shows it and says when the limit is reached.
import { accountBar, latestAccountReading } from '../core/account-bar';
import type { OffPeakTask, TicketRecord } from '../core/types';
import type { StoreReadTx } from '../store';
import { outcomeFactsOf } from '../service/outcome-facts';
import { accountUsageLimitResetAt } from './task-card';
import type { Outcome } from '../core/outcome';
import { hostStatusView, statusTasksOf, type StatusBarView, type SummaryTask } from './task-summary';

export interface HostStatusInput {
  tasks: readonly OffPeakTask[];
  ticketsOf(taskId: string): readonly TicketRecord[];
  /** Every fact of their outcomes, read in one transaction (`storeStatusTasks`). */
  summarized: ReturnType<typeof storeStatusTasks<OffPeakTask>>;
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
  return { view: hostStatusView(input.summarized, input.asks, input.unseen, input.lastSeenAt, limit, account), usageLimitAt };
}

/** The store's tasks as the status bar counts them, every fact read from one transaction (the check, the schedule, the branch's fate). */
export function storeStatusTasks<T extends SummaryTask & { failureReason: string | null }>(
  tx: Pick<StoreReadTx, 'checks' | 'schedules' | 'isolation' | 'pullRequests'>,
  tasks: readonly T[],
): (T & { outcome: Outcome; scheduled: boolean })[] {
  return statusTasksOf(tasks, tx.checks.all(), tx.schedules.runsByTask(), outcomeFactsOf(tx));
}
