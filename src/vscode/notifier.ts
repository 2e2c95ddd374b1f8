// Notifications on the edges users care about: a task finished, failed, or its agent waits for an
// answer. Which window shows each one (exactly one across windows) is decided by the vscode-free
// TaskNotices (src/engine/task-notices.ts); what a question's notification says and offers, and
// when it closes, by the vscode-free src/core/ask-notice.ts. This is only the door to VS Code.
import * as vscode from 'vscode';
import type { TaskNotice } from '../engine/task-notices';
import { resultToastText } from '../engine/notice-texts';
import { QuestionToasts, questionNotificationText } from '../core/ask-notice';
import { plainNotificationText } from '../core/untrusted-text';
import { failureFix } from '../panel/failure-fix';

export interface NotifierActions {
  showPanel(): void;
  showTerminal(taskId: string, title: string): void;
  /**
   * Answers the agent's question from the notification, for the input it showed (`inputDigest`);
   * false when it was already answered (or is gone, or the input differs).
   */
  answerAsk(taskId: string, askId: string, decision: 'allow' | 'deny', inputDigest: string): Promise<boolean>;
}

/** The command a question notification's links run (not contributed: only these links call it). */
export const ANSWER_FROM_NOTIFICATION_COMMAND = 'offPeak.questionLink';

/** The question a notification shows: what its links act on (the digest of the input it showed). */
interface Shown {
  taskId: string;
  rawTitle: string;
  inputDigest: string;
}

export class Notifier implements vscode.Disposable {
  private readonly toasts = new QuestionToasts();
  /** The questions of open notifications, by question id. */
  private readonly shown = new Map<string, Shown>();
  private readonly command: vscode.Disposable;

  constructor(private readonly actions: NotifierActions) {
    this.command = vscode.commands.registerCommand(ANSWER_FROM_NOTIFICATION_COMMAND, (askId: unknown, action: unknown) =>
      this.onLink(askId, action),
    );
  }

  /** The title and every text the agent produced go in as plain text (resultToastText, questionNotificationText): notifications render links. */
  show(notice: TaskNotice): void {
    const rawTitle = notice.title;
    switch (notice.kind) {
      case 'input-needed': {
        const { ask } = notice;
        // Allow only when the text holds the whole input; the notification closes once the question
        // is answered anywhere (a progress notification is the kind VS Code lets an extension close).
        this.shown.set(ask.id, { taskId: notice.taskId, rawTitle, inputDigest: ask.inputDigest });
        const { message } = questionNotificationText(rawTitle, ask, ANSWER_FROM_NOTIFICATION_COMMAND);
        void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: message }, () => this.toasts.show(ask.id));
        return;
      }
      case 'completed':
      case 'failed': {
        // In the outcome's words (src/core/outcome.ts): "completed", "ready for review · checks pass", "check failed after 2 rounds".
        const { text, severity } = resultToastText(notice);
        if (severity === 'error') {
          // The fix the reason names is a button too (docs/flows.md#notifications-and-unseen-marks), before "Show Terminal".
          const fix = notice.kind === 'failed' ? failureFix(notice.reason) : undefined;
          void vscode.window.showErrorMessage(text, ...(fix ? [fix.label] : []), 'Show Terminal', 'Open Tasks').then((c) => {
            if (fix && c === fix.label) void vscode.commands.executeCommand(fix.command, ...(fix.args ?? []));
            else if (c === 'Show Terminal') this.actions.showTerminal(notice.taskId, rawTitle);
            else if (c) this.actions.showPanel();
          });
        } else
          void (severity === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage)(text, 'Open Tasks').then(
            (c) => c && this.actions.showPanel(),
          );
        return;
      }
    }
  }

  /** A question of this window was answered (anywhere), timed out or ended: its notification closes. */
  questionClosed(askId: string): void {
    this.toasts.answered(askId);
    this.shown.delete(askId);
  }

  /** The questions open anywhere now: the notification of any other closes (e.g. a parked one answered elsewhere). */
  questionsStillOpen(askIds: ReadonlySet<string>): void {
    this.toasts.retainOnly(askIds);
    for (const id of [...this.shown.keys()]) if (!askIds.has(id)) this.shown.delete(id);
  }

  dispose(): void {
    this.toasts.closeAll();
    this.command.dispose();
  }

  private async onLink(askId: unknown, action: unknown): Promise<void> {
    if (action === 'panel') return this.actions.showPanel();
    const shown = typeof askId === 'string' ? this.shown.get(askId) : undefined;
    if (!shown || typeof askId !== 'string') {
      // Answered (anywhere) since the notification showed it, or not a question of this window.
      if (action === 'allow' || action === 'deny')
        void vscode.window.showInformationMessage('Off-Peak Tasks: that question was already answered; your answer was not used.');
      return;
    }
    if (action === 'terminal') return this.actions.showTerminal(shown.taskId, shown.rawTitle);
    if (action !== 'allow' && action !== 'deny') return;
    // The answer is for the input this notification showed; the first answer wins (the terminal,
    // the panel or the deadline may have answered already).
    if (this.toasts.wasAnswered(askId) || !(await this.actions.answerAsk(shown.taskId, askId, action, shown.inputDigest))) {
      void vscode.window.showInformationMessage(
        `Off-Peak task "${plainNotificationText(shown.rawTitle, 80)}": that question was already answered; your answer was not used.`,
      );
    }
  }
}
