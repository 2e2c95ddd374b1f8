/**
 * Where each task works (off_peak_task_isolation, v9; docs/flows.md#isolation): on its own branch
 * in its own git worktree under globalStorage, or in place in its folder. One row per task,
 * written when the task is created (the mode asked for) and completed at its first start (the
 * worktree's path, branch and base commit). A follow-up gets a copy of the row of the task it
 * continues, so it runs in the same worktree. The changed files (with +/- line counts) are
 * written after each segment. The row outlives the task row on purpose: whoever removes a deleted
 * task's worktree reads it first, then forgets it (`forget`).
 */
import { ISOLATION_TABLE, TASKS_TABLE } from '../migrations/tables';
import type { SqlRow } from '../db/sql';
import { StoreRepo } from './store-repo';
import { cellReader, oneOf } from './cells';

export type IsolationMode = 'worktree' | 'inPlace';
export type BroughtHome = 'discarded' | 'merged' | 'applied';

/** One changed path of a task: `added`/`removed` line counts are null for a binary file. */
export interface ChangedFile {
  path: string;
  status: 'added' | 'modified' | 'deleted';
  added: number | null;
  removed: number | null;
  /** The blob the path had at the first start (the review's original); null: none then, or not kept. */
  oldBlob: string | null;
}

export interface TaskIsolation {
  taskId: string;
  mode: IsolationMode;
  /** The folder the task was created for (the repository whose worktree it runs in). */
  repoPath: string;
  /** Null until the first start created it (always null in place). */
  worktreePath: string | null;
  branch: string | null;
  /** The commit the worktree's branch started from (the folder's HEAD at the first start). */
  baseCommit: string | null;
  /** Why a task asked to run on its own branch runs in place (e.g. "not a git repository"). */
  note: string | null;
  /** The changed files counted after the last segment; null until counted or when unknown. */
  changes: ChangedFile[] | null;
  /**
   * When the worktree was found removed by hand (reported on the card), or, on a row merged or
   * applied, when Discard removed its worktree and branch afterwards (the record stays).
   */
  missingAt: number | null;
  /** What the user did with the branch (the card says it, and when). */
  broughtHome: { kind: BroughtHome; at: number } | null;
  createdAt: number;
}

function parseChanges(raw: unknown): ChangedFile[] | null {
  if (typeof raw !== 'string') return null;
  try {
    const parsed = JSON.parse(raw) as unknown;
    return Array.isArray(parsed) ? (parsed as ChangedFile[]) : null;
  } catch {
    return null;
  }
}

const isolationCells = cellReader({
  str: ['taskId', 'repoPath'],
  strOrNull: ['worktreePath', 'branch', 'baseCommit', 'note'],
  numOrNull: ['missingAt'],
  num: ['createdAt'],
});

function toIsolation(r: SqlRow): TaskIsolation {
  const broughtHome = oneOf(r.brought_home, ['discarded', 'merged', 'applied'], null);
  return {
    ...isolationCells(r),
    mode: r.mode === 'worktree' ? 'worktree' : 'inPlace',
    changes: parseChanges(r.changes_json),
    broughtHome: broughtHome ? { kind: broughtHome, at: Number(r.brought_home_at) } : null,
  };
}

