// The panel's confirmations as VS Code modal dialogs.
import * as vscode from 'vscode';
import type { Confirmation } from '../panel/confirmations';

/** True only when the user chose the action; closing the dialog or its Cancel says no. */
export async function confirmModal(question: Confirmation): Promise<boolean> {
  const choice = await vscode.window.showWarningMessage(question.message, { modal: true, detail: question.detail }, question.action);
  return choice === question.action;
}

/** The same dialog with the question's second button: which of the two the user chose. */
export async function confirmModalWithAlternative(
  question: Confirmation & { alternative: string },
): Promise<'action' | 'alternative' | undefined> {
  const choice = await vscode.window.showWarningMessage(
    question.message,
    { modal: true, detail: question.detail },
    question.action,
    question.alternative,
  );
  return choice === question.action ? 'action' : choice === question.alternative ? 'alternative' : undefined;
}
