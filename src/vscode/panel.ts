import * as vscode from 'vscode';
import { randomBytes } from 'node:crypto';

let current: vscode.WebviewPanel | undefined;

/** Opens (or reveals) the single Off-Peak Tasks panel with a strict nonce CSP. */
export function openTasksPanel(context: vscode.ExtensionContext): vscode.WebviewPanel {
  if (current) {
    current.reveal();
    return current;
  }
  const distUri = vscode.Uri.joinPath(context.extensionUri, 'dist', 'webview');
  const panel = vscode.window.createWebviewPanel('offPeak.tasks', 'Off-Peak Tasks', vscode.ViewColumn.Active, {
    enableScripts: true,
    retainContextWhenHidden: true,
    localResourceRoots: [distUri, vscode.Uri.joinPath(context.extensionUri, 'media')],
  });
  const nonce = randomBytes(16).toString('base64');
  const script = panel.webview.asWebviewUri(vscode.Uri.joinPath(distUri, 'main.js'));
  panel.webview.html = `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${panel.webview.cspSource} 'nonce-${nonce}'; script-src 'nonce-${nonce}'; font-src ${panel.webview.cspSource}; img-src ${panel.webview.cspSource} data:;">
<meta name="viewport" content="width=device-width, initial-scale=1.0"><title>Off-Peak Tasks</title></head>
<body><div id="root"></div><script nonce="${nonce}" src="${script}"></script></body></html>`;
  panel.onDidDispose(() => (current = undefined), undefined, context.subscriptions);
  current = panel;
  return panel;
}
