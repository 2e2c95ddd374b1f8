// What the panel's backend asks of VS Code itself, apart from the engine and the window's state:
// modal questions, the open folders, the isolation setting, the merge editor, a new window and
// the walkthrough. The composition root (src/extension.ts) adds what belongs to the window.
import path from 'node:path';
import * as vscode from 'vscode';
import type { PanelHostBits } from '../panel/host-bits';
import { confirmModal, confirmModalWithAlternative } from './confirm';
import { readSettings } from './settings';
import { openWalkthrough } from './walkthrough';
import { openWorkspaces } from './workspaces';

export type VscodePanelHost = Pick<
  PanelHostBits,
  'workspaces' | 'confirm' | 'confirmWithAlternative' | 'isolation' | 'openMergeEditor' | 'openFolderInNewWindow' | 'openWalkthrough'
>;

export function vscodePanelHost(): VscodePanelHost {
  return {
    workspaces: () => openWorkspaces(),
    confirm: confirmModal,
    confirmWithAlternative: confirmModalWithAlternative,
    isolation: () => readSettings().isolation,
    openMergeEditor: async (folder, files) => {
      const uri = vscode.Uri.file(path.join(folder, ...files[0].split('/')));
      // The git extension's merge editor; the file itself (with its conflict markers) where that is missing.
      await Promise.resolve(vscode.commands.executeCommand('git.openMergeEditor', uri)).catch(() =>
        vscode.commands.executeCommand('vscode.open', uri),
      );
    },
    openFolderInNewWindow: (folder) =>
      Promise.resolve(vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(folder), { forceNewWindow: true })),
    openWalkthrough,
  };
}
