/**
 * What a question's notification says and offers, and which of them are still open, without
 * VS Code (src/vscode/notifier.ts only renders it; docs/flows.md#what-a-question-shows).
 *
 * - A notification is one line of plain text of bounded length (VS Code cuts a notification's text at
 *   1000 characters; this one stays well under it, its links after the input): it offers Allow only when its text
 *   holds the whole input exactly as it would run; otherwise it offers "Review in panel" (the card
 *   and the terminal show the whole input) and Deny.
 * - A question answered anywhere else (a card in any window, the terminal, the deadline) closes its
 *   notification, so no stale Allow/Deny stays on screen; a click that still reaches a question
 *   already answered is refused and says so.
 */
import { NOTIFICATION_INPUT_MAX_CHARS } from './ask-input';
import { plainNotificationText } from './untrusted-text';

export interface QuestionNotification {
  /** The notification's text (plain, one line). */
  message: string;
  /** The text holds the whole input as it would run: Allow may be offered. */
  offersAllow: boolean;
}

/** `title`: the task's short title; `ask`: the question (its `input` shown whole or not at all). */
export function questionNotification(title: string, ask: { tool: string; input: string }): QuestionNotification {
  const task = plainNotificationText(title, 80);
  const tool = plainNotificationText(ask.tool, 60);
  // Flattening to one inert line must leave the input unchanged: else the text is not what would
  // run. `$(name)` is icon syntax a notification may render or drop (`echo $(reboot)` would read
  // as `echo `), so an input holding it is not shown there either.
  const whole =
    ask.input.length <= NOTIFICATION_INPUT_MAX_CHARS &&
    plainNotificationText(ask.input, NOTIFICATION_INPUT_MAX_CHARS) === ask.input &&
    !ask.input.includes('$(');
  // The input ends the text: nothing of ours follows it that it could seem to be part of.
  if (whole)
    return { message: `Off-Peak task "${task}" needs input: it asks to use ${tool} with this input: ${ask.input}`, offersAllow: true };
  const lines = ask.input.split('\n').length;
  return {
    message: `Off-Peak task "${task}" needs input: it asks to use ${tool} with an input too long to show here (${lines} line${lines === 1 ? '' : 's'}, ${ask.input.length} characters): review it whole in the panel or the terminal before you allow it.`,
    offersAllow: false,
  };
}

export type QuestionLinkAction = 'allow' | 'deny' | 'panel' | 'terminal';

/** VS Code cuts a notification's text at this length. */
export const NOTIFICATION_TEXT_LIMIT = 1000;

/**
 * A command URI's argument: the question's id (ours) and the action only (short, no model or task
 * text), encoded so that nothing in it can end the markdown link early.
 */
function linkArgument(askId: string, action: QuestionLinkAction): string {
  return encodeURIComponent(JSON.stringify([askId, action])).replace(/[()!'*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The whole text of a question's notification: the question, then its links (`command` runs them
 * with `[askId, action]`): Allow only when the text holds the whole input, else "Review in panel";
 * then Deny and "Show terminal". The links come after the input, so a cut could only lose them.
 */
export function questionNotificationText(
  title: string,
  ask: { id: string; tool: string; input: string },
  command: string,
): QuestionNotification {
  const view = questionNotification(title, ask);
  const link = (label: string, action: QuestionLinkAction): string => `[${label}](command:${command}?${linkArgument(ask.id, action)})`;
  const links = [
    view.offersAllow ? link('Allow', 'allow') : link('Review in panel', 'panel'),
    link('Deny', 'deny'),
    link('Show terminal', 'terminal'),
  ];
  return { message: `${view.message} — ${links.join(' · ')}`, offersAllow: view.offersAllow };
}

/**
 * The question notifications this window shows. `open` returns a promise that resolves when the
 * question is answered, ends or the window stops (the notification then closes itself).
 */
export class QuestionToasts {
  private readonly open = new Map<string, () => void>();
  /** Questions whose notification closed because they were answered (kept to answer a late click). */
  private readonly closed = new Set<string>();

  /** A notification for this question is shown until the returned promise resolves. */
  show(askId: string): Promise<void> {
    this.closed.delete(askId);
    return new Promise<void>((resolve) => {
      this.open.get(askId)?.();
      this.open.set(askId, resolve);
    });
  }

  /** Whether a notification for this question is on screen. */
  isOpen(askId: string): boolean {
    return this.open.has(askId);
  }

  /** The question was answered (anywhere), timed out or its segment ended: its notification closes. */
  answered(askId: string): void {
    const close = this.open.get(askId);
    this.open.delete(askId);
    this.closed.add(askId);
    if (this.closed.size > 256) this.closed.delete(this.closed.values().next().value as string);
    close?.();
  }

  /** Whether a click on this question's notification comes after it was answered. */
  wasAnswered(askId: string): boolean {
    return this.closed.has(askId) && !this.open.has(askId);
  }

  /**
   * The questions still open anywhere (this window's, other windows', parked ones): every other
   * notification closes. A parked question answered in another window never reaches this
   * window's runtime as an answer, so its notification goes when it leaves this list.
   */
  retainOnly(openAskIds: ReadonlySet<string>): void {
    for (const id of [...this.open.keys()]) if (!openAskIds.has(id)) this.answered(id);
  }

  /** The window stops: every notification closes. */
  closeAll(): void {
    for (const id of [...this.open.keys()]) this.answered(id);
  }
}
