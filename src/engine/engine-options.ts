// What a window's engine is started with (HostEngine.start), and where it keeps its files under
// globalStorage.
import type { ChannelConnect } from '../core/channel-agent';
import path from 'node:path';
import type { ClaudeCodeLocation } from '../agent/runtime/claude-code-locate';
import type { AgentKind } from '../agent/runtime/agent-adapter';
import type { ClaudeCodeOptions, ClaudeSettingSources } from '../agent/runtime/claude-code-adapter';
import type { CodexOptions } from '../agent/runtime/codex-adapter';
import type { UnansweredQuestion } from '../core/ask-types';
import type { RuntimeEvent } from '../agent/runtime/task-runtime';
import type { TaskRuntimeOptions } from '../agent/runtime/task-runtime-options';
import type { ModelKeyRouteOptions } from '../agent/proxy/model-key-proxy';
import type { Clock } from '../core/clock';
import type { LiveValue } from '../core/live-value';
import type { HistoryKeep } from '../service/history-archive';
import type { SchedulerOptions } from '../scheduler/scheduler';
import type { SyncConfig, TaskServiceOptions } from '../service';
import type { TaskNotice } from './task-notices';
import type { AwayNotificationsOptions } from '../notify/away-notifications';
import type { StoreNotice, TaskStoreOptions } from '../store';
import type { Pricer } from '../core/spend';

export interface HostEngineOptions {
  /** globalStorage: tasks-index.sqlite, agent sessions, segment logs. */
  storageDir: string;
  gatewayUrl: string;
  /**
   * Personal mode: connections to the local authority's proven Unix domain socket / Windows named
   * pipe (`LocalAuthority.connect`). Every call to the gateway, the ticket proxies' included, goes
   * there and never to a loopback port.
   */
  gatewayChannel?: ChannelConnect;
  /** The user's gateway key, read from SecretStorage on every use; never written anywhere else. */
  apiKey: () => Promise<string | undefined>;
  /** Personal mode: which agents use their own login, passed through untouched (docs/architecture.md#personal-mode). */
  ownLogin?: (agent: AgentKind) => boolean;
  clock: Clock;
  windowId: string;
  /** workspace_key values of the folders open in this window. */
  workspaceKeys: () => readonly string[];
  agent: () => AgentKind;
  /** How to start the bundled reference agent, e.g. [execPath, '<ext>/dist/reference-agent.js']. */
  referenceAgent: { command: string; argsPrefix: string[]; env?: Record<string, string> };
  /** Personal mode: the user's own model API and key, with which "Open session" continues a reference-agent session (docs/flows.md#open-session). */
  ownModel?: ModelKeyRouteOptions;
  /** Path of the `claude` executable, or where `locateClaudeCode` found it (Claude Code adapter). */
  claudeCommand: () => string | ClaudeCodeLocation;
  /** Which Claude Code setting files a task loads (read at each launch; default `user`). */
  claudeSettingSources?: () => ClaudeSettingSources;
  /** Claude Code's config dir and extra environment (default: the user's own). */
  claudeCode?: Pick<ClaudeCodeOptions, 'configDir' | 'env'>;
  /** OpenAI's Codex (its native executable, CODEX_HOME, extra environment): without it no task runs Codex here. */
  codex?: Omit<CodexOptions, 'threadsDir'>;
  /**
   * How to start the permission relay MCP server that lets a headless Claude Code ask, e.g.
   * [execPath, '<ext>/dist/permission-mcp.js']. Without it Claude Code denies its own asks.
   */
  permissionRelay?: { command: string; args: string[]; env?: Record<string, string> };
  /**
   * In `deny` mode, an unanswered permission question is denied after this long (default 10 min).
   * This and the next two may be getters: read at each question and each launch, so a setting
   * change applies without a reload (a question already open keeps what it was asked under).
   */
  askTimeoutMs?: LiveValue<number>;
  /** What an unanswered question does (`offPeak.unansweredQuestion`): park the task (default) or deny. */
  unansweredQuestion?: LiveValue<UnansweredQuestion>;
  /** In `park` mode, how long a question waits before the task parks (default 10 min). */
  askParkMs?: LiveValue<number>;
  /** Each model answer's dollars (the price list with `offPeak.prices` over it, read at each answer; docs/flows.md#capacity-and-cost). */
  pricer?: () => Pricer;
  /** `offPeak.prices` as set, read at each answer: over the shipped price list when `pricer` is not given. */
  priceSetting?: () => unknown;
  /** Task checks' time limit and rounds (`offPeak.check.*`, read at each check; docs/flows.md#checks). */
  checks?: TaskRuntimeOptions['checks'];
  keepAwake: () => boolean;
  /** Open pull request (docs/flows.md#pull-requests): its settings (read at each use) and the user's forge token. */
  pullRequests?: TaskServiceOptions['pullRequests'];
  /** sql-wasm.wasm beside the extension bundle. */
  wasmPath?: string;
  sync?: Partial<SyncConfig>;
  lease?: { ttlMs?: number; tickMs?: number };
  /** Store tuning (tests trade durability and watch latency for speed; `fs`: a disk that fails, for fault tests). */
  storeTuning?: Pick<TaskStoreOptions, 'durable' | 'watch' | 'fs'>;
  schedulerTuning?: Pick<SchedulerOptions, 'idleTickMs'>;
  runtimeTuning?: Pick<TaskRuntimeOptions, 'proxyTimings' | 'stopTimings'>;
  onRuntimeEvent?: (event: RuntimeEvent) => void;
  /** A task completed, failed or needs input, decided once across all windows (see TaskNotices). */
  onNotice?: (notice: TaskNotice) => void;
  /** How long the lease holder leaves an unclaimed result to the window that ran it. */
  noticeGraceMs?: number;
  /** Away notifications (docs/flows.md#away-notifications): where they go and what they carry; none without it. */
  notify?: Omit<AwayNotificationsOptions, 'store' | 'windowId' | 'isLeader' | 'clock' | 'log'>;
  onStoreNotice?: (notice: StoreNotice) => void;
  /** `offPeak.history.keepDays` / `keepCount`, read at each archive run (docs/flows.md#archive; default 90 days, 500 tasks). */
  historyKeep?: () => HistoryKeep;
  log?: (line: string) => void;
}

/** Where task worktrees live (docs/flows.md#isolation): the user's checkouts, never narrowed. */
export function worktreesDirOf(storageDir: string): string {
  return path.join(storageDir, 'worktrees');
}

/** Where an engine keeps its files under globalStorage (beside tasks-index.sqlite). */
export function engineDirs(storageDir: string): { runtimeDir: string; referenceSessionsDir: string } {
  return { runtimeDir: path.join(storageDir, 'runtime'), referenceSessionsDir: path.join(storageDir, 'reference-agent-sessions') };
}
