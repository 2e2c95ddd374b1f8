// The folders open in this window, as task workspaces.
import * as vscode from 'vscode';

export interface OpenWorkspace {
  name: string;
  path: string;
  /** Set in remote windows (SSH, WSL, containers, code-server): the folder's URI with its authority. */
  identity: string | null;
}

export function openWorkspaces(): OpenWorkspace[] {
  return (vscode.workspace.workspaceFolders ?? [])
    .filter((f) => f.uri.scheme === 'file' || f.uri.scheme === 'vscode-remote')
    .map((f) => ({
      name: f.name,
      path: f.uri.fsPath,
      identity: vscode.env.remoteName ? f.uri.toString() : null,
    }));
}
