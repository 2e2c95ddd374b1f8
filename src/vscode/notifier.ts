// Notifications on the edges users care about: a task finished, failed, or its agent waits for an
// answer. Which window shows each one (exactly one across windows) is decided by the vscode-free
// TaskNotices (src/engine/task-notices.ts); what a question's notification says and offers, and
// when it closes, by the vscode-free src/core/ask-notice.ts. This is only the door to VS Code.
import * as vscode from 'vscode';
import type { TaskNotice } from '../engine/task-notices';
import { QuestionToasts, questionNotification } from '../core/ask-notice';
import { plainNotificationText } from '../core/untrusted-text';

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
export const ANSWER_FROM_NOTIFICATION_COMMAND = 'offPeak.answerQuestionFromNotification';

/** What a link carries: our own ids and the digest only (no model or task text goes into a URL). */
interface LinkArgs {
  taskId: string;
  askId: string;
  action: 'allow' | 'deny' | 'panel' | 'terminal';
  inputDigest: string;
}

/** A command URI's argument, encoded so that nothing in it can end the markdown link early. */
function linkArgument(args: LinkArgs): string {
  return encodeURIComponent(JSON.stringify([args])).replace(/[()!'*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export class Notifier implements vscode.Disposable {
  private readonly toasts = new QuestionToasts();
  /** The task titles of open question notifications (for "Show terminal"), by question id. */
  private readonly titles = new Map<string, string>();
  private readonly command: vscode.Disposable;

  constructor(private readonly actions: NotifierActions) {
    this.command = vscode.commands.registerCommand(ANSWER_FROM_NOTIFICATION_COMMAND, (args: unknown) => this.onLink(args));
  }

  /** The title and every text the agent produced go in as plain text: notifications render links. */
  show(notice: TaskNotice): void {
    const rawTitle = notice.title;
    const title = plainNotificationText(rawTitle, 80);
    switch (notice.kind) {
      case 'input-needed': {
        const { ask } = notice;
        const view = questionNotification(rawTitle, ask);
        const link = (label: string, action: LinkArgs['action']): string => {
          const args: LinkArgs = { taskId: notice.taskId, askId: ask.id, action, inputDigest: ask.inputDigest };
          return `[${label}](command:${ANSWER_FROM_NOTIFICATION_COMMAND}?${linkArgument(args)})`;
        };
        // Allow only when the text holds the whole input; the notification closes once the question
        // is answered anywhere (a progress notification is the kind VS Code lets an extension close).
        this.titles.set(ask.id, rawTitle);
        const links = [view.offersAllow ? link('Allow', 'allow') : link('Review in panel', 'panel'), link('Deny', 'deny'), link('Show terminal', 'terminal')];
        void vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: `${view.message} — ${links.join(' · ')}` },
          () => this.toasts.show(ask.id).finally(() => this.titles.delete(ask.id)),
        );
        return;
      }
      case 'completed':
        void vscode.window.showInformationMessage(`Off-Peak task "${title}" completed.`, 'Open Tasks').then((c) => c && this.actions.showPanel());
        return;
      case 'failed':
        void vscode.window
          .showErrorMessage(`Off-Peak task "${title}" failed: ${plainNotificationText(notice.reason)}`, 'Show Terminal', 'Open Tasks')
          .then((c) => (c === 'Show Terminal' ? this.actions.showTerminal(notice.taskId, rawTitle) : c && this.actions.showPanel()));
        return;
    }
  }

  /** A question of this window was answered (anywhere), timed out or ended: its notification closes. */
  questionClosed(askId: string): void {
    this.toasts.answered(askId);
  }

  dispose(): void {
    this.toasts.closeAll();
    this.command.dispose();
  }

  private async onLink(raw: unknown): Promise<void> {
    const args = raw as Partial<LinkArgs> | undefined;
    if (!args || typeof args.taskId !== 'string' || typeof args.askId !== 'string' || typeof args.inputDigest !== 'string') return;
    const rawTitle = this.titles.get(args.askId) ?? args.taskId;
    const title = plainNotificationText(rawTitle, 80);
    if (args.action === 'panel') return this.actions.showPanel();
    if (args.action === 'terminal') return this.actions.showTerminal(args.taskId, rawTitle);
    if (args.action !== 'allow' && args.action !== 'deny') return;
    // The first answer wins: the terminal, the panel or the deadline may have answered already.
    if (this.toasts.wasAnswered(args.askId) || !(await this.actions.answerAsk(args.taskId, args.askId, args.action, args.inputDigest))) {
      void vscode.window.showInformationMessage(`Off-Peak task "${title}": that question was already answered; your answer was not used.`);
    }
  }
}
