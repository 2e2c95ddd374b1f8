// What a task's outcome reads of its branch's fate (docs/flows.md#outcomes): brought home how, and
// the pull request that merged it on the forge ("Merged in #123"). Pure reads, no git: the
// webview's summary reaches it through src/panel/task-summary.ts.
import type { OutcomeFacts } from '../core/outcome';
import type { StoreReadTx } from '../store';

/** What the task's outcome reads of its branch's fate: brought home how, and the pull request that merged it. */
export function outcomeFactsOf(
  tx: Pick<StoreReadTx, 'isolation' | 'pullRequests'>,
): Map<string, Pick<OutcomeFacts, 'broughtHome' | 'mergedIn'>> {
  const pulls = tx.pullRequests.all();
  const facts = new Map<string, Pick<OutcomeFacts, 'broughtHome' | 'mergedIn'>>();
  for (const [taskId, row] of tx.isolation.all()) {
    const pr = pulls.get(taskId);
    facts.set(taskId, { broughtHome: row.broughtHome?.kind ?? null, mergedIn: pr?.state === 'merged' ? pr.number : null });
  }
  return facts;
}
