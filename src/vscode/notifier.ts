// Notifications on the edges users care about (seed 07 branch 10): a task finished, failed, or
// its agent waits for an answer in the terminal (branch 08).
import * as vscode from 'vscode';
import type { RuntimeEvent } from '../agent/task-runtime';

export interface NotifierActions {
  showPanel(): void;
  showTerminal(taskId: string, title: string): void;
}

export class Notifier {
  constructor(private readonly actions: NotifierActions) {}

  runtimeEvent(event: RuntimeEvent, title: string): void {
    if (event.type === 'input-needed') {
      void vscode.window
        .showWarningMessage(`Off-Peak task "${title}" needs your input: ${event.summary}`, 'Show Terminal')
        .then((choice) => choice && this.actions.showTerminal(event.taskId, title));
      return;
    }
    if (event.type !== 'segment-ended') return;
    const outcome = event.outcome;
    if (outcome.kind === 'completed') {
      void vscode.window.showInformationMessage(`Off-Peak task "${title}" completed.`, 'Open Tasks').then((c) => c && this.actions.showPanel());
    } else if (outcome.kind === 'failed') {
      void vscode.window
        .showErrorMessage(`Off-Peak task "${title}" failed: ${outcome.reason}`, 'Show Terminal', 'Open Tasks')
        .then((c) => (c === 'Show Terminal' ? this.actions.showTerminal(event.taskId, title) : c && this.actions.showPanel()));
    }
  }
}
