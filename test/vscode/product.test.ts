// The product end to end inside a real VS Code: the reference gateway (demo mode, its scripted
// DEMO model as the upstream) runs as a child process; the extension is pointed at it, given the
// demo key through its command, and a task is queued from the command palette's command. The
// extension's own engine takes the ticket, the scheduler starts the bundled reference agent in
// the workspace, and the task completes with one History row.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import type { OffPeakApi } from '../../src/extension';

const EXTENSION_ID = 'offpeak.off-peak-tasks';
const DEMO_KEY = 'opk-demo-key-vscode-test';

async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function startDemoGateway(extensionPath: string): Promise<{ url: string; child: ChildProcess }> {
  // The extension host's own runtime runs the gateway bundle (Node 24 in code-server; Electron
  // acting as Node on desktop). Demo mode keeps tickets in memory, so no native module is needed.
  const child = spawn(process.execPath, [path.join(extensionPath, 'dist', 'gateway.js'), '--demo', '--demo-script', 'echo', '--port', '0', '--demo-key', DEMO_KEY, '--log-level', 'silent'], {
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the demo gateway did not start:\n${out}`)), 20_000);
    child.stdout!.on('data', (d) => {
      out += String(d);
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child });
      }
    });
    child.stderr!.on('data', (d) => (out += String(d)));
    child.on('exit', (code) => reject(new Error(`the demo gateway exited (${code}):\n${out}`)));
  });
}

describe('Off-Peak Tasks end to end in a real VS Code (demo gateway, reference agent)', () => {
  let gateway: { url: string; child: ChildProcess } | undefined;
  let api: OffPeakApi;

  before(async () => {
    const ext = vscode.extensions.getExtension<OffPeakApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    gateway = await startDemoGateway(ext.extensionPath);
  });

  after(async () => {
    gateway?.child.kill('SIGTERM');
    await vscode.workspace.getConfiguration('offPeak').update('gatewayUrl', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('offPeak.clearApiKey');
  });

  it('queues a task from the command, runs the agent in the workspace, completes with one History row', async function () {
    this.timeout(120_000);
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'the harness opens a workspace folder');
    const before = api.engine();
    await vscode.workspace.getConfiguration('offPeak').update('gatewayUrl', gateway!.url, vscode.ConfigurationTarget.Global);
    // A new gateway URL restarts the engine.
    const engine = await waitFor('the engine to restart on the new gateway', async () => {
      const e = await api.whenStarted();
      return e && e !== before ? e : undefined;
    });
    await vscode.commands.executeCommand('offPeak.setApiKey', DEMO_KEY);
    await waitFor('the availability snapshot', async () => (await engine.service.availability.refresh()).status === 'enabled');

    const taskId = await vscode.commands.executeCommand<string>('offPeak.createTask', {
      prompt: 'List the files in this workspace and say hello.',
      permissionMode: 'plan',
    });
    assert.equal(typeof taskId, 'string', 'the command returns the new task id');
    const created = engine.service.getTask(taskId)!;
    assert.equal(created.workspacePath, folder.uri.fsPath);
    assert.ok(created.serverTicketId, 'a ticket was taken before the row was inserted');

    const done = await waitFor('the task to reach a terminal state', () => {
      const t = engine.service.getTask(taskId);
      return t && ['completed', 'failed', 'cancelled'].includes(t.status) ? t : undefined;
    }, 90_000);
    assert.equal(done.status, 'completed', `failure: ${done.failureReason ?? ''}`);
    assert.ok(done.startedAt !== null && done.endedAt !== null);

    const history = engine.service.history().filter((h) => h.taskId === taskId);
    assert.equal(history.length, 1, 'one History row');
    assert.equal(history[0].status, 'succeeded');

    // The agent's output went to the task's integrated terminal and its segment log.
    assert.ok(vscode.window.terminals.some((t) => t.name.startsWith('Off-Peak:')), 'an Off-Peak terminal exists');
    const segmentLogs = fs.readdirSync(path.join(api.storageDir, 'runtime', 'tasks', taskId));
    assert.ok(segmentLogs.length >= 1, 'a segment directory with its log');

    // The ticket is settled on the gateway (the settle outbox drains).
    await waitFor('the ticket to be settled', () => engine.service.ticketsOf(taskId).every((t) => t.settleState === 'settled'), 30_000);

    // item 10: the terminal is named after the task's title, and deleting the task closes it.
    const terminalName = `Off-Peak: ${done.title}`.slice(0, 60);
    assert.ok(vscode.window.terminals.some((t) => t.name === terminalName), `a terminal named "${terminalName}": ${vscode.window.terminals.map((t) => t.name).join(', ')}`);
    await engine.service.delete(taskId);
    await waitFor('the deleted task\'s terminal to close', () => !vscode.window.terminals.some((t) => t.name === terminalName), 15_000);
  });
});
