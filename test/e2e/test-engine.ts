// The e2e tests' window: the real HostEngine (what src/extension.ts builds per VS Code window,
// minus VS Code) with the agents run from source and every timing shortened, so a test sees a
// sync, a lease takeover or a hold in well under a second. Used in-process and, through
// host-process.ts, as a separate process that a test can kill.
import path from 'node:path';
import type { ChannelConnect } from '../../src/gateway-client/socket-fetch';
import type { AgentKind } from '../../src/agent/runtime/agent-adapter';
import type { ClaudeCodeLocation } from '../../src/agent/runtime/claude-code-locate';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';
import { systemClock, type Clock } from '../../src/core/clock';
import { HostEngine } from '../../src/engine/host-engine';
import type { GatewayConfig } from '../../src/gateway/config';
import { LocalAuthority, type LocalAuthorityOptions } from '../../src/personal/local-authority';
import { personalTasksDir } from '../../src/personal/other-queue';
import type { TaskNotice } from '../../src/engine/task-notices';
import type { StoreFs } from '../../src/store';
import { bundledEntryArgv, referenceAgentArgv } from '../support/source-bundle';
import { startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import type { Pricer } from '../../src/core/spend';

export interface TestEngineOptions {
  /** globalStorage: windows that share it share tasks-index.sqlite. */
  storageDir: string;
  gatewayUrl: string;
  /** Personal mode: the local authority's socket / pipe. */
  gatewayChannel?: ChannelConnect;
  apiKey: string;
  agent: AgentKind;
  /** Picks each new task's agent as the extension does (`engineAgentChoice`), instead of `agent` and `claudeCommand`. */
  agentChoice?: { agent: () => AgentKind; claudeCommand: () => string | ClaudeCodeLocation };
  windowId?: string;
  /** The workspaces open in this window (none: it runs whatever no other window claims). */
  workspaceKeys?: readonly string[];
  /** Claude Code only. */
  claudeCommand?: string;
  claudeConfigDir?: string;
  /** OpenAI's Codex: its native executable and CODEX_HOME (tests isolate it). */
  codex?: { command: string; codexHome: string };
  holdMaxMs?: number;
  /** A usage limit resetting later than this parks the task (docs/flows.md#usage-limits); default the product's. */
  usageLimitParkMs?: number;
  /** How long a segment waits for an unreachable gateway (docs/flows.md#segments); default the product's. */
  outageMaxWaitMs?: number;
  /** Unanswered permission questions are denied after this long (in `deny` mode). A getter is read at each use, as a setting. */
  askTimeoutMs?: number | (() => number);
  /** What an unanswered question does (default: the engine's, park). */
  unansweredQuestion?: 'park' | 'deny' | (() => 'park' | 'deny');
  /** In `park` mode, how long a question waits before the task parks. */
  askParkMs?: number | (() => number);
  /** Each answer's dollars (docs/flows.md#capacity-and-cost). */
  pricer?: Pricer;
  /** Task checks' time limit and rounds (the extension reads `offPeak.check.*`). */
  checks?: { timeoutMs: () => number; maxRounds: () => number };
  onNotice?: (notice: TaskNotice) => void;
  onEvent?: (event: RuntimeEvent) => void;
  log?: (line: string) => void;
  /** Extra environment of Claude Code (e.g. a login token of its own in personal mode). */
  claudeEnv?: Record<string, string>;
  /** Extra environment of the reference agent (e.g. a login token of its own in personal mode). */
  referenceAgentEnv?: Record<string, string>;
  /** Personal mode: which agents use their own login (passed through untouched). */
  ownLogin?: (agent: AgentKind) => boolean;
  /** How Claude Code starts the permission relay; default from source (the bench runs the built one, as the extension does). */
  permissionRelay?: { command: string; args: string[] };
  /** The task store's file system (a fixture standing in for a failing disk); default node:fs. */
  storeFs?: StoreFs;
  /** The window's clock (e.g. an OffsetClock: a window opened hours later); default the system's. */
  clock?: Clock;
  /** Personal mode's own model API and key ("Open session" of a reference-agent task). */
  ownModel?: { baseUrl: string; apiKey: () => Promise<string | undefined> };
}

/** Personal mode's window: a local authority (own or another window's) in front of `upstreamUrl`. */
export interface PersonalTestOptions {
  upstreamUrl: string;
  /** The model API key (SecretStorage in the extension); none: only own logins work. */
  modelApiKey?: string;
  hours?: string;
  /** The reference agent uses its own login (the token given in referenceAgentEnv). */
  referenceOwnLogin?: boolean;
  /** Claude Code uses its own login (default true, as `modelCredential` `claudeLogin`); false: the model API key. */
  claudeOwnLogin?: boolean;
  /** Gateway settings of the authority, if this window starts it (e.g. segmentCapacity). */
  gateway?: Partial<GatewayConfig>;
  /** The authority's clock (tests move it to a usage limit's reset). */
  clock?: Clock;
}

/** A window in personal mode: starts or follows the local authority, then the engine on its URL and key. */
export async function startPersonalTestEngine(
  options: Omit<TestEngineOptions, 'gatewayUrl' | 'apiKey'> & {
    personal: PersonalTestOptions;
    onServing?: LocalAuthorityOptions['onServing'];
  },
): Promise<{ engine: HostEngine; authority: LocalAuthority }> {
  const authority = await LocalAuthority.start({
    storageDir: options.storageDir,
    settings: () => ({ hours: options.personal.hours ?? 'always', modelBaseUrl: options.personal.upstreamUrl }),
    modelApiKey: async () => options.personal.modelApiKey,
    gatewayOverrides: {
      promoteIntervalMs: 100,
      queuedPollMs: 200,
      maxPollMs: 1_000,
      statusMaxWaitMs: 2_000,
      busyRetryAfterMs: 1_000,
      ...options.personal.gateway,
    },
    durable: false,
    clock: options.personal.clock,
    log: options.log,
    onServing: options.onServing,
  });
  const engine = await startTestEngine({
    ...options,
    // As the extension does: personal mode's queue is its own task database.
    storageDir: personalTasksDir(options.storageDir),
    gatewayUrl: authority.url,
    gatewayChannel: authority.connect,
    apiKey: authority.key,
    ownLogin: (agent) =>
      agent === 'claude-code' ? options.personal.claudeOwnLogin !== false : options.personal.referenceOwnLogin === true,
  });
  return { engine, authority };
}

/**
 * The permission relay MCP server bundled from source, as the extension ships it
 * (dist/permission-mcp.js): one started through tsx took seconds on a busy machine and at times
 * never answered Claude Code's connect ("MCP tool … not found").
 */
function permissionRelayFromSource(): { command: string; args: string[] } {
  return { command: process.execPath, args: bundledEntryArgv('src/permission-mcp/main.ts') };
}

export function startTestEngine(options: TestEngineOptions): Promise<HostEngine> {
  const workspaceKeys = options.workspaceKeys ?? [];
  return HostEngine.start({
    storageDir: options.storageDir,
    gatewayUrl: options.gatewayUrl,
    gatewayChannel: options.gatewayChannel,
    apiKey: async () => options.apiKey,
    clock: options.clock ?? systemClock,
    windowId: options.windowId ?? `window-${process.pid}`,
    workspaceKeys: () => workspaceKeys,
    agent: options.agentChoice?.agent ?? (() => options.agent),
    referenceAgent: {
      command: process.execPath,
      argsPrefix: referenceAgentArgv(),
      env: { OFFPEAK_AGENT_RETRY_BASE_MS: '50', ...options.referenceAgentEnv },
    },
    ownLogin: options.ownLogin,
    ownModel: options.ownModel,
    claudeCommand: options.agentChoice?.claudeCommand ?? (() => options.claudeCommand ?? 'claude'),
    claudeCode: { configDir: options.claudeConfigDir, env: { CLAUDE_CODE_MAX_RETRIES: '2', ...options.claudeEnv } },
    codex: options.codex,
    permissionRelay: options.permissionRelay ?? permissionRelayFromSource(),
    askTimeoutMs: options.askTimeoutMs,
    unansweredQuestion: options.unansweredQuestion,
    askParkMs: options.askParkMs,
    checks: options.checks,
    pricer: options.pricer ? () => options.pricer! : undefined,
    onNotice: options.onNotice,
    keepAwake: () => false,
    sync: {
      fallbackPollMs: 300,
      coalesceMs: 300,
      longPollMs: 2_000,
      backoffMs: 300,
      backoffMaxMs: 2_000,
      settleBackoffMs: 300,
      retakeBackoffMs: 300,
      retakeBackoffMaxMs: 2_000,
    },
    lease: { ttlMs: 3_000, tickMs: 500 },
    storeTuning: { durable: false, watch: { pollMs: 200 }, fs: options.storeFs },
    schedulerTuning: { idleTickMs: 250 },
    runtimeTuning: {
      proxyTimings: {
        holdDefaultMs: 200,
        holdMaxMs: options.holdMaxMs ?? 300,
        outageRetryMs: 100,
        outageRetryMaxMs: 400,
        outageMaxWaitMs: options.outageMaxWaitMs,
        usageLimitParkMs: options.usageLimitParkMs,
      },
      stopTimings: { sigintGraceMs: 3_000, sigtermGraceMs: 2_000 },
    },
    onRuntimeEvent: options.onEvent,
    log: options.log,
  });
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

/**
 * For a describe whose tests each boot a real gateway world (gateway-fixture.ts) and one window's
 * engine with the reference agent: `boot()` starts both and waits for the lease; both are closed
 * after each test. `world()` is the current test's world.
 */
export function useReferenceWorld(): { boot(): Promise<HostEngine>; world(): GatewayWorld } {
  let world: GatewayWorld | undefined;
  let host: HostEngine | undefined;
  afterEach(async () => {
    await host?.dispose();
    host = undefined;
    await world?.close();
    world = undefined;
  });
  return {
    async boot() {
      world = await startWorld({});
      host = await startTestEngine({
        storageDir: path.join(world.root, 'globalStorage'),
        gatewayUrl: world.gateway.url,
        apiKey: USER_KEY,
        agent: 'reference',
      });
      await waitFor(() => host!.service.isLeader, 'the lease');
      return host;
    },
    world: () => world!,
  };
}
