// A status bar item: how many tasks need input (first, highlighted), run and wait, and how many
// results are new (no panel in any window has shown them yet: the panel is an editor tab, which
// VS Code gives no badge); its tooltip says what happened since the user last looked; a click
// opens the panel. The wording is src/panel/task-summary.ts's, the same as the panel's.
import * as vscode from 'vscode';
import type { StatusBarView } from '../panel/task-summary';

export class TaskStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('offPeak.status', vscode.StatusBarAlignment.Left, 10);

  constructor() {
    this.item.name = 'Off-Peak Tasks';
    this.item.command = 'offPeak.openPanel';
    // There from activation on, before the engine started or any task exists.
    this.item.text = '$(watch) Off-Peak';
    this.item.tooltip = 'Off-Peak Tasks\nClick to open the panel.';
    this.item.show();
  }

  update(view: StatusBarView): void {
    if (!view.visible) {
      this.item.hide();
      return;
    }
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.highlight ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
