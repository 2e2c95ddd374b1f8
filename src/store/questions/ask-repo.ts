/**
 * The permission questions agents wait on (off_peak_pending_asks, v4), as the window that runs
 * each agent publishes them: every window's panel lists them, and any window may leave an answer
 * for the running window to apply (the first answer wins there; the row is removed once it is
 * answered or gone). `summary`, `tool` and `input` are untrusted model text.
 */
import { ASKS_TABLE, TASKS_TABLE } from '../migrations/tables';
import { placeholders, type SqlRow } from '../db/sql';
import { StoreRepo } from '../repos/store-repo';
import { cellReader, oneOf } from '../repos/cells';

export interface SharedAsk {
  id: string;
  taskId: string;
  /** The window whose agent asks (it alone can deliver an answer). */
  windowId: string;
  tool: string;
  summary: string;
  /** The tool call's whole input as the asking window shows it (v6; '' in a row written before). */
  input: string;
  askedAt: number;
  deadlineAt: number;
  /** An answer another window left, not applied yet. */
  answer: 'allow' | 'deny' | null;
  /** The digest of the input the answer was given for (v6): the asking window checks it. */
  answerDigest: string | null;
}

const askCells = cellReader({
  str: ['taskId', 'windowId', 'tool', 'summary', 'input'],
  num: ['askedAt', 'deadlineAt'],
  strOrNull: ['answerDigest'],
});

function toAsk(r: SqlRow): SharedAsk {
  return { ...askCells(r), id: String(r.ask_id), answer: oneOf(r.answer, ['allow', 'deny'], null) };
}

export class AskRepo extends StoreRepo {
  /** Every published question, oldest first (`windowId`: only that window's). */
  list(windowId?: string): SharedAsk[] {
    const where = windowId === undefined ? '' : ' WHERE window_id = ?';
    return this.db
      .all(`SELECT * FROM ${ASKS_TABLE}${where} ORDER BY asked_at, ask_id`, windowId === undefined ? [] : [windowId])
      .map(toAsk);
  }

  /**
   * Makes the database hold exactly `open`, the questions `windowId`'s agents wait on now: new
   * ones are added, answered or ended ones removed. Returns whether anything changed.
   */
  publish(windowId: string, open: readonly Omit<SharedAsk, 'windowId' | 'answer' | 'answerDigest'>[]): boolean {
    const ids = open.map((a) => a.id);
    const removed = this.db.run(
      `DELETE FROM ${ASKS_TABLE} WHERE window_id = ?${ids.length > 0 ? ` AND ask_id NOT IN (${placeholders(ids.length)})` : ''}`,
      [windowId, ...ids],
    );
    let added = 0;
    for (const a of open) {
      added += this.db.run(
        `INSERT OR IGNORE INTO ${ASKS_TABLE} (ask_id, task_id, window_id, tool, summary, input, asked_at, deadline_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [a.id, a.taskId, windowId, a.tool, a.summary, a.input, a.askedAt, a.deadlineAt],
      );
    }
    return removed + added > 0;
  }

  /**
   * A window that is gone: its questions go, but an answer left for a question of a task it left
   * running stays until recovery carries it into the decision record (`takeAnswersLeft`), so an
   * answer given just before the crash applies when the task resumes.
   */
  withdrawDeadWindow(windowId: string): boolean {
    return (
      this.db.run(
        `DELETE FROM ${ASKS_TABLE} WHERE window_id = ? AND (answer IS NULL OR task_id NOT IN (SELECT off_peak_task_id FROM ${TASKS_TABLE} WHERE status IN ('running', 'awaiting')))`,
        [windowId],
      ) > 0
    );
  }

  /** The task's window closed or died: its rows go, and the answers left in them are returned. */
  takeAnswersLeft(taskId: string): SharedAsk[] {
    const rows = this.db.all(`SELECT * FROM ${ASKS_TABLE} WHERE task_id = ? ORDER BY asked_at, ask_id`, [taskId]).map(toAsk);
    if (rows.length > 0) this.db.run(`DELETE FROM ${ASKS_TABLE} WHERE task_id = ?`, [taskId]);
    return rows.filter((a) => a.answer !== null);
  }

  /**
   * Leaves an answer for the window whose agent asks, with the digest of the input it was given
   * for. False when the question is gone or already has one.
   */
  leaveAnswer(askId: string, decision: 'allow' | 'deny', inputDigest: string): boolean {
    return (
      this.db.run(`UPDATE ${ASKS_TABLE} SET answer = ?, answer_digest = ?, answered_at = ? WHERE ask_id = ? AND answer IS NULL`, [
        decision,
        inputDigest,
        this.now,
        askId,
      ]) === 1
    );
  }
}
