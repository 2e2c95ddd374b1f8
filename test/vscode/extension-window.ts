// The extension's own `vscode` API object, and `offPeak.createTask` with a prompt argument whose
// confirmation (the modal a caller's prompt gets, docs/security.md) is answered here. The extension
// host gives each extension its own API object; a module inside the extension's folder gets the
// extension's, in a development host and in an installed .vsix alike.
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from './demo-gateway';

/** The `vscode` API object the extension at `extensionPath` was given. */
export function extensionVscode(extensionPath: string): typeof vscode {
  const probe = path.join(extensionPath, 'dist', `vscode-api-probe-${process.pid}.js`);
  writeFileSync(probe, "module.exports = require('vscode');\n");
  try {
    return createRequire(__filename)(probe) as typeof vscode;
  } finally {
    rmSync(probe, { force: true });
  }
}

/**
 * Runs `offPeak.createTask` with `args` (a prompt among them) and answers the modal that shows the
 * prompt with "Queue Task"; other messages go to VS Code as usual. The task id, and the modals' details.
 */
export async function createTaskConfirmed(args: Record<string, unknown>): Promise<{ taskId: string; shown: string[] }> {
  const window = extensionVscode(vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath).window as unknown as Record<
    'showWarningMessage',
    unknown
  >;
  const original = window.showWarningMessage as (...a: unknown[]) => Thenable<unknown>;
  const shown: string[] = [];
  window.showWarningMessage = (message: string, options: vscode.MessageOptions | string | undefined, ...items: string[]) => {
    if (typeof options === 'object' && options.modal && items.includes('Queue Task')) {
      shown.push(options.detail ?? '');
      return Promise.resolve('Queue Task');
    }
    return original(message, options, ...items);
  };
  try {
    const taskId = await vscode.commands.executeCommand<string>('offPeak.createTask', args);
    return { taskId, shown };
  } finally {
    window.showWarningMessage = original;
  }
}
