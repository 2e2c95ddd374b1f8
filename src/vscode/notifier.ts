// Notifications on the edges users care about (seed 07 branch 10): a task finished, failed, or
// its agent waits for an answer in the terminal (branch 08).
import * as vscode from 'vscode';
import type { RuntimeEvent } from '../agent/task-runtime';
import { plainNotificationText } from '../core/untrusted-text';

export interface NotifierActions {
  showPanel(): void;
  showTerminal(taskId: string, title: string): void;
}

export class Notifier {
  constructor(private readonly actions: NotifierActions) {}

  /** The title and every text the agent produced go in as plain text: notifications render links. */
  runtimeEvent(event: RuntimeEvent, rawTitle: string): void {
    const title = plainNotificationText(rawTitle, 80);
    if (event.type === 'input-needed') {
      void vscode.window
        .showWarningMessage(`Off-Peak task "${title}" needs your input: ${plainNotificationText(event.summary)}`, 'Show Terminal')
        .then((choice) => choice && this.actions.showTerminal(event.taskId, rawTitle));
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
