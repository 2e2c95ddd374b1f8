/**
 * One VS Code window as its own process, minus VS Code: the real HostEngine (store, service,
 * leader lease, scheduler, window registry, runtime) and the real PanelController with a webview
 * port that counts the snapshots it would post. Driven over IPC by idle-windows.ts:
 *   {cmd: 'mark'}   -> starts a measurement window; answers {marked}
 *   {cmd: 'report'} -> answers what happened since the mark: DB persists and reloads, lease
 *                      writes and renewals, panel snapshots pushed, CPU time, and from Linux
 *                      /proc/self/io the bytes this process sent to storage (write_bytes) and
 *                      passed to write() calls of any kind, pipes and eventfds included (wchar)
 * SIGTERM = clean exit (dispose). Runs under tsx or bundled by esbuild (the bench: no loader thread).
 * usage: node [--import tsx] idle-window.(ts|js) <storageDir> <windowId> <reference agent argv JSON> <gatewayUrl> <apiKey>
 */
import fs from 'node:fs';
import { systemClock } from '../../../src/core/clock';
import { HostEngine } from '../../../src/engine/host-engine';
import { PanelController, type WebviewPort } from '../../../src/panel/panel-controller';
import { createServiceBackend } from '../../../src/panel/service-backend';
import type { HostToWebview } from '../../../src/protocol/webview';

interface IoCounters {
  storage: number;
  syscalls: number;
}

function ioCounters(): IoCounters | undefined {
  try {
    const fields = Object.fromEntries(
      fs
        .readFileSync('/proc/self/io', 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(': ')),
    );
    return { storage: Number(fields.write_bytes), syscalls: Number(fields.wchar) };
  } catch {
    return undefined; // not Linux
  }
}

async function main(): Promise<void> {
  const [storageDir, windowId, agentArgv, gatewayUrl, apiKey] = process.argv.slice(2);
  const engine = await HostEngine.start({
    storageDir,
    gatewayUrl,
    apiKey: async () => apiKey,
    clock: systemClock,
    windowId,
    workspaceKeys: () => [`/ws/${windowId}`],
    agent: () => 'reference',
    referenceAgent: { command: process.execPath, argsPrefix: JSON.parse(agentArgv) as string[] },
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
  const backend = createServiceBackend(
    engine.service,
    engine.store,
    {
      hasApiKey: async () => true,
      setApiKey: async () => undefined,
      workspaces: () => [{ name: windowId, path: `/ws/${windowId}`, identity: null }],
      models: () => [],
      configs: () => undefined,
      reloadConfigs: async () => undefined,
      confirm: async () => false,
      openTerminal: async () => undefined,
      notice: () => undefined,
    },
    engine.questions,
  );
  const panel = new PanelController(port, backend, systemClock);
  receive({ type: 'ready' }); // the webview is open and showing the panel
  await engine.service.availability.refresh(); // as the extension does at start
  const keepAlive = setInterval(() => undefined, 60_000);

  let mark = {
    persists: 0,
    reloads: 0,
    leaseWrites: 0,
    leaseRenewals: 0,
    snapshots: 0,
    cpu: process.cpuUsage(),
    io: ioCounters(),
    at: Date.now(),
  };
  process.on('message', (msg: { cmd: string }) => {
    if (msg.cmd === 'mark') {
      const { persists, reloads, leaseWrites, leaseRenewals } = engine.store.stats;
      mark = { persists, reloads, leaseWrites, leaseRenewals, snapshots, cpu: process.cpuUsage(), io: ioCounters(), at: Date.now() };
      process.send!({ marked: true, isLeader: engine.service.isLeader });
    } else if (msg.cmd === 'report') {
      const io = ioCounters();
      const cpu = process.cpuUsage(mark.cpu);
      const { stats } = engine.store;
      process.send!({
        windowId,
        isLeader: engine.service.isLeader,
        ms: Date.now() - mark.at,
        persists: stats.persists - mark.persists,
        reloads: stats.reloads - mark.reloads,
        leaseWrites: stats.leaseWrites - mark.leaseWrites,
        leaseRenewals: stats.leaseRenewals - mark.leaseRenewals,
        panelSnapshots: snapshots - mark.snapshots,
        cpuMs: (cpu.user + cpu.system) / 1000,
        storageBytesWritten: io && mark.io ? io.storage - mark.io.storage : null,
        syscallBytesWritten: io && mark.io ? io.syscalls - mark.io.syscalls : null,
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
