// The product end to end inside a real VS Code: the reference gateway (demo mode, its scripted
// DEMO model as the upstream) runs as a child process; the extension is pointed at it, given the
// demo key through its command, and a task is queued from the command palette's command. The
// extension's own engine takes the ticket, the scheduler starts the bundled reference agent in
// the workspace, and the task completes with one History row.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import type { OffPeakApi } from '../../src/extension';
import { connectToGateway, disconnectGateway, EXTENSION_ID, startDemoGateway, waitFor, type DemoGateway } from './demo-gateway';
import { createTaskConfirmed } from './extension-window';

const DEMO_KEY = 'opk-demo-key-vscode-test';

describe('Off-Peak Tasks end to end in a real VS Code (demo gateway, reference agent)', () => {
  let gateway: DemoGateway | undefined;
  let api: OffPeakApi;

  before(async () => {
    const ext = vscode.extensions.getExtension<OffPeakApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    gateway = await startDemoGateway(ext.extensionPath, DEMO_KEY);
  });

  after(() => disconnectGateway(gateway));

  it('queues a task from the command, runs the agent in the workspace, completes with one History row', async function () {
    this.timeout(120_000);
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'the harness opens a workspace folder');
    const engine = await connectToGateway(api, gateway!, DEMO_KEY);

    const { taskId, shown } = await createTaskConfirmed({
      prompt: 'List the files in this workspace and say hello.',
      permissionMode: 'plan',
    });
    assert.equal(typeof taskId, 'string', 'the command returns the new task id');
    assert.equal(shown.length, 1, 'the prompt given as an argument was shown for confirmation once');
    assert.ok(shown[0].includes('List the files in this workspace and say hello.'), 'the confirmation shows the prompt');
    const created = engine.service.getTask(taskId)!;
    assert.equal(created.workspacePath, folder.uri.fsPath);
    assert.ok(created.serverTicketId, 'a ticket was taken before the row was inserted');

    const done = await waitFor(
      'the task to reach a terminal state',
      () => {
        const t = engine.service.getTask(taskId);
        return t && ['completed', 'failed', 'cancelled'].includes(t.status) ? t : undefined;
      },
      90_000,
    );
    assert.equal(done.status, 'completed', `failure: ${done.failureReason ?? ''}`);
    assert.ok(done.startedAt !== null && done.endedAt !== null);

    const history = engine.service.history().filter((h) => h.taskId === taskId);
    assert.equal(history.length, 1, 'one History row');
    assert.equal(history[0].status, 'succeeded');

    // The agent's output went to the task's integrated terminal and its segment log.
    assert.ok(
      vscode.window.terminals.some((t) => t.name.startsWith('Off-Peak:')),
      'an Off-Peak terminal exists',
    );
    const segmentLogs = fs.readdirSync(path.join(api.storageDir, 'runtime', 'tasks', taskId));
    assert.ok(segmentLogs.length >= 1, 'a segment directory with its log');

    // The ticket is settled on the gateway (the settle outbox drains).
    await waitFor('the ticket to be settled', () => engine.service.ticketsOf(taskId).every((t) => t.settleState === 'settled'), 30_000);

    // item 10: the terminal is named after the task's title, and deleting the task closes it.
    const terminalName = `Off-Peak: ${done.title}`.slice(0, 60);
    assert.ok(
      vscode.window.terminals.some((t) => t.name === terminalName),
      `a terminal named "${terminalName}": ${vscode.window.terminals.map((t) => t.name).join(', ')}`,
    );
    await engine.service.delete(taskId);
    await waitFor("the deleted task's terminal to close", () => !vscode.window.terminals.some((t) => t.name === terminalName), 15_000);
  });
});
