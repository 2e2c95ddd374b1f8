// Notifications on the edges users care about: a task finished, failed, or its agent waits for
// an answer in the terminal (docs/flows.md#segments).
import * as vscode from 'vscode';
import type { RuntimeEvent } from '../agent/task-runtime';
import { plainNotificationText } from '../core/untrusted-text';

export interface NotifierActions {
  showPanel(): void;
  showTerminal(taskId: string, title: string): void;
  /** Answers the agent's question from the notification; false when it was already answered (or is gone). */
  answerAsk(taskId: string, askId: string, decision: 'allow' | 'deny'): boolean;
}

export class Notifier {
  constructor(private readonly actions: NotifierActions) {}

  /** The title and every text the agent produced go in as plain text: notifications render links. */
  runtimeEvent(event: RuntimeEvent, rawTitle: string): void {
    const title = plainNotificationText(rawTitle, 80);
    if (event.type === 'input-needed') {
      const { ask } = event;
      void vscode.window
        .showWarningMessage(`Off-Peak task "${title}" asks: allow ${plainNotificationText(ask.summary)}?`, 'Allow', 'Deny', 'Show Terminal')
        .then((choice) => {
          if (choice === 'Show Terminal') return this.actions.showTerminal(event.taskId, rawTitle);
          if (!choice) return;
          // The first answer wins: the terminal, the panel or the deadline may have answered already.
          if (!this.actions.answerAsk(event.taskId, ask.id, choice === 'Allow' ? 'allow' : 'deny')) {
            void vscode.window.showInformationMessage(`Off-Peak task "${title}": that question was already answered.`);
          }
        });
      return;
    }
    if (event.type !== 'segment-ended') return;
    const outcome = event.outcome;
    if (outcome.kind === 'completed') {
      void vscode.window.showInformationMessage(`Off-Peak task "${title}" completed.`, 'Open Tasks').then((c) => c && this.actions.showPanel());
    } else if (outcome.kind === 'failed') {
      void vscode.window
        .showErrorMessage(`Off-Peak task "${title}" failed: ${plainNotificationText(outcome.reason)}`, 'Show Terminal', 'Open Tasks')
        .then((c) => (c === 'Show Terminal' ? this.actions.showTerminal(event.taskId, rawTitle) : c && this.actions.showPanel()));
    }
  }
}
