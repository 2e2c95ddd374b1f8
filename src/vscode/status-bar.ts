// A status bar item: how many tasks run and wait; a click opens the panel.
import * as vscode from 'vscode';
import type { OffPeakTask } from '../core/types';

export class TaskStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('offPeak.status', vscode.StatusBarAlignment.Left, 10);

  constructor() {
    this.item.name = 'Off-Peak Tasks';
    this.item.command = 'offPeak.openPanel';
  }

  update(tasks: readonly OffPeakTask[]): void {
    const running = tasks.filter((t) => t.status === 'running' || t.status === 'awaiting').length;
    const waiting = tasks.filter((t) => t.status === 'queued').length;
    if (running === 0 && waiting === 0) {
      this.item.hide();
      return;
    }
    const parts = [running > 0 ? `${running} running` : '', waiting > 0 ? `${waiting} queued` : ''].filter(Boolean);
    this.item.text = `$(watch) Off-Peak: ${parts.join(', ')}`;
    this.item.tooltip = 'Off-Peak Tasks: open the panel';
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
