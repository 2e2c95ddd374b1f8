/**
 * Repeating schedules (v20; docs/flows.md#schedules-and-chains): a schedule is a saved task and a
 * rule (off_peak_schedules); every occurrence handled is one row of off_peak_schedule_runs, keyed
 * by its occurrence key. The key is the table's primary key, so the same occurrence can never be
 * recorded, nor its task queued, twice, whichever window fires it. A run's task is an ordinary
 * task row; the run row names it.
 */
import type { ScheduleRule } from '../../core/schedule-rules';
import type { PermissionMode } from '../../core/types';
import type { IsolationMode } from './isolation-repo';
import type { SqlRow } from '../db/sql';
import { SCHEDULE_RUNS_TABLE, SCHEDULES_TABLE } from '../migrations/tables';
import { StoreRepo } from './store-repo';
import { cellReader, oneOf } from './cells';

/** The task a schedule queues at each occurrence (the create form's fields). */
export interface ScheduleDraftRecord {
  title: string;
  prompt: string;
  workspacePath: string;
  workspaceIdentity: string | null;
  permissionMode: PermissionMode;
  model: string | null;
  thoughtLevel: string | null;
  /** Its own branch in a worktree, or in place; null: as a task created without the choice (in place). */
  isolation: IsolationMode | null;
  checkCommand: string | null;
}

export interface ScheduleRecord extends ScheduleDraftRecord {
  id: string;
  rule: ScheduleRule;
  /** The IANA zone its rule's wall-clock times are in (the machine's when it was saved). */
  zone: string;
  paused: boolean;
  /** The due time of the last occurrence fired or skipped, or when it was made, edited or resumed: nothing at or before it fires. */
  handledThrough: number;
  createdAt: number;
  updatedAt: number;
}

export type ScheduleRunOutcome = 'queued' | 'skipped';

export interface ScheduleRunRecord {
  occurrenceKey: string;
  scheduleId: string;
  dueAt: number;
  firedAt: number;
  /** The queued run's task (null for a skipped occurrence). */
  taskId: string | null;
  outcome: ScheduleRunOutcome;
  /** Fired well after its due time (the machine slept, VS Code was closed). */
  catchUp: boolean;
  /** Earlier occurrences of the stretch that did not run. */
  missedCount: number;
  /** Why it was skipped. */
  note: string | null;
}

const scheduleCells = cellReader({
  str: ['title', 'prompt', 'workspacePath', 'zone'],
  strOrNull: ['workspaceIdentity', 'model', 'thoughtLevel', 'checkCommand'],
  num: ['handledThrough', 'createdAt', 'updatedAt'],
  bool: ['paused'],
});

function toSchedule(r: SqlRow): ScheduleRecord {
  return {
    ...scheduleCells(r),
    id: String(r.schedule_id),
    permissionMode: String(r.permission_mode) as PermissionMode,
    isolation: oneOf(r.isolation, ['worktree', 'inPlace'], null),
    rule: JSON.parse(String(r.rule_json)) as ScheduleRule,
  };
}

const runCells = cellReader({
  str: ['occurrenceKey', 'scheduleId'],
  strOrNull: ['taskId', 'note'],
  num: ['dueAt', 'firedAt', 'missedCount'],
  bool: ['catchUp'],
});

function toRun(r: SqlRow): ScheduleRunRecord {
  return { ...runCells(r), outcome: r.outcome === 'skipped' ? 'skipped' : 'queued' };
}

const draftParams = (d: ScheduleDraftRecord) => [
  d.title,
  d.prompt,
  d.workspacePath,
  d.workspaceIdentity,
  d.permissionMode,
  d.model,
  d.thoughtLevel,
  d.isolation,
  d.checkCommand,
];

