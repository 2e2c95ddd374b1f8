/**
 * History rows of archived tasks, found in the archive file (docs/flows.md#archive): the filter's
 * text, status and dates as SQL, newest first, one page at a time, without the tasks the task DB
 * still holds (after a crash between the two files a task can be in both: the task DB's copy wins).
 */
import type { HistoryFilter } from '../../core/history';
import { outcomeOf, type OutcomeFacts } from '../../core/outcome';
import type { TaskStatus } from '../../core/types';
import { CHECKS_TABLE, ISOLATION_TABLE } from '../migrations/tables';
import { CheckRepo, type TaskCheck } from '../repos/check-repo';
import type { OffPeakTask, TicketRecord } from '../../core/types';
import { FollowUpRepo, type FollowUpLink } from '../repos/follow-up-repo';
import { IsolationRepo, type TaskIsolation } from '../repos/isolation-repo';
import { QuestionRepo, type DenialCount } from '../questions/question-repo';
import { taskFromRow } from '../repos/rows';
import { HISTORY_TRIGGERED_AT_SQL } from '../repos/task-reads';
import { placeholders, type SqlDb, type SqlParam } from '../db/sql';
import { TicketRepo } from '../repos/ticket-repo';

/** An archived task as History shows it: the task, its ledger rows, its follow-up link and its isolation. */
export interface ArchivedEntry {
  task: OffPeakTask;
  tickets: TicketRecord[];
  link: FollowUpLink | undefined;
  isolation: TaskIsolation | undefined;
  /** Its denied questions ("N actions denied"), when any. */
  denials: DenialCount | undefined;
  /** Its check (docs/flows.md#checks), when it had one: part of what it came to. */
  check: TaskCheck | undefined;
}

/** Whether the archive file holds this table yet (it gains a table the task DB gained at its next write). */
function hasTable(db: SqlDb, table: string): boolean {
  return db.get(`SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = ?`, [table]) !== undefined;
}

/** `%text%` for LIKE, with the wildcards in the text taken literally. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The ids of the archived History rows that match, newest first. */
export function archivedHistoryIds(db: SqlDb, filter: HistoryFilter | undefined): string[] {
  const where = [`${HISTORY_TRIGGERED_AT_SQL} IS NOT NULL`, 'history_deleted_at IS NULL'];
  const params: SqlParam[] = [];
  const text = filter?.text?.trim();
  if (text) {
    where.push("(title LIKE ? ESCAPE '\\' OR prompt LIKE ? ESCAPE '\\')");
    params.push(likePattern(text), likePattern(text));
  }
  if (filter?.from !== undefined) {
    where.push(`${HISTORY_TRIGGERED_AT_SQL} >= ?`);
    params.push(filter.from);
  }
  if (filter?.to !== undefined) {
    where.push(`${HISTORY_TRIGGERED_AT_SQL} <= ?`);
    params.push(filter.to);
  }
  // The outcome is the one rule's (src/core/outcome.ts), not SQL's: the rows found by text and dates carry its facts.
  const checks = hasTable(db, CHECKS_TABLE);
  const isolation = hasTable(db, ISOLATION_TABLE);
  const rows = db.all(
    `SELECT t.off_peak_task_id AS id, t.status AS status, t.failure_reason AS failure_reason,
       ${checks ? 'c.state' : 'NULL'} AS check_state, ${checks ? 'c.round' : 'NULL'} AS check_round,
       ${isolation ? 'i.brought_home' : 'NULL'} AS brought_home
     FROM off_peak_tasks t
     ${checks ? `LEFT JOIN ${CHECKS_TABLE} c ON c.task_id = t.off_peak_task_id` : ''}
     ${isolation ? `LEFT JOIN ${ISOLATION_TABLE} i ON i.task_id = t.off_peak_task_id` : ''}
     WHERE ${where.join(' AND ')} ORDER BY ${HISTORY_TRIGGERED_AT_SQL} DESC, t.off_peak_task_id`,
    params,
  );
  const status = filter?.status;
  return rows
    .filter(
      (r) =>
        status === undefined ||
        outcomeOf({
          status: String(r.status) as TaskStatus,
          failureReason: r.failure_reason == null ? null : String(r.failure_reason),
          check: r.check_state == null ? null : { state: String(r.check_state), round: Number(r.check_round ?? 0) },
          broughtHome: r.brought_home == null ? null : (String(r.brought_home) as OutcomeFacts['broughtHome']),
        }).filters.includes(status),
    )
    .map((r) => String(r.id));
}

/** The archived tasks with these ids, in the order given. */
export function archivedEntries(db: SqlDb, ids: readonly string[], now: number): ArchivedEntry[] {
  if (ids.length === 0) return [];
  const tasks = new Map(
    db
      .all(`SELECT * FROM off_peak_tasks WHERE off_peak_task_id IN (${placeholders(ids.length)})`, ids)
      .map((r) => [String(r.off_peak_task_id), taskFromRow(r)]),
  );
  const tickets = new TicketRepo(db, now);
  const followUps = new FollowUpRepo(db, now);
  const isolation = new IsolationRepo(db, now);
  const denials = new QuestionRepo(db, now).denials();
  const checks = hasTable(db, CHECKS_TABLE) ? new CheckRepo(db, now).all() : new Map<string, TaskCheck>();
  return ids.flatMap((id) => {
    const task = tasks.get(id);
    return task
      ? [
          {
            task,
            tickets: tickets.forTask(id),
            link: followUps.get(id),
            isolation: isolation.get(id),
            denials: denials.get(id),
            check: checks.get(id),
          },
        ]
      : [];
  });
}
