// Files a task leaves in globalStorage besides its DB rows: its segment directories (agent log,
// pid file, prompt) under runtime/tasks/<task id>/ and the bundled reference agent's session
// transcript <session id>.jsonl. Removed when the task is deleted; Claude Code's own session
// files live in Claude Code's folder and are not ours to delete.
import fs from 'node:fs';
import path from 'node:path';
import type { OffPeakTask } from '../core/types';

export interface TaskFileLocations {
  /** runtime/ in globalStorage (segment directories live in runtime/tasks/<task id>/). */
  runtimeDir: string;
  /** The reference agent's sessions directory. */
  referenceSessionsDir: string;
}

/** A single path segment we created ourselves: never '..', never a separator. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** The files and directories `task` left behind (only names that are safe path segments). */
export function taskLeftovers(where: TaskFileLocations, task: Pick<OffPeakTask, 'id' | 'sessionId'>): string[] {
  const paths: string[] = [];
  if (SAFE_NAME.test(task.id)) paths.push(path.join(where.runtimeDir, 'tasks', task.id));
  if (task.sessionId && SAFE_NAME.test(task.sessionId)) paths.push(path.join(where.referenceSessionsDir, `${task.sessionId}.jsonl`));
  return paths;
}

/** Removes what a deleted task left behind; returns what was there. Never throws. */
export function pruneTaskLeftovers(where: TaskFileLocations, task: Pick<OffPeakTask, 'id' | 'sessionId'>, log: (line: string) => void = () => {}): string[] {
  const removed: string[] = [];
  for (const target of taskLeftovers(where, task)) {
    try {
      if (!fs.existsSync(target)) continue;
      fs.rmSync(target, { recursive: true, force: true });
      removed.push(target);
    } catch (e) {
      log(`could not remove ${target}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return removed;
}