export class ScheduleRepo extends StoreRepo {
  /** A new schedule; its first occurrence is the first one after now. */
  insert(id: string, draft: ScheduleDraftRecord, rule: ScheduleRule, zone: string): ScheduleRecord {
    this.db.run(
      `INSERT INTO ${SCHEDULES_TABLE} (schedule_id, title, prompt, workspace_path, workspace_identity, permission_mode, model, thought_level, isolation, check_command,
        rule_json, zone, paused, handled_through, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
      [id, ...draftParams(draft), JSON.stringify(rule), zone, this.now, this.now, this.now],
    );
    return this.get(id)!;
  }

  /** A schedule that is not deleted. */
  get(id: string): ScheduleRecord | undefined {
    const row = this.db.get(`SELECT * FROM ${SCHEDULES_TABLE} WHERE schedule_id = ? AND deleted_at IS NULL`, [id]);
    return row ? toSchedule(row) : undefined;
  }

  /** Every schedule that is not deleted, oldest first. */
  list(): ScheduleRecord[] {
    return this.db.all(`SELECT * FROM ${SCHEDULES_TABLE} WHERE deleted_at IS NULL ORDER BY created_at, schedule_id`).map(toSchedule);
  }

  /** A schedule's title, also once deleted (a run's card keeps naming it). */
  titles(): Map<string, string> {
    return new Map(this.db.all(`SELECT schedule_id, title FROM ${SCHEDULES_TABLE}`).map((r) => [String(r.schedule_id), String(r.title)]));
  }

  /** New task and rule for future occurrences: none at or before now fires after the edit. False: no such schedule. */
  edit(id: string, draft: ScheduleDraftRecord, rule: ScheduleRule, zone: string): boolean {
    return (
      this.db.run(
        `UPDATE ${SCHEDULES_TABLE} SET title = ?, prompt = ?, workspace_path = ?, workspace_identity = ?, permission_mode = ?, model = ?, thought_level = ?, isolation = ?, check_command = ?,
          rule_json = ?, zone = ?, handled_through = MAX(handled_through, ?), updated_at = ? WHERE schedule_id = ? AND deleted_at IS NULL`,
        [...draftParams(draft), JSON.stringify(rule), zone, this.now, this.now, id],
      ) === 1
    );
  }

  /** Paused, or resumed: occurrences of the paused stretch never fire (no catch-up for them). */
  setPaused(id: string, paused: boolean): boolean {
    return (
      this.db.run(
        `UPDATE ${SCHEDULES_TABLE} SET paused = ?, handled_through = MAX(handled_through, ?), updated_at = ? WHERE schedule_id = ? AND deleted_at IS NULL`,
        [paused ? 1 : 0, this.now, this.now, id],
      ) === 1
    );
  }

  /** Deleted: it fires no more; its runs' tasks stay ordinary tasks. */
  delete(id: string): boolean {
    return (
      this.db.run(`UPDATE ${SCHEDULES_TABLE} SET deleted_at = ?, updated_at = ? WHERE schedule_id = ? AND deleted_at IS NULL`, [
        this.now,
        this.now,
        id,
      ]) === 1
    );
  }

  /** The occurrence at `dueAt` and all before it are handled. */
  markHandled(id: string, dueAt: number): void {
    this.db.run(`UPDATE ${SCHEDULES_TABLE} SET handled_through = MAX(handled_through, ?) WHERE schedule_id = ?`, [dueAt, id]);
  }

  /**
   * Records an occurrence once: false (and nothing written) when its key is already recorded, by
   * this window or another. The caller queues the run's task only after a true.
   */
  insertRun(run: Omit<ScheduleRunRecord, 'firedAt'>): boolean {
    return (
      this.db.run(
        `INSERT OR IGNORE INTO ${SCHEDULE_RUNS_TABLE} (occurrence_key, schedule_id, due_at, fired_at, task_id, outcome, catch_up, missed_count, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [run.occurrenceKey, run.scheduleId, run.dueAt, this.now, run.taskId, run.outcome, run.catchUp ? 1 : 0, run.missedCount, run.note],
      ) === 1
    );
  }

  getRun(occurrenceKey: string): ScheduleRunRecord | undefined {
    const row = this.db.get(`SELECT * FROM ${SCHEDULE_RUNS_TABLE} WHERE occurrence_key = ?`, [occurrenceKey]);
    return row ? toRun(row) : undefined;
  }

  /** A schedule's runs, latest due first. */
  runsOf(scheduleId: string, limit = 20): ScheduleRunRecord[] {
    return this.db
      .all(`SELECT * FROM ${SCHEDULE_RUNS_TABLE} WHERE schedule_id = ? ORDER BY due_at DESC, fired_at DESC LIMIT ?`, [scheduleId, limit])
      .map(toRun);
  }

  /** The latest run that queued a task (the previous run an occurrence waits on). */
  lastQueued(scheduleId: string): ScheduleRunRecord | undefined {
    const row = this.db.get(
      `SELECT * FROM ${SCHEDULE_RUNS_TABLE} WHERE schedule_id = ? AND outcome = 'queued' ORDER BY due_at DESC LIMIT 1`,
      [scheduleId],
    );
    return row ? toRun(row) : undefined;
  }

  /** Every queued run, by its task id (one read for a panel snapshot). */
  runsByTask(): Map<string, ScheduleRunRecord> {
    return new Map(this.db.all(`SELECT * FROM ${SCHEDULE_RUNS_TABLE} WHERE task_id IS NOT NULL`).map((r) => [String(r.task_id), toRun(r)]));
  }
}
