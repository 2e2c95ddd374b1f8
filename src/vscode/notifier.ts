// Notifications on the edges users care about: a task finished, failed, or its agent waits for an
// answer. Which window shows each one (exactly one across windows) is decided by the vscode-free
// TaskNotices (src/engine/task-notices.ts); this is only the door to VS Code.
import * as vscode from 'vscode';
import { refusalSentence, type TaskNotice } from '../engine/task-notices';
import { plainNotificationText } from '../core/untrusted-text';

export interface NotifierActions {
  showPanel(): void;
  showTerminal(taskId: string, title: string): void;
  /** Answers the agent's question from the notification; false when it was already answered (or is gone). */
  answerAsk(taskId: string, askId: string, decision: 'allow' | 'deny'): Promise<boolean>;
}

export class Notifier {
  constructor(private readonly actions: NotifierActions) {}

  /** The title and every text the agent produced go in as plain text: notifications render links. */
  show(notice: TaskNotice): void {
    const rawTitle = notice.title;
    const title = plainNotificationText(rawTitle, 80);
    switch (notice.kind) {
      case 'input-needed': {
        const { ask } = notice;
        void vscode.window
          .showWarningMessage(`Off-Peak task "${title}" asks: allow ${plainNotificationText(ask.summary)}?`, 'Allow', 'Deny', 'Show Terminal')
          .then(async (choice) => {
            if (choice === 'Show Terminal') return this.actions.showTerminal(notice.taskId, rawTitle);
            if (!choice) return;
            // The first answer wins: the terminal, the panel or the deadline may have answered already.
            if (!(await this.actions.answerAsk(notice.taskId, ask.id, choice === 'Allow' ? 'allow' : 'deny'))) {
              void vscode.window.showInformationMessage(`Off-Peak task "${title}": that question was already answered.`);
            }
          });
        return;
      }
      case 'completed': {
        // A completed task that was refused something says so: "completed" alone would hide it.
        const denied = refusalSentence(notice.refusals);
        const show = denied ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
        void show(`Off-Peak task "${title}" completed${denied ? `; ${denied}` : ''}.`, 'Open Tasks').then((c) => c && this.actions.showPanel());
        return;
      }
      case 'failed':
        void vscode.window
          .showErrorMessage(`Off-Peak task "${title}" failed: ${plainNotificationText(notice.reason)}${notice.refusals ? ` (${refusalSentence(notice.refusals)})` : ''}`, 'Show Terminal', 'Open Tasks')
          .then((c) => (c === 'Show Terminal' ? this.actions.showTerminal(notice.taskId, rawTitle) : c && this.actions.showPanel()));
        return;
    }
  }
}
