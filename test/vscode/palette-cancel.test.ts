// "Off-Peak: Cancel Task…" from the command palette asks the question the panel's Cancel asks
// (src/panel/confirmations.ts), as a modal, and cancels only when the user chose "Cancel Task".
// Real VS Code, real extension and demo gateway (windows closed, so the task stays queued). The
// quick pick and the modal are answered by replacing the two window functions of the extension's
// own `vscode` API object for the command's duration (the extension host gives each extension its
// own; a module inside the extension's folder gets the extension's, in a development host and in
// an installed .vsix alike).
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { OffPeakApi } from '../../src/extension';
import { connectToGateway, disconnectGateway, EXTENSION_ID, startDemoGateway, waitFor, type DemoGateway } from './demo-gateway';
import { createTaskConfirmed, extensionVscode } from './extension-window';

const DEMO_KEY = 'opk-demo-key-palette-cancel';

interface Asked {
  message: string;
  modal: boolean;
  detail: string | undefined;
  items: string[];
}

/** Runs the palette's Cancel Task… with the quick pick choosing `taskId` and the modal answered `answer`. */
async function cancelFromPalette(api: typeof vscode, taskId: string, answer: string | undefined): Promise<Asked[]> {
  const window = api.window as unknown as Record<'showQuickPick' | 'showWarningMessage', unknown>;
  const original = { showQuickPick: window.showQuickPick, showWarningMessage: window.showWarningMessage };
  const asked: Asked[] = [];
  window.showQuickPick = async (items: readonly { task?: { id: string } }[] | Promise<readonly { task?: { id: string } }[]>) =>
    (await items).find((i) => i.task?.id === taskId);
  window.showWarningMessage = (message: string, options: vscode.MessageOptions | string | undefined, ...items: string[]) => {
    const opts = typeof options === 'object' ? options : {};
    asked.push({
      message,
      modal: opts.modal === true,
      detail: opts.detail,
      items: typeof options === 'string' ? [options, ...items] : items,
    });
    return Promise.resolve(answer);
  };
  try {
    await vscode.commands.executeCommand('offPeak.cancelTask');
  } finally {
    Object.assign(window, original);
  }
  return asked;
}

describe('Off-Peak Tasks: Cancel from the command palette (real VS Code, demo gateway)', () => {
  let gateway: DemoGateway | undefined;
  let api: OffPeakApi;
  let theirs: typeof vscode;

  before(async () => {
    const ext = vscode.extensions.getExtension<OffPeakApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    theirs = extensionVscode(ext.extensionPath);
    gateway = await startDemoGateway(ext.extensionPath, DEMO_KEY, ['--windows-closed']);
  });

  after(() => disconnectGateway(gateway));

  it('item 12: Cancel from the command palette asks like the panel does, and only "Cancel Task" cancels', async function () {
    this.timeout(120_000);
    const engine = await connectToGateway(api, gateway!, DEMO_KEY);
    const { taskId } = await createTaskConfirmed({ prompt: 'Wait in the queue until cancelled.', permissionMode: 'plan' });
    assert.equal(engine.service.getTask(taskId)?.status, 'queued');

    const dismissed = await cancelFromPalette(theirs, taskId, undefined);
    assert.equal(dismissed.length, 1, 'the command asked once');
    assert.deepEqual(
      { message: dismissed[0].message, modal: dismissed[0].modal, items: dismissed[0].items },
      { message: 'Cancel "Wait in the queue until cancelled."?', modal: true, items: ['Cancel Task'] },
    );
    assert.match(dismissed[0].detail ?? '', /leaves the gateway queue/);
    assert.equal(engine.service.getTask(taskId)?.status, 'queued', 'closing the question cancels nothing');

    const confirmed = await cancelFromPalette(theirs, taskId, 'Cancel Task');
    assert.equal(confirmed.length, 1);
    await waitFor('the task to be cancelled', () => engine.service.getTask(taskId)?.status === 'cancelled', 30_000);
  });
});
