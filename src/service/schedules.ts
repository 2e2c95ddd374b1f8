/**
 * The user's actions on repeating schedules (docs/flows.md#schedules-and-chains), in any window:
 * create, edit (future occurrences only), pause or resume, delete. They only write the schedule
 * row; the lease holder's sync fires occurrences (src/service/schedule-firing.ts), and a write here
 * re-plans its one timer.
 */
import { ruleProblem, type ScheduleRule } from '../core/schedule-rules';
import { isKnownTimeZone } from '../core/zoned-time';
import { shortTaskTitle } from '../core/task-title';
import { PERMISSION_MODES } from '../core/types';
import type { ScheduleDraftRecord, ScheduleRecord, TaskStore } from '../store';
import { ServiceError, toServiceError } from './errors';

export interface ScheduleActionsOptions {
  store: TaskStore;
  /** The zone a new or edited rule is read in (the machine's). */
  timeZone: () => string;
  newScheduleId: () => string;
  /** The sync loop's planning: its one timer covers the schedules' next occurrence. */
  plan: () => void;
}

function validDraft(draft: ScheduleDraftRecord, rule: ScheduleRule, zone: string): ScheduleDraftRecord {
  const bad = (m: string) => new ServiceError('invalid_input', m);
  if (!draft || typeof draft !== 'object') throw bad("The schedule's task is missing.");
  if (typeof draft.prompt !== 'string' || draft.prompt.trim() === '') throw bad('The prompt must not be empty.');
  if (typeof draft.workspacePath !== 'string' || draft.workspacePath.trim() === '') throw bad('The workspace path must not be empty.');
  if (!PERMISSION_MODES.includes(draft.permissionMode)) throw bad(`The permission mode must be one of ${PERMISSION_MODES.join(', ')}.`);
  const problem = ruleProblem(rule);
  if (problem) throw bad(`The schedule's rule is not usable: ${problem}.`);
  if (!isKnownTimeZone(zone)) throw bad(`Unknown time zone ${zone}.`);
  // A schedule without a title is named by its prompt's first line (its runs add their date).
  return {
    ...draft,
    title: shortTaskTitle({ title: (draft.title ?? '').trim(), prompt: draft.prompt }, 'Schedule', 60),
    checkCommand: draft.checkCommand?.trim() || null,
  };
}

export class ScheduleActions {
  constructor(private readonly options: ScheduleActionsOptions) {}

  list(): ScheduleRecord[] {
    return this.options.store.read((tx) => tx.schedules.list());
  }

  async create(draft: ScheduleDraftRecord, rule: ScheduleRule): Promise<ScheduleRecord> {
    const zone = this.options.timeZone();
    const clean = validDraft(draft, rule, zone);
    const id = this.options.newScheduleId();
    return this.write('create the schedule', (tx) => tx.schedules.insert(id, clean, rule, zone));
  }

  /** Future occurrences only: a run already queued keeps the task it was queued with. */
  async edit(id: string, draft: ScheduleDraftRecord, rule: ScheduleRule): Promise<ScheduleRecord> {
    const zone = this.options.timeZone();
    const clean = validDraft(draft, rule, zone);
    return this.write('edit the schedule', (tx) => (tx.schedules.edit(id, clean, rule, zone) ? tx.schedules.get(id) : undefined), id);
  }

  /** Paused: nothing fires; resumed: the next occurrence after now, no catch-up for the paused stretch. */
  setPaused(id: string, paused: boolean): Promise<ScheduleRecord> {
    return this.write(
      paused ? 'pause the schedule' : 'resume the schedule',
      (tx) => (tx.schedules.setPaused(id, paused) ? tx.schedules.get(id) : undefined),
      id,
    );
  }

  /** Fires no more; a run already queued stays as an ordinary task. */
  async delete(id: string): Promise<void> {
    await this.write('delete the schedule', (tx) => (tx.schedules.delete(id) ? true : undefined), id);
  }

  private async write<T>(
    what: string,
    fn: (tx: Parameters<Parameters<TaskStore['mutate']>[0]>[0]) => T | undefined,
    id?: string,
  ): Promise<T> {
    let result: T | undefined;
    try {
      result = await this.options.store.mutate(fn);
    } catch (e) {
      throw toServiceError(what, e);
    }
    if (result === undefined) throw new ServiceError('not_found', `Cannot ${what}: there is no schedule ${id}.`);
    this.options.plan();
    return result;
  }
}
