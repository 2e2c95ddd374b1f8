// "Open session" (docs/flows.md#open-session) and the rule a follow-up keeps with it: which
// task's session opens, in which folder (a task on its own branch ran in its worktree), and how
// busy it is; the agent's part (the terminal's argv, a reference session's model route on the
// window's listener) is started through the engine's starter, which holds the runtime.
import { worktreeCounterpart } from '../agent/workplace/task-worktree';
import type { OffPeakTask } from '../core/types';
import type { TaskStore } from '../store';

/** Why a window refuses a follow-up while the user's own Claude Code runs on the session in one of its terminals. */
export const SESSION_OPEN_HERE =
  'An agent is open on this session in a terminal of this window (Open session): close it first, so that two agents never work on one session.';

/** What a session opens as, for a task whose `workspacePath` is where it ran; `busy`: a task is queued or running on the session. */
export type SessionStarter<V> = (
  at: { task: OffPeakTask; agent: string | undefined; busy: boolean },
  hostEnv: Readonly<Record<string, string | undefined>>,
) => Promise<V>;

export interface TaskSessionsOptions<V> {
  store: TaskStore;
  start: SessionStarter<V>;
}

export class TaskSessions<V> {
  constructor(private readonly options: TaskSessionsOptions<V>) {}

  /**
   * What "Open session" opens for a task (docs/flows.md#open-session): `claude --resume` for a
   * finished Claude Code task whose session no other task works on, else its transcript.
   */
  async view(taskId: string, hostEnv: Readonly<Record<string, string | undefined>> = process.env): Promise<V> {
    const { task, agent, busy, isolation } = this.options.store.read((tx) => {
      const t = tx.tasks.get(taskId);
      return {
        task: t,
        agent: tx.runtime.get(taskId)?.agent,
        busy: t?.sessionId ? tx.followUps.liveUsersOfSession(t.sessionId, taskId).length > 0 : false,
        isolation: tx.isolation.get(taskId),
      };
    });
    if (!task) throw new Error('This task no longer exists.');
    // A task on its own branch ran in its worktree: Claude Code finds the session from there (docs/flows.md#isolation).
    const ranIn =
      isolation?.mode === 'worktree' &&
      isolation.worktreePath &&
      isolation.broughtHome?.kind !== 'discarded' &&
      !(isolation.broughtHome && isolation.missingAt !== null)
        ? worktreeCounterpart(task.workspacePath, isolation.worktreePath)
        : task.workspacePath;
    return this.options.start({ task: { ...task, workspacePath: ranIn }, agent, busy }, hostEnv);
  }
}

/** A follow-up waits while the user's own agent runs on the session in a terminal of this window (`openHere`). */
export function refuseFollowUpWhileOpen(
  task: Pick<OffPeakTask, 'sessionId'>,
  openHere: ((sessionId: string) => boolean) | undefined,
): void {
  if (task.sessionId && openHere?.(task.sessionId)) throw new Error(SESSION_OPEN_HERE);
}
