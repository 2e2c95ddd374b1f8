// Composition root: the only place that wires VS Code to the vscode-free core.
import * as vscode from 'vscode';
import { registerCommands } from './vscode/commands';

export function activate(context: vscode.ExtensionContext): void {
  registerCommands(context);
}

export function deactivate(): void {
  // Nothing to release yet: every resource is registered on context.subscriptions.
}
