// Runs inside a real VS Code extension host (see test/vscode/index.ts): the extension as VS Code
// loads it from this repository's package.json and dist/extension.js.
import assert from 'node:assert/strict';
import * as vscode from 'vscode';

const EXTENSION_ID = 'offpeak.off-peak-tasks';

interface ContributedCommand {
  command: string;
  title: string;
}

function extension(): vscode.Extension<unknown> {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(ext, `${EXTENSION_ID} is not loaded in this VS Code`);
  return ext;
}

function tasksPanelTabs(): vscode.Tab[] {
  return (
    vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      // Extension webviews carry a host-specific prefix on their viewType (e.g. "mainThreadWebview-").
      .filter((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.endsWith('offPeak.tasks'))
  );
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('Off-Peak Tasks in a real VS Code', () => {
  before(() => {
    console.log(
      `  [host] VS Code ${vscode.version}, Node ${process.version}, uiKind ${vscode.UIKind[vscode.env.uiKind]}, ` +
        `remote ${vscode.env.remoteName ?? 'none'}`,
    );
  });

  it('activates in the extension host', async () => {
    const ext = extension();
    assert.equal(ext.packageJSON.main, './dist/extension.js');
    await ext.activate();
    assert.equal(ext.isActive, true);
    // The extension host is a real Node process, not a web worker.
    assert.equal(typeof process.versions.node, 'string');
  });

  it('registers every command contributed in package.json', async () => {
    const contributed = (extension().packageJSON.contributes?.commands ?? []) as ContributedCommand[];
    assert.ok(contributed.length > 0, 'package.json contributes no commands');
    await extension().activate();
    const registered = new Set(await vscode.commands.getCommands(true));
    const missing = contributed.map((c) => c.command).filter((id) => !registered.has(id));
    assert.deepEqual(missing, [], `contributed but not registered: ${missing.join(', ')}`);
  });

  it('opens one "Off-Peak Tasks" webview panel, and reveals it instead of opening a second', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    assert.equal(tasksPanelTabs().length, 0);

    await vscode.commands.executeCommand('offPeak.openPanel');
    const tab = await waitFor('the Off-Peak Tasks panel tab', () => tasksPanelTabs()[0]);
    assert.equal(tab.label, 'Off-Peak Tasks');

    await vscode.commands.executeCommand('offPeak.openPanel');
    // A round trip through the workbench after the second call, so a second panel (the bug this
    // guards against) would already show up in the tab model.
    await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
    assert.equal(tasksPanelTabs().length, 1);

    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await waitFor('the panel to close', () => (tasksPanelTabs().length === 0 ? true : undefined));
  });
});
