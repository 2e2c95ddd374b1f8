import * as vscode from 'vscode';
import { openTasksPanel } from './panel';

const API_KEY_SECRET = 'offPeak.apiKey';

/** Registers every contributed command; ids must match package.json `contributes.commands`. */
export function registerCommands(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('offPeak.openPanel', () => openTasksPanel(context)),
    vscode.commands.registerCommand('offPeak.createTask', () => openTasksPanel(context)),
    vscode.commands.registerCommand('offPeak.setApiKey', async () => {
      const key = await vscode.window.showInputBox({ prompt: 'Off-Peak Gateway API key', password: true, ignoreFocusOut: true });
      if (key) await context.secrets.store(API_KEY_SECRET, key.trim());
    }),
    vscode.commands.registerCommand('offPeak.clearApiKey', () => context.secrets.delete(API_KEY_SECRET)),
  );
}
