/**
 * The decision record (off_peak_task_questions, v7): every permission question a task's agent
 * asked, with its answer, who or what answered it and when (docs/flows.md#questions-park-the-task).
 * A question the task parked on (`parked_at`) waits here for its answer from any window; its
 * decision answers the resumed session's identical tool call once (`used_at`), and the
 * continuation prompt states it once (`stated_at`). `tool` and `summary` are untrusted model text.
 */
import { QUESTIONS_TABLE } from '../migrations/tables';
import { placeholders, type SqlRow } from '../db/sql';
import { StoreRepo } from '../repos/store-repo';
import { cellReader, oneOf } from '../repos/cells';

export type QuestionDecision = 'allow' | 'deny';
/**
 * Who or what answered: `host` the user in this window's panel or notification, `terminal` the
 * user in the task's terminal, `other-window` the user in another VS Code window, `timeout`
 * denied automatically at the deadline, `stored` the answer the user gave to the parked question,
 * `ended` nobody (the segment ended first). Two mark a question without an answer whose window
 * closed (a reload, a crash, an engine restart) while it was open: `interrupted` while it waits,
 * answerable from any window; `asked-again` once the resumed session was told to make the call
 * again, so it asks anew (docs/flows.md#a-question-across-a-reload).
 */
export type QuestionAnsweredBy = 'host' | 'terminal' | 'other-window' | 'timeout' | 'stored' | 'ended' | 'interrupted' | 'asked-again';
const ANSWERED_BY: readonly QuestionAnsweredBy[] = [
  'host',
  'terminal',
  'other-window',
  'timeout',
  'stored',
  'ended',
  'interrupted',
  'asked-again',
];
/** A held question (`parked_at`) still waiting for its answer: parked, or kept across its window's close. */
const WAITING = `parked_at IS NOT NULL AND decision IS NULL AND (answered_by IS NULL OR answered_by = 'interrupted')`;

/** A question as asked (what `recordAsked` keeps). */
export interface AskedQuestion {
  askId: string;
  taskId: string;
  tool: string;
  summary: string;
  /** The tool call's whole input as shown (what Allow approves). */
  input: string;
  /** Names the tool call: its stored decision answers the identical call once. */
  callDigest: string | null;
  askedAt: number;
}

export interface QuestionRecord extends AskedQuestion {
  parkedAt: number | null;
  decision: QuestionDecision | null;
  answeredBy: QuestionAnsweredBy | null;
  answeredAt: number | null;
  usedAt: number | null;
  statedAt: number | null;
}

/** An allowed action that did not run: the question's tool and headline (untrusted model text). */
export interface AllowedNotRun {
  tool: string;
  summary: string;
}

/** How many of a task's questions were denied, and how many of those automatically (nobody answered). */
export interface DenialCount {
  denied: number;
  automatic: number;
}

const questionCells = cellReader({
  str: ['askId', 'taskId', 'tool', 'summary', 'input'],
  strOrNull: ['callDigest'],
  num: ['askedAt'],
  numOrNull: ['parkedAt', 'answeredAt', 'usedAt', 'statedAt'],
});

function toQuestion(r: SqlRow): QuestionRecord {
  return {
    ...questionCells(r),
    decision: oneOf(r.decision, ['allow', 'deny'], null),
    answeredBy: oneOf(r.answered_by, ANSWERED_BY, null),
  };
}

