/**
 * Follow-up tasks (off_peak_follow_ups, v8): a follow-up is a task of its own (its own ticket,
 * card and History row) whose first segment resumes the agent session of a finished task with
 * new instructions (docs/flows.md#follow-up). One row per follow-up, removed with it by a trigger.
 */
import { FOLLOW_UPS_TABLE, TASKS_TABLE } from '../migrations/tables';
import type { SqlRow } from '../db/sql';
import { StoreRepo } from './store-repo';
import { cellReader } from './cells';

export interface FollowUpLink {
  /** The follow-up task. */
  taskId: string;
  /** The finished task it continues (it may have been deleted since). */
  followUpOf: string;
  /** That task's title when the follow-up was made ("follow-up of <title>"). */
  ofTitle: string;
  /** The agent session the follow-up's first segment resumes. */
  sessionId: string;
  /** The agent that owns the session ('reference', 'claude-code'). */
  agent: string;
  createdAt: number;
}

const toLink: (r: SqlRow) => FollowUpLink = cellReader({
  str: ['taskId', 'followUpOf', 'ofTitle', 'sessionId', 'agent'],
  num: ['createdAt'],
});

export class FollowUpRepo extends StoreRepo {
  /** Links a follow-up task (in the transaction that inserts it); false if it already has a link. */
  insert(link: Omit<FollowUpLink, 'createdAt'>): boolean {
    return (
      this.db.run(
        `INSERT OR IGNORE INTO ${FOLLOW_UPS_TABLE} (task_id, follow_up_of, of_title, session_id, agent, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
        [link.taskId, link.followUpOf, link.ofTitle, link.sessionId, link.agent, this.now],
      ) === 1
    );
  }

  get(taskId: string): FollowUpLink | undefined {
    return this.recordOfTask(FOLLOW_UPS_TABLE, taskId, toLink);
  }

  /** Every link, by follow-up task id (one read for a panel snapshot). */
  all(): Map<string, FollowUpLink> {
    return this.recordsByTask(FOLLOW_UPS_TABLE, toLink);
  }

  /**
   * Tasks other than `exceptTaskId` that use this agent session and are not finished: their own
   * session (a started task) or the one their first segment will resume (a queued follow-up).
   * Two agents must never work on one session at once.
   */
  liveUsersOfSession(sessionId: string, exceptTaskId?: string): string[] {
    return this.db
      .all(
        `SELECT t.off_peak_task_id AS id FROM ${TASKS_TABLE} t LEFT JOIN ${FOLLOW_UPS_TABLE} f ON f.task_id = t.off_peak_task_id
         WHERE (t.session_id = ? OR f.session_id = ?) AND t.status NOT IN ('completed', 'failed', 'cancelled') AND t.off_peak_task_id <> ?
         ORDER BY t.queued_at, t.off_peak_task_id`,
        [sessionId, sessionId, exceptTaskId ?? ''],
      )
      .map((r) => String(r.id));
  }

  /** Whether any task other than `exceptTaskId`, finished or not, still uses this session (its files must stay). */
  sessionInUse(sessionId: string, exceptTaskId: string): boolean {
    return (
      this.db.get(
        `SELECT 1 AS x FROM ${TASKS_TABLE} t LEFT JOIN ${FOLLOW_UPS_TABLE} f ON f.task_id = t.off_peak_task_id
         WHERE (t.session_id = ? OR f.session_id = ?) AND t.off_peak_task_id <> ? LIMIT 1`,
        [sessionId, sessionId, exceptTaskId],
      ) !== undefined
    );
  }
}
