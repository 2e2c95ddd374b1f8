// The first-run walkthrough (package.json `contributes.walkthroughs`, docs/flows.md#first-run):
// its steps complete from the real state through `offPeak.walkthrough.*` context keys.
import * as vscode from 'vscode';
import type { WalkthroughKeys } from '../panel/setup-line';

export const WALKTHROUGH_ID = 'offpeak.off-peak-tasks#firstRun';

export class WalkthroughContext {
  private readonly last = new Map<string, boolean>();

  /** Sets the keys that changed (setContext is a round trip to the workbench). */
  update(keys: WalkthroughKeys): void {
    for (const [name, value] of Object.entries(keys)) {
      if (this.last.get(name) === value) continue;
      this.last.set(name, value);
      void vscode.commands.executeCommand('setContext', `offPeak.walkthrough.${name}`, value);
    }
  }
}

/** Opens the walkthrough (the panel's empty state points to it). */
export function openWalkthrough(): Thenable<unknown> {
  return vscode.commands.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH_ID, false);
}
