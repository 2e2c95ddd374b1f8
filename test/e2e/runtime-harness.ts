// Assembles one "host" (what one VS Code window runs, minus VS Code): the real sql.js task store,
// the real task service + gateway client, the scheduler, the window dispatcher and the task
// runtime with real agent processes. Used in-process by the e2e tests and, through
// host-process.ts, as a separate process that a test can kill.
import fs from 'node:fs';
import path from 'node:path';
import { ClaudeCodeAdapter, ReferenceAgentAdapter, type AgentAdapter, type AgentKind } from '../../src/agent/adapters';
import { TaskRuntime, type RuntimeEvent } from '../../src/agent/task-runtime';
import { systemClock } from '../../src/core/clock';
import { GatewayClient } from '../../src/gateway-client/client';
import { recoverInterrupted, type RecoveryReport } from '../../src/scheduler/recovery';
import { Scheduler } from '../../src/scheduler/scheduler';
import { WindowDispatcher } from '../../src/scheduler/window-dispatcher';
import { TaskService } from '../../src/service';
import { TaskStore } from '../../src/store';
import { tsNodeArgv } from '../integration/runtime-helpers';

export interface HostOptions {
  /** Directory of tasks-index.sqlite (shared by hosts that play different windows). */
  dbDir: string;
  runtimeDir: string;
  gatewayUrl: string;
  apiKey: string;
  agent: AgentKind;
  windowId?: string;
  /** Claude Code only. */
  claudeCommand?: string;
  claudeConfigDir?: string;
  /** Reference agent only: where its sessions live. */
  sessionsDir?: string;
  holdMaxMs?: number;
  /** Unanswered permission questions are denied after this long. */
  askTimeoutMs?: number;
  onEvent?: (event: RuntimeEvent) => void;
  log?: (line: string) => void;
}

export interface Host {
  store: TaskStore;
  service: TaskService;
  runtime: TaskRuntime;
  scheduler: Scheduler;
  recovery: RecoveryReport;
  stop(): Promise<void>;
}

export function referenceAdapter(sessionsDir: string, askTimeoutMs?: number): ReferenceAgentAdapter {
  return new ReferenceAgentAdapter({
    command: process.execPath,
    argsPrefix: tsNodeArgv('src/reference-agent/main.ts'),
    sessionsDir,
    askTimeoutMs,
    env: { OFFPEAK_AGENT_RETRY_BASE_MS: '50' },
  });
}

/** The permission relay MCP server from source (the extension runs dist/permission-mcp.js). */
export const PERMISSION_RELAY_FROM_SOURCE = { command: process.execPath, args: tsNodeArgv('src/permission-mcp/main.ts') };

export async function startHost(options: HostOptions): Promise<Host> {
  const clock = systemClock;
  const windowId = options.windowId ?? `window-${process.pid}`;
  const store = await TaskStore.open({ directory: options.dbDir, clock, durable: false, watch: { pollMs: 200 } });
  const gateway = new GatewayClient({ baseUrl: options.gatewayUrl, apiKey: async () => options.apiKey, clock });
  const adapters: Partial<Record<AgentKind, AgentAdapter>> = {};
  if (options.agent === 'reference') adapters.reference = referenceAdapter(options.sessionsDir ?? path.join(options.runtimeDir, 'sessions'), options.askTimeoutMs);
  if (options.agent === 'claude-code') {
    adapters['claude-code'] = new ClaudeCodeAdapter({
      command: options.claudeCommand!,
      configDir: options.claudeConfigDir,
      env: { CLAUDE_CODE_MAX_RETRIES: '2' },
      permissionRelay: PERMISSION_RELAY_FROM_SOURCE,
      askTimeoutMs: options.askTimeoutMs,
    });
  }
  // eslint-disable-next-line prefer-const
  let runtime: TaskRuntime;
  const service = new TaskService({
    store,
    gateway,
    clock,
    windowId,
    stopAgent: (taskId) => runtime.stopTask(taskId),
    sync: { fallbackPollMs: 300, coalesceMs: 300, longPollMs: 2_000, backoffMs: 300, backoffMaxMs: 2_000, settleBackoffMs: 300, retakeBackoffMs: 300, retakeBackoffMaxMs: 2_000 },
    lease: { ttlMs: 3_000, tickMs: 500 },
    log: options.log,
  });
  runtime = new TaskRuntime({
    store,
    service,
    adapters,
    defaultAgent: () => options.agent,
    gateway: { baseUrl: options.gatewayUrl, apiKey: async () => options.apiKey },
    runtimeDir: options.runtimeDir,
    clock,
    proxyTimings: { holdDefaultMs: 200, holdMaxMs: options.holdMaxMs ?? 300 },
    stopTimings: { sigintGraceMs: 3_000, sigtermGraceMs: 2_000 },
    askTimeoutMs: options.askTimeoutMs !== undefined ? () => options.askTimeoutMs! : undefined,
    onEvent: options.onEvent,
    log: options.log,
  });
  const dispatcher = new WindowDispatcher(windowId);
  dispatcher.register({ windowId, workspaceKeys: () => [], runTask: (task) => runtime.runTask(task) });
  const scheduler = new Scheduler({ store, dispatcher, clock, isLeader: () => service.isLeader, idleTickMs: 250, log: options.log });
  service.on('wake', () => scheduler.wake());
  service.leadership.onDidChange(() => scheduler.wake());
  store.onDidChange(() => scheduler.wake());

  await service.start();
  fs.mkdirSync(options.runtimeDir, { recursive: true });
  // A host restarted right after a crash finds the dead host's lease still valid until it expires
  // (3 s here): wait for it, as recovery is the lease holder's job (HostEngine recovers on the
  // leadership change instead).
  for (let i = 0; i < 240 && !service.isLeader; i++) await new Promise((r) => setTimeout(r, 25));
  const recovery = service.isLeader ? await recoverInterrupted(store, options.runtimeDir) : { requeued: [], stillRunning: [], killedOrphans: [] };
  scheduler.start();
  return {
    store,
    service,
    runtime,
    scheduler,
    recovery,
    async stop() {
      await scheduler.stop();
      await runtime.shutdown();
      await scheduler.idle();
      await service.stop();
      await store.close();
    },
  };
}

export async function waitFor<T>(probe: () => T | undefined | false, what: string, timeoutMs = 60_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
