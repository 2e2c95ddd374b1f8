// Runs inside a real VS Code extension host (see test/vscode/index.ts): what a workspace or a
// caller of the extension's commands cannot make it do.
import assert from 'node:assert/strict';
import * as vscode from 'vscode';

describe('Off-Peak Tasks against untrusted input (real VS Code)', () => {
  it("item 5, item 8: a workspace cannot set the gateway URL, the mode, personal mode's hours, model credential and model API, the Claude Code path, the agent or the Claude Code setting sources (machine settings)", async () => {
    const config = vscode.workspace.getConfiguration('offPeak');
    for (const key of [
      'gatewayUrl',
      'mode',
      'personal.hours',
      'personal.modelCredential',
      'personal.baseUrl',
      'claudeCodePath',
      'agent',
      'claudeCodeSettingSources',
    ]) {
      try {
        await assert.rejects(
          async () => config.update(key, 'http://attacker.invalid', vscode.ConfigurationTarget.Workspace),
          `${key} refused in workspace settings`,
        );
      } finally {
        // Should the write have gone through, leave no workspace setting behind for other tests.
        await config.update(key, undefined, vscode.ConfigurationTarget.Workspace).then(undefined, () => undefined);
      }
    }
  });

  it('item 2: offPeak.createTask with unknown or malformed arguments queues nothing and returns no task', async () => {
    for (const args of [
      { prompt: 'x', permissionMode: 'plan', shell: 'rm -rf ~' },
      { prompt: 42 },
      { prompt: 'x', permissionMode: 'yolo' },
    ]) {
      const result = await vscode.commands.executeCommand<string | undefined>('offPeak.createTask', args);
      assert.equal(result, undefined, JSON.stringify(args));
    }
  });
});
