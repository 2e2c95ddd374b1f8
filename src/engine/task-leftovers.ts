// Files a task leaves in globalStorage besides its DB rows: its segment directories (agent log,
// pid file, prompt) under runtime/tasks/<task id>/ and the bundled reference agent's session
// transcript <session id>.jsonl. The segment directories go when the task is deleted; the
// transcript only when the user also deletes the session (docs/flows.md#cancel-delete-history).
// Claude Code's own session files live in Claude Code's folder and are not ours to delete.
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
  const transcript = transcriptPath(where, task.sessionId);
  if (transcript) paths.push(transcript);
  return paths;
}

function transcriptPath(where: TaskFileLocations, sessionId: string | null): string | undefined {
  return sessionId && SAFE_NAME.test(sessionId) ? path.join(where.referenceSessionsDir, `${sessionId}.jsonl`) : undefined;
}

/**
 * Left beside the transcript of a session the user deleted while another window's agent still
 * ran on it: that agent may write once more as it stops, so that window removes the transcript
 * (and this mark) once it stopped it.
 */
const deleteMarkOf = (transcript: string) => `${transcript}.delete`;

/** The reference agent's transcript of `task` when it is on disk (a Claude Code task has none of ours). */
export function transcriptOnDisk(where: TaskFileLocations, task: Pick<OffPeakTask, 'sessionId'>): string | undefined {
  const transcript = transcriptPath(where, task.sessionId);
  return transcript && fs.existsSync(transcript) ? transcript : undefined;
}

export interface PruneOptions {
  /** The user deleted the session too. */
  deleteSession: boolean;
  /** The task's agent runs in another window, which removes the transcript once it stopped it. */
  agentElsewhere?: boolean;
}

/**
 * Removes what a deleted task left behind: its segment directories; its transcript only when the
 * session is deleted too (here, or in another window that left the mark). Returns what was
 * there. Never throws.
 */
export function pruneTaskLeftovers(
  where: TaskFileLocations,
  task: Pick<OffPeakTask, 'id' | 'sessionId'>,
  options: PruneOptions,
  log: (line: string) => void = () => {},
): string[] {
  const targets = taskLeftovers(where, { id: task.id, sessionId: null });
  const transcript = transcriptPath(where, task.sessionId);
  if (transcript) {
    const mark = deleteMarkOf(transcript);
    if (options.deleteSession && options.agentElsewhere) {
      try {
        fs.writeFileSync(mark, '', { mode: 0o600 });
      } catch (e) {
        log(`could not mark ${transcript} for deletion: ${e instanceof Error ? e.message : String(e)}`);
      }
      targets.push(transcript);
    } else if (options.deleteSession || fs.existsSync(mark)) {
      targets.push(transcript, mark);
    }
  }
  const removed: string[] = [];
  for (const target of targets) {
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
