/**
 * Typed access to `off_peak_tasks` inside one store transaction (`tx.tasks`): the reads
 * (task-reads.ts) and state transitions (task-transitions.ts) it inherits, and here the writes that
 * are not a status change: insert, edit, delete, the History tombstone, the settle mark, the
 * current-ticket snapshot, the scheduler's claim and the last error. Each returns whether it applied.
 */
import { EDITABLE_STATUSES } from '../../core/task-state';
import { workspaceKeyOf, type OffPeakTask } from '../../core/types';
import { newTaskId } from '../../core/ids';
import { invalidInput } from '../errors';
import { DISPATCH_TABLE, HANDOFF_TABLE, RUNTIME_TABLE } from '../migrations/tables';
import { assignmentsOf, placeholders, type SqlParam } from '../db/sql';
import {
  bit,
  checkPermissionMode,
  checkText,
  optionalText,
  optionalTime,
  type NewTaskInput,
  type TaskEdit,
  type TicketSnapshot,
} from './task-input';
import { DISPATCHABLE_SQL, HISTORY_TRIGGERED_AT_SQL, TERMINAL_SQL, ZOMBIE_CLAIM_MS } from './task-reads';
import { TaskTransitions } from './task-transitions';

export class TaskRepo extends TaskTransitions {
  insert(input: NewTaskInput): OffPeakTask {
    const id = input.id === undefined ? newTaskId() : checkText('id', input.id);
    const title = checkText('title', input.title, true);
    const prompt = checkText('prompt', input.prompt);
    const permissionMode = checkPermissionMode(input.permissionMode);
    const workspacePath = checkText('workspace path', input.workspacePath);
    const workspaceIdentity = optionalText('workspace identity', input.workspaceIdentity);
    if (this.get(id)) throw invalidInput(`task ${id} already exists`);
    const now = this.now;
    this.db.run(
      `INSERT INTO off_peak_tasks (
        off_peak_task_id, title, prompt, permission_mode, model, thought_level,
        workspace_key, workspace_path, workspace_identity, conversation_id, session_id,
        status, queued_at, started_at, ended_at, failure_reason, files_changed,
        server_ticket_id, registered_at, schedulable, queue_position, next_poll_at,
        claim_running, claimed_at, attempt_count, last_error, settled_at, history_deleted_at,
        created_at, updated_at, not_before, after_task_id, after_title, continue_in_branch)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, 'queued', ?, NULL, NULL, NULL, NULL,
        ?, ?, ?, ?, ?, 0, NULL, 0, NULL, NULL, NULL, ?, ?, ?, ?, ?, ?)`,
      [
        id,
        title,
        prompt,
        permissionMode,
        optionalText('model', input.model),
        optionalText('thought level', input.thoughtLevel),
        workspaceKeyOf(workspacePath, workspaceIdentity),
        workspacePath,
        workspaceIdentity,
        now,
        input.serverTicketId ?? null,
        input.serverTicketId ? (input.registeredAt ?? now) : (input.registeredAt ?? null),
        bit(input.schedulable ?? false),
        input.queuePosition ?? null,
        input.nextPollAt ?? null,
        now,
        now,
        optionalTime('not before', input.notBefore),
        input.after ? checkText('after', input.after.taskId) : null,
        input.after ? checkText('after title', input.after.title, true) : null,
        bit(input.after?.continueInBranch ?? false),
      ],
    );
    return this.get(id)!;
  }

