/**
 * A segment's check with its guards (docs/flows.md#checks), as the runtime sets it up: the gate
 * before each run (check-gate.ts), and the note after a failed run in the task's own worktree
 * (check-missing-files.ts).
 */
import type { PermissionMode } from '../../core/types';
import type { TaskStore } from '../../store';
import type { AskBroker } from '../questions/asks';
import { uncommittedFiles } from '../workplace/folder-status';
import { changedSinceBase, checkFilesOf } from './check-files';
import { CheckGate, type WhenAgentChangedCheck } from './check-gate';
import { missingUncommittedNote } from './check-missing-files';
import type { SegmentCheck } from './segment-work';

/**
 * A segment's check with its guards: the gate before each run, and after a failed run in the
 * task's own worktree, the note naming a file the check needs that the folder has uncommitted.
 */
export function guardCheck(
  check: SegmentCheck,
  deps: {
    store: TaskStore;
    taskId: string;
    permissionMode: PermissionMode;
    /** The folder the task was queued from (its worktree's counterpart when it runs on its own branch). */
    folder: string;
    asks: AskBroker;
    whenAgentChangedIt?: () => WhenAgentChangedCheck;
  },
): SegmentCheck {
  const { store, taskId } = deps;
  check.gate = new CheckGate({
    permissionMode: deps.permissionMode,
    whenAgentChangedIt: () => deps.whenAgentChangedIt?.() ?? 'run',
    changedFiles: async (command) => {
      const base = store.read((tx) => tx.runtime.get(taskId))?.baseCommit;
      return base ? changedSinceBase(checkFilesOf(command, check.cwd), check.cwd, base) : null;
    },
    flag: async (files) => void (await store.mutate((tx) => tx.checks.flagAgentChanged(taskId, files))),
    ask: (request, deliver) => deps.asks.ask(taskId, request, deliver),
    endAsks: () => deps.asks.endTask(taskId),
  });
  if (check.cwd !== deps.folder)
    check.failureNote = (result) =>
      missingUncommittedNote({
        command: check.command,
        output: result.output,
        cwd: check.cwd,
        folder: deps.folder,
        uncommitted: uncommittedFiles,
      });
  return check;
}
