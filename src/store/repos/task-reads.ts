/**
 * The reads of `off_peak_tasks` (`tx.tasks` in a read or a mutation): one task, a filtered list in
 * queue order, counts, and what the scheduler may dispatch now; the SQL fragments the task
 * repository's writes share with them.
 */
import { TASK_STATUSES, TERMINAL_STATUSES, type OffPeakTask, type TaskStatus } from '../../core/types';
import { invalidInput } from '../errors';
import { taskFromRow } from './rows';
import { DISPATCH_TABLE } from '../migrations/tables';
import { listQuery, placeholders, type SqlParam } from '../db/sql';
import type { TaskFilter } from './task-input';
import { StoreRepo } from './store-repo';

// The statuses are fixed identifiers (no user text), so they are inlined rather than bound.
export const TERMINAL_SQL = `(${TERMINAL_STATUSES.map((s) => `'${s}'`).join(', ')})`;

/**
 * When a task's History row says it was triggered, in SQL (NULL: no row): as `historyTriggeredAt`
 * in src/core/history.ts, its first segment's start, or when a task that never started failed or was cancelled.
 */
export const HISTORY_TRIGGERED_AT_SQL =
  "(CASE WHEN started_at IS NOT NULL THEN started_at WHEN status IN ('failed', 'cancelled') THEN COALESCE(ended_at, queued_at) END)";

/** Default age after which a dispatcher's claim counts as abandoned (a crashed window). */
export const ZOMBIE_CLAIM_MS = 10 * 60_000;

/**
 * A queued task the scheduler may dispatch (alias `t`, current ticket `k` LEFT JOINed): the
 * gateway said ready, or its current ticket is still ready/active in the ledger (a segment
 * interrupted by a restart resumes with that ticket at once), and the ledger's deadline of that
 * ticket has not passed (a window reopened after it: the sync retires the ticket and retakes,
 * docs/flows.md#a-question-across-a-reload). One source for claim and due; its parameters are
 * the zombie-claim cut-off, then now twice.
 */
export const DISPATCHABLE_SQL = `t.status = 'queued' AND t.server_ticket_id IS NOT NULL
  AND (t.schedulable = 1
       OR (k.server_state IN ('ready', 'active') AND k.settle_state = 'none' AND COALESCE(k.end_reason, '') <> 'expired'))
  AND (COALESCE(t.claim_running, 0) = 0 OR t.claimed_at IS NULL OR t.claimed_at < ?)
  AND NOT COALESCE((k.server_state = 'active' AND k.expires_at <= ?) OR (k.server_state = 'ready' AND k.ready_deadline <= ?), 0)`;

export class TaskReads extends StoreRepo {
  get(id: string): OffPeakTask | undefined {
    const row = this.db.get('SELECT * FROM off_peak_tasks WHERE off_peak_task_id = ?', [id]);
    return row ? taskFromRow(row) : undefined;
  }

  /** Tasks in queue order (queued_at, then id), optionally filtered. */
  list(filter: TaskFilter = {}): OffPeakTask[] {
    const where: string[] = [];
    const params: SqlParam[] = [];
    if (filter.status !== undefined) {
      const statuses = (typeof filter.status === 'string' ? [filter.status] : filter.status) as TaskStatus[];
      for (const s of statuses) if (!TASK_STATUSES.includes(s)) throw invalidInput(`unknown status ${JSON.stringify(s)}`);
      if (statuses.length === 0) return [];
      where.push(`status IN (${placeholders(statuses.length)})`);
      params.push(...statuses);
    }
    if (filter.workspaceKey !== undefined) {
      where.push('workspace_key = ?');
      params.push(filter.workspaceKey);
    }
    if (filter.ids !== undefined) {
      if (filter.ids.length === 0) return [];
      where.push(`off_peak_task_id IN (${placeholders(filter.ids.length)})`);
      params.push(...filter.ids);
    }
    if (filter.hasTicket !== undefined) where.push(filter.hasTicket ? 'server_ticket_id IS NOT NULL' : 'server_ticket_id IS NULL');
    if (filter.unsettledTerminal) where.push(`status IN ${TERMINAL_SQL} AND settled_at IS NULL`);
    if (filter.historyVisible) where.push(`${HISTORY_TRIGGERED_AT_SQL} IS NOT NULL AND history_deleted_at IS NULL`);
    return this.db.all(...listQuery('off_peak_tasks', where, params, 'queued_at, off_peak_task_id', filter.limit)).map(taskFromRow);
  }

  count(status?: TaskStatus | readonly TaskStatus[]): number {
    if (status === undefined) return Number(this.db.scalar('SELECT COUNT(*) FROM off_peak_tasks'));
    const statuses = typeof status === 'string' ? [status] : [...status];
    if (statuses.length === 0) return 0;
    return Number(this.db.scalar(`SELECT COUNT(*) FROM off_peak_tasks WHERE status IN (${placeholders(statuses.length)})`, statuses));
  }

  /**
   * Tasks `claim` would take now whose dispatch backoff (if any) has ended, in queue order.
   * Read-only: the scheduler checks this before taking the lock, so an idle tick writes nothing.
   */
  dueForDispatch(options: { zombieAfterMs?: number; limit?: number } = {}): OffPeakTask[] {
    const zombieBefore = this.now - (options.zombieAfterMs ?? ZOMBIE_CLAIM_MS);
    const limit = options.limit !== undefined && options.limit > 0 ? ` LIMIT ${Math.floor(options.limit)}` : '';
    return this.db
      .all(
        `SELECT t.* FROM off_peak_tasks t
         LEFT JOIN off_peak_tickets k ON k.ticket_id = t.server_ticket_id
         LEFT JOIN ${DISPATCH_TABLE} b ON b.task_id = t.off_peak_task_id
         WHERE ${DISPATCHABLE_SQL} AND (b.next_dispatch_at IS NULL OR b.next_dispatch_at <= ?)
         ORDER BY t.queued_at, t.off_peak_task_id${limit}`,
        [zombieBefore, this.now, this.now, this.now],
      )
      .map(taskFromRow);
  }

  /** When the oldest claim still held was taken (undefined: no claims). */
  oldestClaimAt(): number | undefined {
    const at = this.db.scalar('SELECT MIN(claimed_at) FROM off_peak_tasks WHERE claim_running = 1');
    return at === null || at === undefined ? undefined : Number(at);
  }

  /** How many claims are older than `zombieAfterMs` (read-only). */
  countZombieClaims(options: { zombieAfterMs?: number } = {}): number {
    const zombieBefore = this.now - (options.zombieAfterMs ?? ZOMBIE_CLAIM_MS);
    return Number(this.db.scalar('SELECT COUNT(*) FROM off_peak_tasks WHERE claim_running = 1 AND claimed_at < ?', [zombieBefore]));
  }
}