  /** Edits the form of a queued or paused task. The workspace is immutable (not in TaskEdit). */
  edit(id: string, patch: TaskEdit): boolean {
    const sets: string[] = [];
    const params: SqlParam[] = [];
    if (patch.title !== undefined) {
      sets.push('title = ?');
      params.push(checkText('title', patch.title, true));
    }
    if (patch.prompt !== undefined) {
      sets.push('prompt = ?');
      params.push(checkText('prompt', patch.prompt));
    }
    if (patch.permissionMode !== undefined) {
      sets.push('permission_mode = ?');
      params.push(checkPermissionMode(patch.permissionMode));
    }
    if (patch.model !== undefined) {
      sets.push('model = ?');
      params.push(optionalText('model', patch.model));
    }
    if (patch.thoughtLevel !== undefined) {
      sets.push('thought_level = ?');
      params.push(optionalText('thought level', patch.thoughtLevel));
    }
    if (patch.notBefore !== undefined) {
      sets.push('not_before = ?');
      params.push(optionalTime('not before', patch.notBefore));
    }
    for (const key of Object.keys(patch)) {
      if (!['title', 'prompt', 'permissionMode', 'model', 'thoughtLevel', 'notBefore'].includes(key)) {
        throw invalidInput(`${key} cannot be edited${key.startsWith('workspace') ? ' (the workspace of a task is immutable)' : ''}`);
      }
    }
    if (sets.length === 0) return this.get(id) !== undefined && EDITABLE_STATUSES.includes(this.get(id)!.status);
    const changed = this.db.run(
      `UPDATE off_peak_tasks SET ${sets.join(', ')}, updated_at = ?
       WHERE off_peak_task_id = ? AND status IN (${placeholders(EDITABLE_STATUSES.length)})${patch.notBefore !== undefined ? ' AND server_ticket_id IS NULL' : ''}`,
      [...params, this.now, id, ...EDITABLE_STATUSES],
    );
    return changed === 1;
  }

  /**
   * Physically deletes a terminal task (docs/flows.md#cancel-delete-history: delete of a live task = cancel, then delete;
   * do both in one mutation). Its ledger rows stay until settled or abandoned.
   */
  delete(id: string): boolean {
    const deleted = this.db.run(`DELETE FROM off_peak_tasks WHERE off_peak_task_id = ? AND status IN ${TERMINAL_SQL}`, [id]) === 1;
    // What other parts kept about the task goes with it (the ledger stays: it is the settle outbox).
    if (deleted) for (const table of [DISPATCH_TABLE, RUNTIME_TABLE, HANDOFF_TABLE]) this.deleteRowOfTask(table, id);
    return deleted;
  }

  /** History tombstone: only for tasks with a History row; repeating keeps the first time (idempotent). */
  deleteHistory(id: string): boolean {
    return (
      this.db.run(
        `UPDATE off_peak_tasks SET history_deleted_at = ?, updated_at = ?
         WHERE off_peak_task_id = ? AND ${HISTORY_TRIGGERED_AT_SQL} IS NOT NULL AND history_deleted_at IS NULL`,
        [this.now, this.now, id],
      ) === 1
    );
  }

  /**
   * Points a live task at a (new) ticket after a successful take or retake: overwrites the
   * current-ticket snapshot (the ledger keeps the old one).
   */
  setTicket(id: string, ticketId: string, snapshot: TicketSnapshot = {}): boolean {
    checkText('ticket id', ticketId);
    return (
      this.db.run(
        `UPDATE off_peak_tasks SET server_ticket_id = ?, registered_at = ?, schedulable = ?,
           queue_position = ?, next_poll_at = ?, updated_at = ?
         WHERE off_peak_task_id = ? AND status NOT IN ${TERMINAL_SQL}`,
        [ticketId, this.now, bit(snapshot.schedulable ?? false), snapshot.queuePosition ?? null, snapshot.nextPollAt ?? null, this.now, id],
      ) === 1
    );
  }

  /**
   * Applies a status-poll answer for the task's CURRENT ticket; refused when the task has moved
   * on to another ticket or is terminal (a late answer must not overwrite newer truth).
   */
  applySnapshot(id: string, ticketId: string, snapshot: TicketSnapshot): boolean {
    const encoded = { ...snapshot, schedulable: snapshot.schedulable === undefined ? undefined : bit(snapshot.schedulable) };
    const { sets, params } = assignmentsOf(encoded, {
      schedulable: 'schedulable',
      queuePosition: 'queue_position',
      nextPollAt: 'next_poll_at',
    });
    sets.push('updated_at = ?');
    params.push(this.now);
    return (
      this.db.run(
        `UPDATE off_peak_tasks SET ${sets.join(', ')}
         WHERE off_peak_task_id = ? AND server_ticket_id = ? AND status NOT IN ${TERMINAL_SQL}`,
        [...params, id, ticketId],
      ) === 1
    );
  }

