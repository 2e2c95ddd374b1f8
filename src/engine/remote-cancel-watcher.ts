// Cancel and Delete reach the window that runs the agent. A user acts in whatever window they
// look at, but the agent process belongs to the window whose runtime started it; windows share
// nothing but the task DB. So every window watches the DB for other windows' writes and stops its
// own agents whose task is now cancelled or gone. The cancelling window has already written the
// terminal state, ended the segment and queued the ticket's settle; this window only has to stop
// the process (its segment then closes as cancelled) and, for a deleted task, remove the files
// the agent may have written again after the other window removed them.
import type { TaskRuntime } from '../agent/runtime/task-runtime';
import { changeConcerns, type TaskStore } from '../store';

export interface RemoteCancelWatcherOptions {
  store: TaskStore;
  runtime: Pick<TaskRuntime, 'runningTaskIds' | 'segment' | 'stopTask'>;
  /** A task deleted elsewhere while its agent ran here: remove what it left (after the agent stopped). */
  pruneDeleted: (deletion: { task: { id: string; sessionId: string | null }; deleteSession: boolean }) => void;
  log?: (line: string) => void;
}

export type RemoteStopReason = 'cancelled' | 'deleted';

/** Why this window's agent of `taskId` must stop, judged from the shared DB; undefined: let it run. */
export function remoteStopReason(store: Pick<TaskStore, 'read'>, taskId: string): RemoteStopReason | undefined {
  const task = store.read((tx) => tx.tasks.get(taskId));
  if (!task) return 'deleted';
  return task.status === 'cancelled' ? 'cancelled' : undefined;
}

export class RemoteCancelWatcher {
  private readonly stopping = new Map<string, Promise<void>>();
  private readonly log: (line: string) => void;
  private subscription: { dispose(): void } | undefined;

  constructor(private readonly options: RemoteCancelWatcherOptions) {
    this.log = options.log ?? (() => {});
  }

  start(): void {
    // Only another window's write can cancel behind this window's back: a cancel made here
    // already stops the agent through the service.
    this.subscription = this.options.store.onDidChange((change) => {
      if (change.origin === 'external' && changeConcerns(change, 'tasks')) this.check();
    });
  }

  /** Stops every agent of this window whose task was cancelled or deleted; returns the task ids it began to stop. */
  check(): string[] {
    const begun: string[] = [];
    for (const taskId of this.options.runtime.runningTaskIds) {
      if (this.stopping.has(taskId)) continue;
      let reason: RemoteStopReason | undefined;
      try {
        reason = remoteStopReason(this.options.store, taskId);
      } catch (e) {
        this.log(`could not read task ${taskId}: ${e instanceof Error ? e.message : String(e)}`);
        continue;
      }
      if (!reason) continue;
      begun.push(taskId);
      const sessionId = this.options.runtime.segment(taskId)?.sessionId ?? null;
      this.log(`task ${taskId} was ${reason} in another window: stopping its agent here`);
      const stop = this.options.runtime
        .stopTask(taskId)
        .then(() => {
          // Whether the user deleted the session too is known only where they deleted: the transcript stays here.
          if (reason === 'deleted') this.options.pruneDeleted({ task: { id: taskId, sessionId }, deleteSession: false });
        })
        .catch((e: unknown) => this.log(`stopping the agent of ${taskId} failed: ${e instanceof Error ? e.message : String(e)}`))
        .finally(() => this.stopping.delete(taskId));
      this.stopping.set(taskId, stop);
    }
    return begun;
  }

  /** Resolves when every stop begun so far has finished. */
  async idle(): Promise<void> {
    await Promise.all(this.stopping.values());
  }

  dispose(): void {
    this.subscription?.dispose();
    this.subscription = undefined;
  }
}
