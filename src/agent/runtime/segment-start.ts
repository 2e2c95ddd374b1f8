/**
 * How a segment of a task starts: a new agent session or the resume of its own (with the
 * continuation prompt), a follow-up's resume of the finished task's session (docs/flows.md#follow-up),
 * the first start's record, and stopping an agent whose start could not be recorded.
 */
import crypto from 'node:crypto';
import type { OffPeakTask } from '../../core/types';
import type { FollowUpLink, TaskStore } from '../../store';
import { recordBaseCommit, recordFilesBaseline } from '../workplace/files-changed';
import type { Workplace } from '../workplace/task-workplace';
import { CONTINUATION_PROMPT, type AgentAdapter, type AgentKind } from './agent-adapter';
import { taskLogsDir } from './segment-logs';
import type { SegmentRun } from './segment-runner';

/** The session a segment works in and the prompt it starts with. */
export interface SessionPlan {
  sessionId: string;
  /** The session exists: the agent resumes it. */
  resume: boolean;
  prompt: string;
  /** A follow-up's segment (it always resumes the finished task's session). */
  followUp: boolean;
}

/**
 * First segment vs resume: the session exists once the agent has started it (`work`: the task in
 * its workplace). A follow-up resumes the finished task's session, or fails when it is gone.
 */
export function sessionPlan(
  store: TaskStore,
  work: OffPeakTask,
  link: FollowUpLink | null | undefined,
  adapter: AgentAdapter,
): SessionPlan | { failure: string } {
  const plan = link ? followUpSegment(store, work, link, adapter) : undefined;
  if (plan && 'failure' in plan) return plan;
  const sessionId = plan?.sessionId ?? work.sessionId ?? crypto.randomUUID();
  const resume = plan ? true : work.sessionId !== null && (adapter.sessionExists?.(sessionId, work.workspacePath) ?? true);
  const prompt = plan ? plan.prompt : resume ? CONTINUATION_PROMPT : work.prompt;
  return { sessionId, resume, prompt, followUp: plan !== undefined };
}

/**
 * A follow-up always resumes the finished task's session: with its own instructions until a
 * model request of it was admitted (then the agent has them), with the continuation prompt after.
 */
function followUpSegment(
  store: TaskStore,
  task: OffPeakTask,
  link: FollowUpLink,
  adapter: AgentAdapter,
): { sessionId: string; prompt: string } | { failure: string } {
  if (!(adapter.sessionExists?.(link.sessionId, task.workspacePath) ?? true)) {
    return { failure: `The session of "${link.ofTitle}" is gone (its agent no longer has it), so this follow-up cannot continue it.` };
  }
  const heard = task.sessionId !== null && store.read((tx) => tx.tickets.forTask(task.id)).some((t) => t.activeAt !== null);
  return { sessionId: link.sessionId, prompt: heard ? CONTINUATION_PROMPT : task.prompt };
}

/** The first start's record: the agent that owns the session, the commit and the snapshot files_changed is measured against. */
export async function recordFirstStart(
  store: TaskStore,
  runtimeDir: string,
  log: (line: string) => void,
  task: OffPeakTask,
  agent: AgentKind,
  place: Workplace,
): Promise<void> {
  const [baseCommit, snapshot] = await Promise.all([
    place.changes.baseCommit ?? recordBaseCommit(place.folder),
    recordFilesBaseline(place.changes.folder, taskLogsDir(runtimeDir, task.id)),
  ]);
  if (!snapshot) log(`runtime: no snapshot of ${place.changes.folder} could be taken; the task's files changed will read "unknown"`);
  await store.mutate((tx) => tx.runtime.recordFirstStart({ taskId: task.id, agent, baseCommit }));
}

/** Stops an agent whose start could not be recorded, before the scheduler hears back. */
export async function stopUnstarted(run: SegmentRun): Promise<void> {
  await run.cancel().then(() => run.done);
  run.releasePidFile();
}
