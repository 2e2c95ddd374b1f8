/**
 * The permission questions agents wait on (off_peak_pending_asks, v4), as the window that runs
 * each agent publishes them: every window's panel lists them, and any window may leave an answer
 * for the running window to apply (the first answer wins there; the row is removed once it is
 * answered or gone). `summary` and `tool` are untrusted model text.
 */
import { ASKS_TABLE } from './schema';
import { placeholders, type SqlDb, type SqlRow } from './sql';

export interface SharedAsk {
  id: string;
  taskId: string;
  /** The window whose agent asks (it alone can deliver an answer). */
  windowId: string;
  tool: string;
  summary: string;
  askedAt: number;
  deadlineAt: number;
  /** An answer another window left, not applied yet. */
  answer: 'allow' | 'deny' | null;
}

function toAsk(r: SqlRow): SharedAsk {
  return {
    id: String(r.ask_id),
    taskId: String(r.task_id),
    windowId: String(r.window_id),
    tool: String(r.tool),
    summary: String(r.summary),
    askedAt: Number(r.asked_at),
    deadlineAt: Number(r.deadline_at),
    answer: r.answer === 'allow' || r.answer === 'deny' ? r.answer : null,
  };
}

export class AskRepo {
  constructor(
    private readonly db: SqlDb,
    private readonly now: number,
  ) {}

  /** Every published question, oldest first (`windowId`: only that window's). */
  list(windowId?: string): SharedAsk[] {
    const where = windowId === undefined ? '' : ' WHERE window_id = ?';
    return this.db.all(`SELECT * FROM ${ASKS_TABLE}${where} ORDER BY asked_at, ask_id`, windowId === undefined ? [] : [windowId]).map(toAsk);
  }

  /**
   * Makes the database hold exactly `open`, the questions `windowId`'s agents wait on now: new
   * ones are added, answered or ended ones removed. Returns whether anything changed.
   */
  publish(windowId: string, open: readonly Omit<SharedAsk, 'windowId' | 'answer'>[]): boolean {
    const ids = open.map((a) => a.id);
    const removed = this.db.run(
      `DELETE FROM ${ASKS_TABLE} WHERE window_id = ?${ids.length > 0 ? ` AND ask_id NOT IN (${placeholders(ids.length)})` : ''}`,
      [windowId, ...ids],
    );
    let added = 0;
    for (const a of open) {
      added += this.db.run(
        `INSERT OR IGNORE INTO ${ASKS_TABLE} (ask_id, task_id, window_id, tool, summary, asked_at, deadline_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
        [a.id, a.taskId, windowId, a.tool, a.summary, a.askedAt, a.deadlineAt],
      );
    }
    return removed + added > 0;
  }

  /** Leaves an answer for the window whose agent asks. False when the question is gone or already has one. */
  leaveAnswer(askId: string, decision: 'allow' | 'deny'): boolean {
    return this.db.run(`UPDATE ${ASKS_TABLE} SET answer = ?, answered_at = ? WHERE ask_id = ? AND answer IS NULL`, [decision, this.now, askId]) === 1;
  }
}
