// The first-run walkthrough (package.json `contributes.walkthroughs`, docs/flows.md#first-run):
// its steps complete from the real state through `offPeak.walkthrough.*` context keys.
import * as vscode from 'vscode';
import { walkthroughStepsByKey, type WalkthroughKeys, type WalkthroughManifest } from '../panel/setup-line';

export const WALKTHROUGH_ID = 'offpeak.off-peak-tasks#firstRun';

export class WalkthroughContext {
  private readonly last = new Map<string, boolean>();
  private readonly stepsByKey: Map<string, string[]>;

  constructor(extension: { id: string; packageJSON: WalkthroughManifest }) {
    this.stepsByKey = walkthroughStepsByKey(extension.packageJSON, extension.id);
  }

  /** Sets the keys that changed (setContext is a round trip to the workbench). */
  update(keys: WalkthroughKeys): void {
    for (const [name, value] of Object.entries(keys)) {
      if (this.last.get(name) === value) continue;
      this.last.set(name, value);
      void vscode.commands.executeCommand('setContext', `offPeak.walkthrough.${name}`, value);
      if (!value) continue;
      // VS Code's walkthrough service starts with the first Welcome page shown, and never completes
      // a step whose onContext key was true before that (the first panel link finds the key already
      // set): its own "mark step complete" command completes the step, and starts the service.
      // Where that command is missing, the completion events above are all there is.
      for (const step of this.stepsByKey.get(name) ?? []) {
        Promise.resolve(vscode.commands.executeCommand('welcome.markStepComplete', step)).catch(() => undefined);
      }
    }
  }
}

/** Opens the walkthrough (the panel's empty state points to it). */
export function openWalkthrough(): Thenable<unknown> {
  return vscode.commands.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH_ID, false);
}
