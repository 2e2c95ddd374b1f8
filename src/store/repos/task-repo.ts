/**
 * Typed access to `off_peak_tasks` inside one store transaction. Every state change is a
 * conditional UPDATE built from the core's transition table and returns whether it applied, so
 * a late or racing writer (another window, a late agent result) is refused, never overwrites.
 */
import { EDITABLE_STATUSES, TRANSITIONS, type TaskTransition } from '../../core/task-state';
import { PERMISSION_MODES, TASK_STATUSES, TERMINAL_STATUSES, workspaceKeyOf, type OffPeakTask, type PermissionMode, type TaskStatus } from '../../core/types';
import { newTaskId } from '../../core/ids';
import { invalidInput } from '../errors';
import { taskFromRow } from './rows';
import { DISPATCH_TABLE, HANDOFF_TABLE, RUNTIME_TABLE } from '../migrations/tables';
import { assignmentsOf, listQuery, placeholders, type SqlDb, type SqlParam } from '../db/sql';

// The statuses are fixed identifiers (no user text), so they are inlined rather than bound.
const TERMINAL_SQL = `(${TERMINAL_STATUSES.map((s) => `'${s}'`).join(', ')})`;

/** Default age after which a dispatcher's claim counts as abandoned (a crashed window). */
/**
 * When a task's History row says it was triggered, in SQL (NULL: no row): as `historyTriggeredAt`
 * in src/core/history.ts, its first segment's start, or when a task that never started failed or was cancelled.
 */
export const HISTORY_TRIGGERED_AT_SQL = "(CASE WHEN started_at IS NOT NULL THEN started_at WHEN status IN ('failed', 'cancelled') THEN COALESCE(ended_at, queued_at) END)";

export const ZOMBIE_CLAIM_MS = 10 * 60_000;

/**
 * A queued task the scheduler may dispatch (alias `t`, current ticket `k` LEFT JOINed): the
 * gateway said ready, or its current ticket is still ready/active in the ledger (a segment
 * interrupted by a restart resumes with that ticket at once), and the ledger's deadline of that
 * ticket has not passed (a window reopened after it: the sync retires the ticket and retakes,
 * docs/flows.md#a-question-across-a-reload). One source for claim and due; its parameters are
 * the zombie-claim cut-off, then now twice.
 */
const DISPATCHABLE_SQL = `t.status = 'queued' AND t.server_ticket_id IS NOT NULL
  AND (t.schedulable = 1
       OR (k.server_state IN ('ready', 'active') AND k.settle_state = 'none' AND COALESCE(k.end_reason, '') <> 'expired'))
  AND (COALESCE(t.claim_running, 0) = 0 OR t.claimed_at IS NULL OR t.claimed_at < ?)
  AND NOT COALESCE((k.server_state = 'active' AND k.expires_at <= ?) OR (k.server_state = 'ready' AND k.ready_deadline <= ?), 0)`;

export interface NewTaskInput {
  /** Defaults to a random UUID. The service passes the id it already used for the take. */
  id?: string;
  title: string;
  prompt: string;
  permissionMode: PermissionMode;
  model?: string | null;
  thoughtLevel?: string | null;
  workspacePath: string;
  workspaceIdentity?: string | null;
  /** The ticket the take returned (docs/flows.md#create: take first, INSERT only on success). */
  serverTicketId?: string | null;
  registeredAt?: number | null;
  schedulable?: boolean;
  queuePosition?: number | null;
  nextPollAt?: number | null;
  /** Take the ticket at this time, no earlier (docs/flows.md#schedules-and-chains); the task is inserted without one. */
  notBefore?: number | null;
  /** Wait for this task to complete (docs/flows.md#schedules-and-chains), its title then, and whether to run in its branch. */
  after?: { taskId: string; title: string; continueInBranch: boolean } | null;
}

export interface TaskEdit {
  title?: string;
  prompt?: string;
  permissionMode?: PermissionMode;
  model?: string | null;
  thoughtLevel?: string | null;
  /** Only while the task has taken no ticket yet (null: take it now). */
  notBefore?: number | null;
}

