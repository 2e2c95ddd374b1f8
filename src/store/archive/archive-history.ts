/**
 * History rows of archived tasks, found in the archive file (docs/flows.md#archive): the filter's
 * text, status and dates as SQL, newest first, one page at a time, without the tasks the task DB
 * still holds (after a crash between the two files a task can be in both: the task DB's copy wins).
 */
import { HISTORY_STATUS_TASKS, type HistoryFilter } from '../../core/history';
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
  if (filter?.status) {
    const statuses = HISTORY_STATUS_TASKS[filter.status];
    where.push(`status IN (${placeholders(statuses.length)})`);
    params.push(...statuses);
  }
  if (filter?.from !== undefined) {
    where.push(`${HISTORY_TRIGGERED_AT_SQL} >= ?`);
    params.push(filter.from);
  }
  if (filter?.to !== undefined) {
    where.push(`${HISTORY_TRIGGERED_AT_SQL} <= ?`);
    params.push(filter.to);
  }
  const rows = db.all(
    `SELECT off_peak_task_id AS id FROM off_peak_tasks WHERE ${where.join(' AND ')} ORDER BY ${HISTORY_TRIGGERED_AT_SQL} DESC, off_peak_task_id`,
    params,
  );
  return rows.map((r) => String(r.id));
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
  return ids.flatMap((id) => {
    const task = tasks.get(id);
    return task
      ? [{ task, tickets: tickets.forTask(id), link: followUps.get(id), isolation: isolation.get(id), denials: denials.get(id) }]
      : [];
  });
}
