/**
 * The state transitions of `off_peak_tasks`: each is a conditional UPDATE built from the core's
 * transition table (src/core/task-state.ts) and returns whether it applied, so a late or racing
 * writer (another window, a late agent result) is refused, never overwrites.
 */
import { TRANSITIONS, type TaskTransition } from '../../core/task-state';
import { placeholders, type SqlParam } from '../db/sql';
import type { TerminalDetails } from './task-input';
import { TaskReads } from './task-reads';

export class TaskTransitions extends TaskReads {
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

  /** Restart/crash recovery (docs/flows.md#recovery): every running task back to queued, same session. */
  requeueInterrupted(): string[] {
    const ids = this.list({ status: ['running', 'awaiting'] }).map((t) => t.id);
    return ids.filter((id) => this.requeue(id));
  }
}