function optionalTime(name: string, value: unknown): number | null {
  if (value == null || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0)) return value ?? null;
  throw invalidInput(`${name} must be a time (epoch ms)`);
}

export interface TaskFilter {
  status?: TaskStatus | readonly TaskStatus[];
  workspaceKey?: string;
  ids?: readonly string[];
  /** true: only rows with a server_ticket_id; false: only rows without. */
  hasTicket?: boolean;
  /** true: terminal rows whose settle was never acknowledged (the aggregate's outbox). */
  unsettledTerminal?: boolean;
  /** true: rows with a visible History row (started and not hidden). */
  historyVisible?: boolean;
  limit?: number;
}

export interface TicketSnapshot {
  schedulable?: boolean;
  queuePosition?: number | null;
  nextPollAt?: number | null;
}

export interface TerminalDetails {
  failureReason?: string | null;
  filesChanged?: number | null;
}

function checkText(name: string, value: unknown, allowEmpty = false): string {
  if (typeof value !== 'string') throw invalidInput(`${name} must be a string`);
  if (!allowEmpty && value.trim() === '') throw invalidInput(`${name} must not be empty`);
  return value;
}

function checkPermissionMode(value: unknown): PermissionMode {
  if (!PERMISSION_MODES.includes(value as PermissionMode)) {
    throw invalidInput(`permission mode must be one of ${PERMISSION_MODES.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value as PermissionMode;
}

function optionalText(name: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return checkText(name, value, true);
}

function bit(b: boolean): number {
  return b ? 1 : 0;
}

export class TaskRepo {
  constructor(
    private readonly db: SqlDb,
    private readonly now: number,
  ) {}

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
        id, title, prompt, permissionMode, optionalText('model', input.model), optionalText('thought level', input.thoughtLevel),
        workspaceKeyOf(workspacePath, workspaceIdentity), workspacePath, workspaceIdentity,
        now,
        input.serverTicketId ?? null,
        input.serverTicketId ? (input.registeredAt ?? now) : (input.registeredAt ?? null),
        bit(input.schedulable ?? false), input.queuePosition ?? null, input.nextPollAt ?? null,
        now, now, optionalTime('not before', input.notBefore),
        input.after ? checkText('after', input.after.taskId) : null, input.after ? checkText('after title', input.after.title, true) : null, bit(input.after?.continueInBranch ?? false),
      ],
    );
    return this.get(id)!;
  }

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

  /** The conditional UPDATE behind every transition: applies only from the allowed states. */
  private transition(id: string, transition: TaskTransition, set: string, params: SqlParam[]): boolean {
    const rule = TRANSITIONS[transition];
    let guard = `status IN (${placeholders(rule.from.length)})`;
    if (rule.claim === 'unclaimed') guard += ' AND COALESCE(claim_running, 0) = 0';
    if (rule.claim === 'claimed') guard += ' AND claim_running = 1';
    const changed = this.db.run(
      `UPDATE off_peak_tasks SET status = ?, ${set ? `${set}, ` : ''}updated_at = ? WHERE off_peak_task_id = ? AND ${guard}`,
      [rule.to, ...params, this.now, id, ...rule.from],
    );
    return changed === 1;
  }

  /** queued & unclaimed -> paused. The ticket keeps its place in the gateway's FIFO. */
  pause(id: string): boolean {
    return this.transition(id, 'pause', '', []);
  }

  /** paused -> queued. Whether the old ticket is still alive is the service's call (docs/flows.md#pause-continue-edit). */
  continue(id: string): boolean {
    return this.transition(id, 'continue', '', []);
  }

  /**
   * queued (claimed by this dispatcher) -> running: the agent accepted the prompt. Refused if the
   * task was paused or cancelled while the dispatch was in flight (docs/flows.md#dispatch). Keeps the first
   * started_at and fills the session binding; clears the claim and the last dispatch error.
   */
  markRunning(id: string, binding: { conversationId?: string | null; sessionId?: string | null } = {}): boolean {
    return this.transition(
      id,
      'markRunning',
      `started_at = COALESCE(started_at, ?), conversation_id = COALESCE(?, conversation_id),
       session_id = COALESCE(?, session_id), claim_running = 0, claimed_at = NULL, last_error = NULL`,
      // conversation_id is the id the Session entry opens: the agent's session (docs/flows.md#open-session).
      [this.now, binding.conversationId ?? binding.sessionId ?? null, binding.sessionId ?? null],
    );
  }

  /**
   * running -> queued: the segment's ticket expired (3102) or the run was interrupted (restart,
   * crash). Keeps session, started_at and queued_at; the task waits for a (new) ready ticket.
   */
  requeue(id: string): boolean {
    return this.transition(id, 'requeue', 'schedulable = 0, queue_position = NULL, claim_running = 0, claimed_at = NULL', []);
  }

  /**
   * running -> needs_input: a permission question went unanswered (docs/flows.md#questions-park-the-task).
   * No agent and no ticket until it is answered: the ticket snapshot is cleared (its ticket is settled).
   */
  park(id: string): boolean {
    return this.transition(
      id,
      'park',
      'server_ticket_id = NULL, registered_at = NULL, schedulable = 0, queue_position = NULL, next_poll_at = NULL, claim_running = 0, claimed_at = NULL',
      [],
    );
  }

  /** needs_input -> queued without a ticket: the question was answered; the caller retakes (same task id, same session). */
  answerParked(id: string): boolean {
    return this.transition(id, 'answerParked', 'schedulable = 0, queue_position = NULL, claim_running = 0, claimed_at = NULL', []);
  }

  complete(id: string, details: TerminalDetails = {}): boolean {
    return this.terminal(id, 'complete', { failureReason: null, filesChanged: details.filesChanged });
  }

  fail(id: string, details: TerminalDetails = {}): boolean {
    return this.terminal(id, 'fail', details);
  }

  cancel(id: string, details: TerminalDetails = {}): boolean {
    return this.terminal(id, 'cancel', details);
  }

  private terminal(id: string, transition: 'complete' | 'fail' | 'cancel', details: TerminalDetails): boolean {
    return this.transition(
      id,
      transition,
      `ended_at = ?, failure_reason = ?, files_changed = COALESCE(?, files_changed),
       claim_running = 0, claimed_at = NULL, schedulable = 0, queue_position = NULL`,
      [this.now, details.failureReason ?? null, details.filesChanged ?? null],
    );
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
    if (deleted) for (const table of [DISPATCH_TABLE, RUNTIME_TABLE, HANDOFF_TABLE]) this.db.run(`DELETE FROM ${table} WHERE task_id = ?`, [id]);
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
    const { sets, params } = assignmentsOf(encoded, { schedulable: 'schedulable', queuePosition: 'queue_position', nextPollAt: 'next_poll_at' });
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

  /** Claims older than `zombieAfterMs` (their dispatcher died) are cleared; returns how many. */
  releaseZombieClaims(options: { zombieAfterMs?: number } = {}): number {
    const zombieBefore = this.now - (options.zombieAfterMs ?? ZOMBIE_CLAIM_MS);
    return this.db.run('UPDATE off_peak_tasks SET claim_running = 0, claimed_at = NULL, updated_at = ? WHERE claim_running = 1 AND claimed_at < ?', [this.now, zombieBefore]);
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
    return this.db.run('UPDATE off_peak_tasks SET last_error = NULL WHERE off_peak_task_id = ? AND substr(last_error, 1, ?) = ?', [id, prefix.length, prefix]) === 1;
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

  /** Restart/crash recovery (docs/flows.md#recovery): every running task back to queued, same session. */
  requeueInterrupted(): string[] {
    const ids = this.list({ status: ['running', 'awaiting'] }).map((t) => t.id);
    return ids.filter((id) => this.requeue(id));
  }
}
