// What the suites that drive the extension against a demo gateway share (inside a real VS Code,
// see index.ts): the reference gateway in demo mode as a child process, pointing the extension
// at it with a demo key, and undoing that afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import * as vscode from 'vscode';
import type { OffPeakApi } from '../../src/extension';

export const EXTENSION_ID = 'offpeak.off-peak-tasks';

export interface DemoGateway {
  url: string;
  child: ChildProcess;
}

export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The gateway bundle of the extension at `extensionPath` in demo mode (its scripted DEMO model as
 * the upstream, tickets in memory, so no native module is needed), accepting `demoKey`; `extraArgs`
 * e.g. `--windows-closed`. The extension host's own runtime runs it (Node in code-server; Electron
 * acting as Node on desktop).
 */
export function startDemoGateway(extensionPath: string, demoKey: string, extraArgs: string[] = []): Promise<DemoGateway> {
  const args = [
    path.join(extensionPath, 'dist', 'gateway.js'),
    '--demo',
    '--demo-script',
    'echo',
    ...extraArgs,
    '--port',
    '0',
    '--demo-key',
    demoKey,
    '--log-level',
    'silent',
  ];
  const child = spawn(process.execPath, args, { env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
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

/** Points the extension at `gateway` (its engine restarts on it), sets `demoKey` and waits until off-peak is enabled: the new engine. */
export async function connectToGateway(api: OffPeakApi, gateway: DemoGateway, demoKey: string) {
  const before = api.engine();
  await vscode.workspace.getConfiguration('offPeak').update('gatewayUrl', gateway.url, vscode.ConfigurationTarget.Global);
  // A new gateway URL restarts the engine.
  const engine = await waitFor('the engine to restart on the new gateway', async () => {
    const e = await api.whenStarted();
    return e && e !== before ? e : undefined;
  });
  await vscode.commands.executeCommand('offPeak.setApiKey', demoKey);
  await waitFor('the availability snapshot', async () => (await engine.service.availability.refresh()).status === 'enabled');
  return engine;
}

/** Stops the gateway and takes the extension's gateway URL and API key back. */
export async function disconnectGateway(gateway: DemoGateway | undefined): Promise<void> {
  gateway?.child.kill('SIGTERM');
  await vscode.workspace.getConfiguration('offPeak').update('gatewayUrl', undefined, vscode.ConfigurationTarget.Global);
  await vscode.commands.executeCommand('offPeak.clearApiKey');
}
