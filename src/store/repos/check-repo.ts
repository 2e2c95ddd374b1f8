/**
 * A task's check (off_peak_task_checks, v18; docs/flows.md#checks): the command the user typed in
 * the form, never read from the repository, and where its rounds stand. One row per task that has
 * a check, removed with the task by a trigger. The last command used for a folder is kept apart
 * (off_peak_check_commands), so the form still offers it after that task is deleted.
 */
import { CHECK_COMMANDS_TABLE, CHECKS_TABLE } from '../migrations/tables';
import type { SqlRow } from '../db/sql';
import { StoreRepo } from './store-repo';
import { cellReader, oneOf } from './cells';

/**
 * `pending`: the agent has not ended its first turn; `checking`: the check of `round` runs (a
 * segment that ends now re-runs it after the retake); `fixing`: it failed and the session is
 * resumed with its output; `passed` / `failed`: the task's last word; `skipped`: not run, because
 * the agent changed what it runs and the user's answer (or nobody's) did not allow it (`output` says why).
 */
export type CheckState = 'pending' | 'checking' | 'fixing' | 'passed' | 'failed' | 'skipped';

export interface TaskCheck {
  taskId: string;
  command: string;
  state: CheckState;
  /** The round the check is in (1: the check after the agent's first turn); 0 before it. */
  round: number;
  /** The last run's exit code; null before a run, or when it was stopped or timed out. */
  exitCode: number | null;
  /** The tail of the last run's output, control sequences stripped; null before a run. */
  output: string | null;
  /** The check's files the agent changed since the task's base commit, flagged before a run (v21); null: none flagged. */
  agentChanged?: string[] | null;
  updatedAt: number;
}

const STATES: readonly CheckState[] = ['pending', 'checking', 'fixing', 'passed', 'failed', 'skipped'];

function fileList(cell: unknown): string[] | null {
  if (typeof cell !== 'string') return null;
  try {
    const list: unknown = JSON.parse(cell);
    return Array.isArray(list) ? list.filter((f): f is string => typeof f === 'string') : null;
  } catch {
    return null;
  }
}

const checkCells = cellReader({
  str: ['taskId', 'command'],
  num: ['round', 'updatedAt'],
  numOrNull: ['exitCode'],
  strOrNull: ['output'],
});

function toCheck(r: SqlRow): TaskCheck {
  return { ...checkCells(r), state: oneOf(r.state, STATES, 'pending'), agentChanged: fileList(r.agent_changed) };
}

export type CheckProgress = Pick<TaskCheck, 'state' | 'round'> & Partial<Pick<TaskCheck, 'exitCode' | 'output'>>;

export class CheckRepo extends StoreRepo {
  /** The task's check, in the transaction that inserts the task; the folder's last command becomes this one. */
  insert(taskId: string, command: string, workspaceKey: string): void {
    this.db.run(`INSERT OR REPLACE INTO ${CHECKS_TABLE} (task_id, command, state, round, updated_at) VALUES (?, ?, 'pending', 0, ?)`, [
      taskId,
      command,
      this.now,
    ]);
    this.db.run(`INSERT OR REPLACE INTO ${CHECK_COMMANDS_TABLE} (workspace_key, command, used_at) VALUES (?, ?, ?)`, [
      workspaceKey,
      command,
      this.now,
    ]);
  }

  get(taskId: string): TaskCheck | undefined {
    return this.recordOfTask(CHECKS_TABLE, taskId, toCheck);
  }

  /** Every task's check, by task id (one read for a panel snapshot). */
  all(): Map<string, TaskCheck> {
    return this.recordsByTask(CHECKS_TABLE, toCheck);
  }

  /** The folder's last command is no longer offered (a task was queued with the box emptied). */
  forgetCommand(workspaceKey: string): void {
    this.db.run(`DELETE FROM ${CHECK_COMMANDS_TABLE} WHERE workspace_key = ?`, [workspaceKey]);
  }

  /** The command last used for a folder (the form's prefill), or null. */
  lastCommandFor(workspaceKey: string): string | null {
    const row = this.db.get(`SELECT command FROM ${CHECK_COMMANDS_TABLE} WHERE workspace_key = ?`, [workspaceKey]);
    return row ? String(row.command) : null;
  }

  /** The check's files the agent changed, flagged before it runs (the card shows them). */
  flagAgentChanged(taskId: string, files: readonly string[]): boolean {
    return (
      this.db.run(`UPDATE ${CHECKS_TABLE} SET agent_changed = ?, updated_at = ? WHERE task_id = ?`, [
        JSON.stringify(files),
        this.now,
        taskId,
      ]) === 1
    );
  }

  /** Where the rounds stand; exit code and output are kept unless given. False: the task has no check. */
  record(taskId: string, progress: CheckProgress): boolean {
    const sets = ['state = ?', 'round = ?', 'updated_at = ?'];
    const params: (string | number | null)[] = [progress.state, progress.round, this.now];
    if (progress.exitCode !== undefined) {
      sets.push('exit_code = ?');
      params.push(progress.exitCode);
    }
    if (progress.output !== undefined) {
      sets.push('output = ?');
      params.push(progress.output);
    }
    return this.db.run(`UPDATE ${CHECKS_TABLE} SET ${sets.join(', ')} WHERE task_id = ?`, [...params, taskId]) === 1;
  }
}
