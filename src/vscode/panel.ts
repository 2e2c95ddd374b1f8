// The single "Off-Peak Tasks" webview panel: HTML with a strict nonce CSP, and the vscode-free
// PanelController behind it.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { Clock } from '../core/clock';
import { PanelController, type PanelBackend } from '../panel/panel-controller';

export class TasksPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private controller: PanelController | undefined;
  private unseenResults = 0;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly backend: () => PanelBackend | undefined,
    private readonly clock: Clock,
    private readonly log: (line: string) => void,
  ) {}

  get isOpen(): boolean {
    return this.panel !== undefined;
  }

  /** Opens the panel, or reveals the one already open; `focusForm` brings the create form into view. */
  show(options: { focusForm?: boolean } = {}): vscode.WebviewPanel {
    if (!this.panel) this.create();
    else this.panel.reveal();
    if (options.focusForm) this.controller?.post({ type: 'focusForm' });
    return this.panel!;
  }

  /** The tab's title counts the results no panel has shown yet (a WebviewPanel has no badge). */
  setUnseenResults(count: number): void {
    this.unseenResults = count;
    if (this.panel) this.panel.title = this.title();
  }

  private title(): string {
    return this.unseenResults > 0 ? `Off-Peak Tasks (${this.unseenResults} new)` : 'Off-Peak Tasks';
  }

  /** Pushes a fresh snapshot (something the backend does not signal changed, e.g. the API key). */
  refresh(): void {
    this.controller?.schedulePush();
  }

  /** The backend became available or changed (engine started/restarted): reconnect. */
  reconnect(): void {
    if (!this.panel) return;
    this.controller?.dispose();
    this.controller = this.connect(this.panel);
    // The webview is already running: ask it to say `ready` again by reloading its HTML.
    this.panel.webview.html = this.html(this.panel.webview);
  }

  private create(): void {
    const panel = vscode.window.createWebviewPanel('offPeak.tasks', this.title(), vscode.ViewColumn.Active, {
      ...this.webviewOptions(),
      retainContextWhenHidden: true,
    });
    this.adopt(panel);
  }

  /**
   * A panel VS Code brings back after a window reload (the serializer registered for
   * `offPeak.tasks`): it becomes this window's panel, its webview restores its scroll and expanded
   * cards from the state it saved (vscode.setState). A second one, if any, is closed.
   */
  restore(panel: vscode.WebviewPanel): void {
    if (this.panel && this.panel !== panel) {
      panel.dispose();
      return;
    }
    panel.webview.options = this.webviewOptions();
    panel.title = this.title();
    this.adopt(panel);
  }

  private webviewOptions(): vscode.WebviewOptions {
    return {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(this.extensionUri, 'media')],
    };
  }

  private adopt(panel: vscode.WebviewPanel): void {
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'icon.svg');
    this.panel = panel;
    this.controller = this.connect(panel);
    panel.webview.html = this.html(panel.webview);
    // The webview cannot tell a background tab from a shown one: the snapshot says (unseen results).
    // Hidden: what it showed is seen now (one rule for the cards' "New" marks and the counts).
    panel.onDidChangeViewState(() => this.controller?.viewStateChanged());
    panel.onDidDispose(() => {
      this.controller?.dispose();
      this.controller = undefined;
      this.panel = undefined;
    });
  }

  private connect(panel: vscode.WebviewPanel): PanelController | undefined {
    const backend = this.backend();
    if (!backend) return undefined;
    return new PanelController(
      {
        postMessage: (m) => panel.webview.postMessage(m),
        onDidReceiveMessage: (l) => panel.webview.onDidReceiveMessage(l),
        visible: () => panel.visible,
      },
      backend,
      this.clock,
      this.log,
    );
  }

  private html(webview: vscode.Webview): string {
    const nonce = randomBytes(18).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview', 'main.js'));
    const css = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'panel.css'));
    const codicons = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview', 'codicon.css'));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${codicons}" id="vscode-codicon-stylesheet">
<link rel="stylesheet" href="${css}">
<title>Off-Peak Tasks</title></head>
<body><div id="root">${this.backend() ? '' : '<p>Starting Off-Peak Tasks…</p>'}</div><script nonce="${nonce}" src="${script}"></script></body></html>`;
  }

  dispose(): void {
    this.controller?.dispose();
    this.panel?.dispose();
  }
}
