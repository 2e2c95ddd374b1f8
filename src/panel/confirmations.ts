// What the panel asks before a destructive action, and whether it asks at all. Pure, so the texts
// are tested without VS Code; src/vscode shows them as a modal dialog.
import { isTerminalStatus, type OffPeakTask } from '../core/types';

export interface Confirmation {
  message: string;
  detail: string;
  /** The label of the button that goes ahead (the dialog adds its own "Cancel"). */
  action: string;
  /** A second way to go ahead, a second button (VS Code's modal dialog has no check box). */
  alternative?: string;
}

const isLive = (t: OffPeakTask) => t.status === 'running' || t.status === 'awaiting' || t.claimRunning;
const isFinished = (t: OffPeakTask) => isTerminalStatus(t.status);

function named(task: OffPeakTask): string {
  const title = task.title || task.prompt.split('\n')[0];
  return title.length > 60 ? `${title.slice(0, 59)}…` : title;
}

/** Cancel always asks: it cannot be undone and gives the ticket back. */
export function cancelConfirmation(task: OffPeakTask): Confirmation {
  return {
    message: `Cancel "${named(task)}"?`,
    detail: isLive(task)
      ? 'The agent running this task is stopped now. Changes it already made stay in the workspace; the task stays in the list as Cancelled.'
      : task.status === 'paused'
        ? 'The paused task gives its ticket back to the gateway and stays in the list as Cancelled.'
        : task.status === 'needs_input'
          ? 'The task waiting for your answer is not resumed; its question goes unanswered and it stays in the list as Cancelled.'
          : 'The task leaves the gateway queue (its ticket is given back) and stays in the list as Cancelled.',
    action: 'Cancel Task',
  };
}

/**
 * Delete of a finished task removes only the card: no question then, unless it has a session
 * transcript of ours (`transcript`), which is kept unless the user deletes the session too.
 */
export function deleteConfirmation(task: OffPeakTask, transcript = false): Confirmation | undefined {
  const session = transcript ? { alternative: 'Delete Task and Session' } : {};
  const kept = transcript ? " The agent's session transcript (its whole conversation) is kept unless you also delete the session." : '';
  if (isFinished(task)) {
    if (!transcript) return undefined;
    return {
      message: `Delete "${named(task)}"?`,
      detail: `The task and its History row are removed.${kept}`,
      action: 'Delete Task',
      ...session,
    };
  }
  return {
    message: `Delete "${named(task)}"?`,
    detail:
      (isLive(task)
        ? 'The agent running this task is stopped now, and the task and its History row are removed. This cannot be undone.'
        : task.status === 'needs_input'
          ? 'The task waiting for your answer is removed with its question and History row. This cannot be undone.'
          : 'The task leaves the gateway queue (its ticket is given back) and is removed. This cannot be undone.') + kept,
    action: 'Delete Task',
    ...session,
  };
}

/**
 * Bypass lets the agent edit and run anything unattended: asked every time a task gets it.
 * `worktree`: the task runs on its own branch, in this worktree (or, before its first start,
 * null: a new one), not in the folder itself.
 */
export function bypassConfirmation(workspacePath: string, action: 'create' | 'edit' = 'create', worktree?: string | null): Confirmation {
  const where =
    worktree === undefined
      ? `It works in ${workspacePath}: only choose this for a workspace you can restore.`
      : `It works in ${worktree ?? 'a new worktree on its own offpeak/… branch'} (a worktree of ${workspacePath}): your working copy is not edited, but its commands run as you on this machine.`;
  return {
    message: 'Let the agent edit files and run commands without asking?',
    detail: `With Bypass permissions the agent never asks, also while nobody watches. ${where}`,
    action: action === 'create' ? 'Queue with Bypass Permissions' : 'Switch to Bypass Permissions',
  };
}
