/**
 * One VS Code window as its own process, minus VS Code: the real HostEngine (store, service,
 * leader lease, scheduler, window registry, runtime) and the real PanelController with a webview
 * port that counts the snapshots it would post. Driven over IPC by idle-windows.ts:
 *   {cmd: 'mark'}   -> starts a measurement window; answers {marked}
 *   {cmd: 'report'} -> answers what happened since the mark: DB persists and reloads, lease
 *                      writes, panel snapshots pushed, CPU time, bytes this process wrote (Linux
 *                      /proc/self/io wchar: every write() it made, to any file or pipe)
 * SIGTERM = clean exit (dispose). usage: node --import tsx idle-window.ts <storageDir> <windowId>
 */
import fs from 'node:fs';
import { systemClock } from '../../../src/core/clock';
import { HostEngine } from '../../../src/engine/host-engine';
import { PanelController, type WebviewPort } from '../../../src/panel/panel-controller';
import { createServiceBackend } from '../../../src/panel/service-backend';
import type { HostToWebview } from '../../../src/protocol/webview';
import { tsNodeArgv } from '../runtime-helpers';

function bytesWritten(): number | undefined {
  try {
    const line = fs.readFileSync('/proc/self/io', 'utf8').split('\n').find((l) => l.startsWith('wchar:'));
    return line ? Number(line.split(':')[1]) : undefined;
  } catch {
    return undefined; // not Linux
  }
}

async function main(): Promise<void> {
  const [storageDir, windowId] = process.argv.slice(2);
  const engine = await HostEngine.start({
    storageDir,
    // Nothing is live, so nothing may reach the gateway: a closed port makes any request fail loudly in the log.
    gatewayUrl: 'http://127.0.0.1:9',
    apiKey: async () => 'opk_idle_test_key',
    clock: systemClock,
    windowId,
    workspaceKeys: () => [`/ws/${windowId}`],
    agent: () => 'reference',
    referenceAgent: { command: process.execPath, argsPrefix: tsNodeArgv('src/reference-agent/main.ts') },
    claudeCommand: () => 'claude',
    keepAwake: () => false,
    log: (line) => process.stderr.write(`${windowId}: ${line}\n`),
  });
  let snapshots = 0;
  let receive: (message: unknown) => void = () => undefined;
  const port: WebviewPort = {
    postMessage: (message: HostToWebview) => {
      if (message.type === 'state') snapshots += 1;
      return true;
    },
    onDidReceiveMessage: (listener) => {
      receive = listener;
      return { dispose: () => undefined };
    },
  };
  const backend = createServiceBackend(engine.service, engine.store, {
    hasApiKey: async () => true,
    setApiKey: async () => undefined,
    workspaces: () => [{ name: windowId, path: `/ws/${windowId}` }],
    models: () => [],
    openTerminal: async () => undefined,
    notice: () => undefined,
  });
  const panel = new PanelController(port, backend, systemClock);
  receive({ type: 'ready' }); // the webview is open and showing the panel
  const keepAlive = setInterval(() => undefined, 60_000);

  let mark = { persists: 0, reloads: 0, leaseWrites: 0, snapshots: 0, cpu: process.cpuUsage(), wchar: bytesWritten(), at: Date.now() };
  process.on('message', (msg: { cmd: string }) => {
    if (msg.cmd === 'mark') {
      const { persists, reloads, leaseWrites } = engine.store.stats;
      mark = { persists, reloads, leaseWrites, snapshots, cpu: process.cpuUsage(), wchar: bytesWritten(), at: Date.now() };
      process.send!({ marked: true, isLeader: engine.service.isLeader });
    } else if (msg.cmd === 'report') {
      const wchar = bytesWritten();
      const cpu = process.cpuUsage(mark.cpu);
      const { stats } = engine.store;
      process.send!({
        windowId,
        isLeader: engine.service.isLeader,
        ms: Date.now() - mark.at,
        persists: stats.persists - mark.persists,
        reloads: stats.reloads - mark.reloads,
        leaseWrites: stats.leaseWrites - mark.leaseWrites,
        panelSnapshots: snapshots - mark.snapshots,
        cpuMs: (cpu.user + cpu.system) / 1000,
        bytesWritten: wchar !== undefined && mark.wchar !== undefined ? wchar - mark.wchar : null,
      });
    }
  });
  process.once('SIGTERM', () => {
    clearInterval(keepAlive);
    panel.dispose();
    void engine.dispose().then(() => process.exit(0));
  });
  process.send!({ started: true, isLeader: engine.service.isLeader });
}

main().catch((err: unknown) => {
  process.stderr.write(`idle-window: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
