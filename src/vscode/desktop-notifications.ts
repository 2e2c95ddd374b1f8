// Item 5 of docs/flows.md#desktop-notifications: when no VS Code window has focus, a question or a
// result also raises one OS-level notification (the window's own toast is kept). Only the window
// TaskNotices chose shows a notice, so one OS notification per event; only a local desktop window
// raises it (a remote or web window's extension host is not on the user's machine).
import { spawn } from 'node:child_process';
import path from 'node:path';
import * as vscode from 'vscode';
import { systemExecutableHost } from '../core/executable-path';
import type { TaskNotice } from '../engine/task-notices';
import { desktopText } from '../engine/notice-texts';
import { desktopNotifyCommand, WindowFocus } from '../notify/desktop-notify';

export class DesktopNotifications implements vscode.Disposable {
  private readonly focus: WindowFocus;
  private readonly subscription: vscode.Disposable;

  constructor(
    storageDir: string,
    windowId: string,
    private readonly log: (line: string) => void,
  ) {
    this.focus = new WindowFocus(path.join(storageDir, 'window-focus.json'), windowId);
    this.focus.changed(vscode.window.state.focused);
    this.subscription = vscode.window.onDidChangeWindowState((state) => this.focus.changed(state.focused));
  }

  /** The user is at a VS Code window: this one or another (whose process still runs) has focus now. */
  anyWindowFocused(): boolean {
    return vscode.window.state.focused || this.focus.otherWindowFocused();
  }

  /** Raises the OS notification of a notice when no VS Code window has focus and this window can. */
  raise(notice: TaskNotice): void {
    if (this.anyWindowFocused()) return;
    if (vscode.env.remoteName || vscode.env.uiKind !== vscode.UIKind.Desktop) return;
    const { title, body } = desktopText(notice);
    const command = desktopNotifyCommand(title, body, systemExecutableHost());
    if (!command) return;
    try {
      const child = spawn(command.command, command.args, { env: { ...process.env, ...command.env }, stdio: 'ignore', windowsHide: true });
      child.on('error', (e) => this.log(`desktop notification: ${e.message}`));
      child.unref();
    } catch (e) {
      this.log(`desktop notification: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  dispose(): void {
    this.subscription.dispose();
    this.focus.changed(false);
  }
}
