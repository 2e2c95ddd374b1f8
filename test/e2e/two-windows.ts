// Two "windows" on one globalStorage dir (two HostEngines with their own store instances, as two
// VS Code windows are) in front of a real gateway: here the gateway in demo mode, whose DEMO model
// drives the real reference agent's tools (paced by the test).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';
import { systemClock } from '../../src/core/clock';
import { HostEngine, type HostEngineOptions } from '../../src/engine/host-engine';
import type { TaskNotice } from '../../src/engine/task-notices';
import { resolveGatewayConfig, type GatewayConfig } from '../../src/gateway/config';
import { launchGateway, type LaunchedGateway } from '../../src/gateway/launch';
import { silentLogger } from '../../src/gateway/http/logger';
import { referenceAgentArgv } from '../support/source-bundle';

/** Where the windows meet: one globalStorage dir and one gateway; `engines` are closed by the test. */
export interface SharedStorage {
  storageDir: string;
  gatewayUrl: string;
  apiKey: string;
  engines: HostEngine[];
}

export interface DemoWorld extends SharedStorage {
  root: string;
  gateway: LaunchedGateway;
  close(): Promise<void>;
}

/** The working DEMO model without the human pacing (no queue or admission hold) unless `pacing` says otherwise. */
export async function startDemoWorld(pacing: Partial<GatewayConfig>): Promise<DemoWorld> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-two-windows-'));
  const config = resolveGatewayConfig({
    demo: true,
    port: 0,
    logLevel: 'silent',
    queueHoldMs: 0,
    admissionHoldMs: 0,
    promoteIntervalMs: 100,
    ...pacing,
  });
  const gateway = await launchGateway(config, { clock: systemClock, log: silentLogger });
  const engines: HostEngine[] = [];
  return {
    root,
    storageDir: path.join(root, 'globalStorage'),
    gateway,
    gatewayUrl: gateway.gateway.url,
    apiKey: config.demoKey,
    engines,
    async close() {
      for (const e of engines.splice(0)) await e.dispose();
      await gateway.close(0);
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

export interface WindowRecorder {
  events: RuntimeEvent[];
  notices: TaskNotice[];
}

/** Starts one window; what it reports is recorded. */
export async function startWindow(
  world: SharedStorage,
  windowId: string,
  workspaces: string[],
  over: Partial<HostEngineOptions> = {},
): Promise<{ engine: HostEngine } & WindowRecorder> {
  const recorder: WindowRecorder = { events: [], notices: [] };
  const engine = await HostEngine.start({
    storageDir: world.storageDir,
    gatewayUrl: world.gatewayUrl,
    apiKey: async () => world.apiKey,
    clock: systemClock,
    windowId,
    workspaceKeys: () => workspaces,
    agent: () => 'reference',
    referenceAgent: { command: process.execPath, argsPrefix: referenceAgentArgv(), env: { OFFPEAK_AGENT_RETRY_BASE_MS: '50' } },
    claudeCommand: () => 'claude',
    keepAwake: () => false,
    sync: { longPollMs: 2_000, fallbackPollMs: 300, coalesceMs: 300 },
    onRuntimeEvent: (e) => recorder.events.push(e),
    onNotice: (n) => recorder.notices.push(n),
    ...over,
  });
  world.engines.push(engine);
  return { engine, ...recorder };
}
