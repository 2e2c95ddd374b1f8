// How the palette's commands are registered: a command that throws shows its message as an error
// notification (plain text) instead of failing silently. One helper for every group of commands.
import * as vscode from 'vscode';
import { plainNotificationText } from '../core/untrusted-text';

/** A command's body: any arguments a caller passes, any result. */
export type CommandBody = (...args: unknown[]) => unknown;

/** `register(id, fn)` for `context`: each command disposed with the extension, its failures shown. */
export function guardedRegistrar(context: vscode.ExtensionContext): (id: string, fn: CommandBody) => void {
  return (id, fn) => {
    context.subscriptions.push(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await fn(...args);
        } catch (e) {
          // Messages may quote a caller's arguments or a gateway's answer: plain text only.
          void vscode.window.showErrorMessage(`Off-Peak Tasks: ${plainNotificationText(e instanceof Error ? e.message : String(e))}`);
          return undefined;
        }
      }),
    );
  };
}
