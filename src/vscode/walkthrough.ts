// The first-run walkthrough (package.json `contributes.walkthroughs`, docs/flows.md#first-run):
// its steps complete from the real state through `offPeak.walkthrough.*` context keys.
import * as vscode from 'vscode';
import type { HostEngine } from '../engine/host-engine';
import {
  openSettingCommand,
  walkthroughKeys,
  walkthroughStepsByKey,
  type WalkthroughKeys,
  type WalkthroughManifest,
} from '../panel/setup-line';
import type { SetupView } from '../protocol/webview';

export const WALKTHROUGH_ID = 'offpeak.off-peak-tasks#firstRun';

export class WalkthroughContext {
  private readonly last = new Map<string, boolean>();
  private readonly stepsByKey: Map<string, string[]>;
  /** A review was opened in this window (the morning step; a merge or apply counts from the task DB). */
  private reviewedHere = false;

  constructor(extension: { id: string; packageJSON: WalkthroughManifest }) {
    this.stepsByKey = walkthroughStepsByKey(extension.packageJSON, extension.id);
  }

  noteReviewed(): void {
    this.reviewedHere = true;
  }

  /** The keys from the real state: the setup line, the gateway key, the task DB. */
  refresh(engine: HostEngine | undefined, setup: SetupView, hasGatewayKey: boolean): void {
    const broughtHome =
      engine?.store.read((tx) =>
        [...tx.isolation.all().values()].some((r) => r.broughtHome?.kind === 'merged' || r.broughtHome?.kind === 'applied'),
      ) ?? false;
    this.update(
      walkthroughKeys(setup, {
        engineStarted: engine !== undefined,
        hasGatewayKey,
        taskCount: engine?.service.listTasks().length ?? 0,
        reviewed: this.reviewedHere || broughtHome,
      }),
    );
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

/**
 * `offPeak.openSetting` (the walkthrough's and the fixes' setting links): the Settings editor on
 * the tab where this window can change the setting (not contributed: only links call it).
 */
export function registerOpenSetting(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('offPeak.openSetting', (key: unknown) => {
      const { command, args } = openSettingCommand(typeof key === 'string' ? key : 'offPeak', vscode.env.remoteName);
      return vscode.commands.executeCommand(command, args);
    }),
  );
}

/** Opens the walkthrough (the panel's empty state points to it). */
export function openWalkthrough(): Thenable<unknown> {
  return vscode.commands.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH_ID, false);
}
