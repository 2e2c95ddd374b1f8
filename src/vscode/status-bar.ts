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
    // Parked on a question: no agent runs; they wait for the user, so they come first.
    const needInput = tasks.filter((t) => t.status === 'needs_input').length;
    if (running === 0 && waiting === 0 && unseenResults === 0 && needInput === 0) {
      this.item.hide();
      return;
    }
    const parts = [
      needInput > 0 ? `${needInput} need${needInput === 1 ? 's' : ''} input` : '',
      running > 0 ? `${running} running` : '',
      waiting > 0 ? `${waiting} queued` : '',
      unseenResults > 0 ? `${unseenResults} new` : '',
    ].filter(Boolean);
    this.item.text = `$(${needInput > 0 ? 'question' : unseenResults > 0 ? 'bell-dot' : 'watch'}) Off-Peak: ${parts.join(', ')}`;
    this.item.backgroundColor = needInput > 0 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.tooltip =
      needInput > 0
        ? `Off-Peak Tasks: ${needInput} task(s) wait for your answer to a question; open the panel`
        : unseenResults > 0
          ? `Off-Peak Tasks: ${unseenResults} result(s) you have not seen; open the panel`
          : 'Off-Peak Tasks: open the panel';
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