export class QuestionRepo extends StoreRepo {
  /** A question was asked (kept once: a repeated record of the same ask changes nothing). */
  recordAsked(q: AskedQuestion): boolean {
    return (
      this.db.run(
        `INSERT OR IGNORE INTO ${QUESTIONS_TABLE} (ask_id, task_id, tool, summary, input, call_digest, asked_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
        [q.askId, q.taskId, q.tool, q.summary, q.input, q.callDigest, q.askedAt],
      ) === 1
    );
  }

  /**
   * The answer the agent got. An open question takes it; an answered one is corrected only when
   * the agent reports another decision (a typed answer crossed the host's). A parked question is
   * answered through `answerParked` only.
   */
  recordAnswer(askId: string, decision: QuestionDecision, by: QuestionAnsweredBy, at = this.now): boolean {
    return (
      this.db.run(
        `UPDATE ${QUESTIONS_TABLE} SET decision = ?, answered_by = ?, answered_at = ?
         WHERE ask_id = ? AND parked_at IS NULL AND (decision IS NULL OR decision <> ?)`,
        [decision, by, at, askId, decision],
      ) === 1
    );
  }

  /** The task parked on this question (still unanswered). */
  markParked(askId: string): boolean {
    return this.db.run(`UPDATE ${QUESTIONS_TABLE} SET parked_at = ? WHERE ask_id = ? AND parked_at IS NULL`, [this.now, askId]) === 1;
  }

  /**
   * The window closed while the question was open (a reload, a crash, an engine restart): it is
   * kept, answerable from any window, until the resumed session is told about it.
   */
  markInterrupted(askId: string): boolean {
    return (
      this.db.run(
        `UPDATE ${QUESTIONS_TABLE} SET parked_at = ?, answered_by = 'interrupted' WHERE ask_id = ? AND parked_at IS NULL AND decision IS NULL`,
        [this.now, askId],
      ) === 1
    );
  }

  /** The first answer to a waiting held question wins; false when it already has one (or is not held, or was asked again). */
  answerParked(askId: string, decision: QuestionDecision, by: QuestionAnsweredBy): boolean {
    return (
      this.db.run(`UPDATE ${QUESTIONS_TABLE} SET decision = ?, answered_by = ?, answered_at = ? WHERE ask_id = ? AND ${WAITING}`, [
        decision,
        by,
        this.now,
        askId,
      ]) === 1
    );
  }

  get(askId: string): QuestionRecord | undefined {
    const row = this.db.all(`SELECT * FROM ${QUESTIONS_TABLE} WHERE ask_id = ?`, [askId])[0];
    return row ? toQuestion(row) : undefined;
  }

  /** A task's questions, oldest first. */
  forTask(taskId: string): QuestionRecord[] {
    return this.db.all(`SELECT * FROM ${QUESTIONS_TABLE} WHERE task_id = ? ORDER BY asked_at, ask_id`, [taskId]).map(toQuestion);
  }

  /** Held questions still waiting for an answer (parked or `interrupted`; of the given tasks, or all), oldest first. */
  parkedOpen(taskIds?: readonly string[]): QuestionRecord[] {
    if (taskIds && taskIds.length === 0) return [];
    const where = taskIds ? ` AND task_id IN (${placeholders(taskIds.length)})` : '';
    return this.db
      .all(`SELECT * FROM ${QUESTIONS_TABLE} WHERE ${WAITING}${where} ORDER BY asked_at, ask_id`, taskIds ?? [])
      .map(toQuestion);
  }

  /** The user's answer to a parked question of this task with the same tool call, not used yet. */
  storedDecision(taskId: string, callDigest: string): QuestionRecord | undefined {
    const row = this.db.all(
      `SELECT * FROM ${QUESTIONS_TABLE} WHERE task_id = ? AND call_digest = ? AND parked_at IS NOT NULL
       AND decision IS NOT NULL AND used_at IS NULL ORDER BY answered_at DESC LIMIT 1`,
      [taskId, callDigest],
    )[0];
    return row ? toQuestion(row) : undefined;
  }

  /** The stored decision answered the identical call: it is not used again. */
  markUsed(askId: string): boolean {
    return this.db.run(`UPDATE ${QUESTIONS_TABLE} SET used_at = ? WHERE ask_id = ? AND used_at IS NULL`, [this.now, askId]) === 1;
  }

  /** Answered parked questions the next segment's continuation prompt has not stated yet. */
  unstated(taskId: string): QuestionRecord[] {
    return this.db
      .all(
        `SELECT * FROM ${QUESTIONS_TABLE} WHERE task_id = ? AND parked_at IS NOT NULL AND decision IS NOT NULL AND stated_at IS NULL ORDER BY asked_at`,
        [taskId],
      )
      .map(toQuestion);
  }

  markStated(askIds: readonly string[]): number {
    if (askIds.length === 0) return 0;
    return this.db.run(
      `UPDATE ${QUESTIONS_TABLE} SET stated_at = ? WHERE stated_at IS NULL AND ask_id IN (${placeholders(askIds.length)})`,
      [this.now, ...askIds],
    );
  }

  /** Questions left open when their window closed, not answered since and not yet told to a resumed session. */
  interruptedOpen(taskId: string): QuestionRecord[] {
    return this.db
      .all(
        `SELECT * FROM ${QUESTIONS_TABLE} WHERE task_id = ? AND ${WAITING} AND answered_by = 'interrupted' AND stated_at IS NULL ORDER BY asked_at`,
        [taskId],
      )
      .map(toQuestion);
  }

  /**
   * The resumed session was told these questions were not answered and to make the calls again
   * (it asks anew): closed as `asked-again`. One answered meanwhile keeps its answer (its stored
   * decision answers the repeat).
   */
  markAskedAgain(askIds: readonly string[]): number {
    if (askIds.length === 0) return 0;
    return this.db.run(
      `UPDATE ${QUESTIONS_TABLE} SET answered_by = 'asked-again', answered_at = ?, stated_at = COALESCE(stated_at, ?)
       WHERE answered_by = 'interrupted' AND decision IS NULL AND ask_id IN (${placeholders(askIds.length)})`,
      [this.now, this.now, ...askIds],
    );
  }

  /**
   * Denials by task: every question answered "deny" by the user or the deadline; `automatic`
   * counts those denied at the deadline. A question left unanswered because its segment ended is
   * not a denial, and a stored denial repeats one already counted.
   */
  denials(): Map<string, DenialCount> {
    const out = new Map<string, DenialCount>();
    for (const r of this.db.all(
      `SELECT task_id, COUNT(*) AS denied, SUM(CASE WHEN answered_by = 'timeout' THEN 1 ELSE 0 END) AS automatic
       FROM ${QUESTIONS_TABLE} WHERE decision = 'deny' AND answered_by NOT IN ('ended', 'stored') GROUP BY task_id`,
    )) {
      out.set(String(r.task_id), { denied: Number(r.denied), automatic: Number(r.automatic) });
    }
    return out;
  }

  /**
   * By task, the last question the user allowed while the task was parked, told to the resumed
   * session, whose call the session never made (its stored decision is unused): what Allow
   * approved did not happen.
   */
  allowedNotRun(): Map<string, AllowedNotRun> {
    const out = new Map<string, AllowedNotRun>();
    for (const r of this.db.all(
      `SELECT task_id, tool, summary FROM ${QUESTIONS_TABLE}
       WHERE parked_at IS NOT NULL AND decision = 'allow' AND used_at IS NULL AND stated_at IS NOT NULL ORDER BY asked_at, ask_id`,
    )) {
      out.set(String(r.task_id), { tool: String(r.tool), summary: String(r.summary) });
    }
    return out;
  }
}
