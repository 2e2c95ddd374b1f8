// A status bar item: how many tasks run and wait, and how many results are new (no panel in any
// window has shown them yet: the panel is an editor tab, which VS Code gives no badge); a click
// opens the panel.
import * as vscode from 'vscode';
import type { OffPeakTask } from '../core/types';

export class TaskStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('offPeak.status', vscode.StatusBarAlignment.Left, 10);

  constructor() {
    this.item.name = 'Off-Peak Tasks';
    this.item.command = 'offPeak.openPanel';
  }

  update(tasks: readonly OffPeakTask[], unseenResults = 0): void {
    const running = tasks.filter((t) => t.status === 'running' || t.status === 'awaiting').length;
    const waiting = tasks.filter((t) => t.status === 'queued').length;
    if (running === 0 && waiting === 0 && unseenResults === 0) {
      this.item.hide();
      return;
    }
    const parts = [running > 0 ? `${running} running` : '', waiting > 0 ? `${waiting} queued` : '', unseenResults > 0 ? `${unseenResults} new` : ''].filter(Boolean);
    this.item.text = `$(${unseenResults > 0 ? 'bell-dot' : 'watch'}) Off-Peak: ${parts.join(', ')}`;
    this.item.tooltip = unseenResults > 0 ? `Off-Peak Tasks: ${unseenResults} result(s) you have not seen; open the panel` : 'Off-Peak Tasks: open the panel';
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
