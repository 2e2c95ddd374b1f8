/**
 * The away notifications' outbox (off_peak_notify_outbox, v17; docs/flows.md#away-notifications):
 * one row per event, keyed so that a window that sees the same event again, or a new lease holder
 * that looks again, adds nothing. Only the lease holder sends; a row says whether its message went,
 * how many attempts it took and when the next may start, so a hand-over of the lease neither loses
 * nor repeats a message. The delays, the attempt limit and the message are the caller's.
 */
import { NOTIFY_OUTBOX_TABLE } from '../migrations/tables';
import type { SqlRow } from '../db/sql';
import { StoreRepo } from './store-repo';
import { cellReader } from './cells';

/** pending: to send; sent; failed: its attempts ran out; dropped: not sent on purpose (no target, stale). */
export type NotifyState = 'pending' | 'sent' | 'failed' | 'dropped';

export interface NotifyRow {
  key: string;
  /** The event as JSON (src/protocol/notify.ts), parsed by the caller. */
  event: string;
  createdAt: number;
  state: NotifyState;
  attempts: number;
  nextAttemptAt: number;
  /** Held for quiet hours until then (its state is looked at again when it goes). */
  heldUntil: number | null;
  doneAt: number | null;
  doneBy: string | null;
  lastError: string | null;
}

const notifyCells = cellReader({
  str: ['event'],
  num: ['createdAt', 'attempts', 'nextAttemptAt'],
  numOrNull: ['heldUntil', 'doneAt'],
  strOrNull: ['doneBy', 'lastError'],
});

function rowOf(r: SqlRow): NotifyRow {
  return { ...notifyCells(r), key: String(r.event_key), state: String(r.state) as NotifyState };
}

export class NotifyRepo extends StoreRepo {
  /** Adds an event once: false (nothing written) when its key is there already. `notBefore`: held until then (quiet hours). */
  enqueue(key: string, event: string, notBefore = this.now): boolean {
    return (
      this.db.run(`INSERT OR IGNORE INTO ${NOTIFY_OUTBOX_TABLE} (event_key, event, created_at, next_attempt_at) VALUES (?, ?, ?, ?)`, [
        key,
        event,
        this.now,
        notBefore,
      ]) === 1
    );
  }

  get(key: string): NotifyRow | undefined {
    const row = this.db.get(`SELECT * FROM ${NOTIFY_OUTBOX_TABLE} WHERE event_key = ?`, [key]);
    return row ? rowOf(row) : undefined;
  }

  /** Every row, oldest first (tests and diagnostics). */
  all(): NotifyRow[] {
    return this.db.all(`SELECT * FROM ${NOTIFY_OUTBOX_TABLE} ORDER BY created_at, event_key`).map(rowOf);
  }

  /** Pending events whose next attempt may start now, oldest first. */
  due(limit = 20): NotifyRow[] {
    return this.db
      .all(`SELECT * FROM ${NOTIFY_OUTBOX_TABLE} WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY created_at, event_key LIMIT ?`, [
        this.now,
        limit,
      ])
      .map(rowOf);
  }

  /** When the next pending event may be tried, if one waits. */
  nextAttemptAt(): number | undefined {
    const v = this.db.scalar(`SELECT MIN(next_attempt_at) FROM ${NOTIFY_OUTBOX_TABLE} WHERE state = 'pending'`);
    return v === null || v === undefined ? undefined : Number(v);
  }

  /** Quiet hours: the event waits until `until` (no attempt counted). */
  hold(key: string, until: number): boolean {
    return (
      this.db.run(`UPDATE ${NOTIFY_OUTBOX_TABLE} SET held_until = ?, next_attempt_at = ? WHERE event_key = ? AND state = 'pending'`, [
        until,
        until,
        key,
      ]) === 1
    );
  }

  /**
   * An attempt starts: counted, and the next one may not start before `retryAt` (a holder that
   * dies while sending leaves the row to the next holder from then on). False when the row is no
   * longer pending or not due (another holder took it).
   */
  beginAttempt(key: string, retryAt: number): boolean {
    return (
      this.db.run(
        `UPDATE ${NOTIFY_OUTBOX_TABLE} SET attempts = attempts + 1, next_attempt_at = ? WHERE event_key = ? AND state = 'pending' AND next_attempt_at <= ?`,
        [retryAt, key, this.now],
      ) === 1
    );
  }

  /** The attempt failed; `final`: no attempt is left (the row ends `failed`). */
  attemptFailed(key: string, error: string, final: boolean, by: string): void {
    this.db.run(
      `UPDATE ${NOTIFY_OUTBOX_TABLE} SET last_error = ?, state = CASE WHEN ? THEN 'failed' ELSE state END, done_at = CASE WHEN ? THEN ? ELSE done_at END, done_by = CASE WHEN ? THEN ? ELSE done_by END WHERE event_key = ? AND state = 'pending'`,
      [error.slice(0, 500), final ? 1 : 0, final ? 1 : 0, this.now, final ? 1 : 0, by, key],
    );
  }

  /** The message went (or is dropped on purpose): never tried again. */
  finish(key: string, state: 'sent' | 'dropped', by: string, note: string | null = null): boolean {
    return (
      this.db.run(
        `UPDATE ${NOTIFY_OUTBOX_TABLE} SET state = ?, done_at = ?, done_by = ?, last_error = COALESCE(?, last_error) WHERE event_key = ? AND state = 'pending'`,
        [state, this.now, by, note, key],
      ) === 1
    );
  }

  /** Keys of events with `prefix` (e.g. every usage-limit hold), oldest first. */
  keysLike(prefix: string): string[] {
    return this.db
      .all(`SELECT event_key FROM ${NOTIFY_OUTBOX_TABLE} WHERE substr(event_key, 1, ?) = ? ORDER BY created_at, event_key`, [
        prefix.length,
        prefix,
      ])
      .map((r) => String(r.event_key));
  }

  /** Forgets finished rows older than `before`; returns how many. */
  prune(before: number): number {
    return this.db.run(`DELETE FROM ${NOTIFY_OUTBOX_TABLE} WHERE state <> 'pending' AND done_at < ?`, [before]);
  }
}