export class IsolationRepo extends StoreRepo {
  /** At creation: the mode asked for (a follow-up passes its first task's worktree along). */
  insert(
    row: Pick<TaskIsolation, 'taskId' | 'mode' | 'repoPath'> & Partial<Pick<TaskIsolation, 'worktreePath' | 'branch' | 'baseCommit'>>,
  ): boolean {
    return (
      this.db.run(
        `INSERT OR IGNORE INTO ${ISOLATION_TABLE} (task_id, mode, repo_path, worktree_path, branch, base_commit, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
        [row.taskId, row.mode, row.repoPath, row.worktreePath ?? null, row.branch ?? null, row.baseCommit ?? null, this.now],
      ) === 1
    );
  }

  get(taskId: string): TaskIsolation | undefined {
    return this.recordOfTask(ISOLATION_TABLE, taskId, toIsolation);
  }

  /** Every row, by task id (one read for a panel snapshot). */
  all(): Map<string, TaskIsolation> {
    return this.recordsByTask(ISOLATION_TABLE, toIsolation);
  }

  /**
   * The first start made the worktree (only once: a later call changes nothing), or a follow-up
   * made again the one an empty task left (its path kept, no branch: `forgetEmptyBranch`).
   */
  recordWorktree(taskId: string, where: { worktreePath: string; branch: string; baseCommit: string }): boolean {
    return (
      this.db.run(
        `UPDATE ${ISOLATION_TABLE} SET worktree_path = ?, branch = ?, base_commit = ?, missing_at = NULL, note = NULL
         WHERE task_id = ? AND (worktree_path IS NULL OR branch IS NULL)`,
        [where.worktreePath, where.branch, where.baseCommit, taskId],
      ) === 1
    );
  }

  /** A task asked to run on its own branch runs in place after all (its folder is not a git repository). */
  fallBackInPlace(taskId: string, note: string): boolean {
    return (
      this.db.run(`UPDATE ${ISOLATION_TABLE} SET mode = 'inPlace', note = ?, worktree_path = NULL WHERE task_id = ? AND branch IS NULL`, [
        note,
        taskId,
      ]) === 1
    );
  }

  /** The task's worktree was removed before its agent ever started: a later start makes a new one. */
  forgetWorktree(taskId: string): boolean {
    return (
      this.db.run(`UPDATE ${ISOLATION_TABLE} SET worktree_path = NULL, branch = NULL, base_commit = NULL WHERE task_id = ?`, [taskId]) === 1
    );
  }

  /**
   * The task changed nothing and its worktree and branch were removed (docs/flows.md#isolation):
   * the branch is forgotten, the path kept (a follow-up makes its worktree there again), `note` says so.
   */
  forgetEmptyBranch(taskId: string, note: string): boolean {
    return this.db.run(`UPDATE ${ISOLATION_TABLE} SET branch = NULL, base_commit = NULL, note = ? WHERE task_id = ?`, [note, taskId]) === 1;
  }

  recordChanges(taskId: string, changes: ChangedFile[] | null): boolean {
    return (
      this.db.run(`UPDATE ${ISOLATION_TABLE} SET changes_json = ? WHERE task_id = ?`, [
        changes === null ? null : JSON.stringify(changes),
        taskId,
      ]) === 1
    );
  }

  /** The user discarded the task's branch (its worktree and branch are gone; the list of changes stays) or merged it. */
  recordBroughtHome(taskId: string, kind: BroughtHome): boolean {
    return (
      this.db.run(`UPDATE ${ISOLATION_TABLE} SET brought_home = ?, brought_home_at = ? WHERE task_id = ?`, [kind, this.now, taskId]) === 1
    );
  }

  /** Discard removed the worktree and branch of work already merged or applied: that record stays, the removal is noted. */
  recordRemovedAfterBringHome(taskId: string): boolean {
    return (
      this.db.run(`UPDATE ${ISOLATION_TABLE} SET missing_at = ? WHERE task_id = ? AND brought_home IN ('merged', 'applied')`, [
        this.now,
        taskId,
      ]) === 1
    );
  }

  markMissing(taskId: string): boolean {
    return this.db.run(`UPDATE ${ISOLATION_TABLE} SET missing_at = COALESCE(missing_at, ?) WHERE task_id = ?`, [this.now, taskId]) === 1;
  }

  /** Other tasks (still in the DB) that run in the same worktree (a follow-up and the task it continues). */
  sharersOf(worktreePath: string, exceptTaskId: string): string[] {
    return this.db
      .all(
        `SELECT i.task_id FROM ${ISOLATION_TABLE} i JOIN ${TASKS_TABLE} t ON t.off_peak_task_id = i.task_id
         WHERE i.worktree_path = ? AND i.task_id <> ?`,
        [worktreePath, exceptTaskId],
      )
      .map((r) => String(r.task_id));
  }

  /**
   * The scheduler's claim rule (docs/flows.md#isolation): a task that runs in place (mode
   * inPlace) waits while another task runs or is claimed in place in the same folder (mode
   * inPlace, or no row: a task created without an isolation choice, which itself never waits, as
   * before isolation existed). The task that holds the folder, or undefined when it is free.
   */
  inPlaceHolder(taskId: string, workspaceKey: string): { id: string; title: string } | undefined {
    const own = this.get(taskId);
    if (own?.mode !== 'inPlace') return undefined;
    const row = this.db.get(
      `SELECT t.off_peak_task_id AS id, t.title AS title FROM ${TASKS_TABLE} t LEFT JOIN ${ISOLATION_TABLE} i ON i.task_id = t.off_peak_task_id
       WHERE t.workspace_key = ? AND t.off_peak_task_id <> ? AND (t.status = 'running' OR (t.status = 'queued' AND t.claim_running = 1))
         AND (i.mode IS NULL OR i.mode <> 'worktree')
       ORDER BY t.started_at, t.off_peak_task_id LIMIT 1`,
      [workspaceKey, taskId],
    );
    return row ? { id: String(row.id), title: String(row.title ?? '') } : undefined;
  }

  /** A deleted task's row, once its worktree was dealt with. */
  forget(taskId: string): boolean {
    return this.deleteRowOfTask(ISOLATION_TABLE, taskId);
  }
}