  /** Drops the current-ticket snapshot (it expired or is unknown), optionally only if it is still `ticketId`. */
  clearTicket(id: string, ticketId?: string): boolean {
    const guard = ticketId === undefined ? '' : ' AND server_ticket_id = ?';
    return (
      this.db.run(
        `UPDATE off_peak_tasks SET server_ticket_id = NULL, schedulable = 0, queue_position = NULL,
           next_poll_at = NULL, updated_at = ?
         WHERE off_peak_task_id = ? AND status NOT IN ${TERMINAL_SQL}${guard}`,
        ticketId === undefined ? [this.now, id] : [this.now, id, ticketId],
      ) === 1
    );
  }

  /**
   * Scheduler single-flight claim: a dispatchable queued task (see DISPATCHABLE_SQL)
   * that is unclaimed, or claimed longer than `zombieAfterMs` ago (a crashed dispatcher).
   */
  claim(id: string, options: { zombieAfterMs?: number } = {}): boolean {
    const zombieBefore = this.now - (options.zombieAfterMs ?? ZOMBIE_CLAIM_MS);
    return (
      this.db.run(
        `UPDATE off_peak_tasks SET claim_running = 1, claimed_at = ?, updated_at = ?
         WHERE off_peak_task_id = (
           SELECT t.off_peak_task_id FROM off_peak_tasks t LEFT JOIN off_peak_tickets k ON k.ticket_id = t.server_ticket_id
           WHERE t.off_peak_task_id = ? AND ${DISPATCHABLE_SQL})`,
        [this.now, this.now, id, zombieBefore, this.now, this.now],
      ) === 1
    );
  }

  /** Claims older than `zombieAfterMs` (their dispatcher died) are cleared; returns how many. */
  releaseZombieClaims(options: { zombieAfterMs?: number } = {}): number {
    const zombieBefore = this.now - (options.zombieAfterMs ?? ZOMBIE_CLAIM_MS);
    return this.db.run(
      'UPDATE off_peak_tasks SET claim_running = 0, claimed_at = NULL, updated_at = ? WHERE claim_running = 1 AND claimed_at < ?',
      [this.now, zombieBefore],
    );
  }

  /**
   * Records why the last background attempt for a task failed (e.g. a retake), shown on its card.
   * `onlyWithoutTicket`: only while the task has no current ticket. Writes nothing when unchanged.
   */
  setLastError(id: string, error: string, options: { onlyWithoutTicket?: boolean } = {}): boolean {
    checkText('last error', error);
    return (
      this.db.run(
        `UPDATE off_peak_tasks SET last_error = ? WHERE off_peak_task_id = ? AND last_error IS NOT ?${options.onlyWithoutTicket ? ' AND server_ticket_id IS NULL' : ''}`,
        [error.slice(0, 1000), id, error.slice(0, 1000)],
      ) === 1
    );
  }

  /** Clears last_error when it starts with `prefix` (an error of that kind is over). */
  clearLastError(id: string, prefix: string): boolean {
    return (
      this.db.run('UPDATE off_peak_tasks SET last_error = NULL WHERE off_peak_task_id = ? AND substr(last_error, 1, ?) = ?', [
        id,
        prefix.length,
        prefix,
      ]) === 1
    );
  }

  /**
   * Releases a claim without starting the task: backoff not due, or the dispatch failed
   * (`error` set: attempt_count + 1 and last_error recorded).
   */
  releaseClaim(id: string, failure?: { error: string }): boolean {
    const sql = failure
      ? `UPDATE off_peak_tasks SET claim_running = 0, claimed_at = NULL, attempt_count = COALESCE(attempt_count, 0) + 1,
           last_error = ?, updated_at = ? WHERE off_peak_task_id = ? AND claim_running = 1`
      : `UPDATE off_peak_tasks SET claim_running = 0, claimed_at = NULL, updated_at = ?
         WHERE off_peak_task_id = ? AND claim_running = 1`;
    return this.db.run(sql, failure ? [failure.error, this.now, id] : [this.now, id]) === 1;
  }

  /** Aggregate settle ack (kept in step with the ledger): only terminal rows, only once. */
  markSettled(id: string): boolean {
    return (
      this.db.run(
        `UPDATE off_peak_tasks SET settled_at = ?, updated_at = ?
         WHERE off_peak_task_id = ? AND status IN ${TERMINAL_SQL} AND settled_at IS NULL`,
        [this.now, this.now, id],
      ) === 1
    );
  }
}
