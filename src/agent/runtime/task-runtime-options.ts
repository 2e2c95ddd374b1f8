// What a window's task runtime is given (TaskRuntimeOptions), among it the port through which it
// writes every lifecycle change of its tasks (TaskLifecyclePort).
import type { ChannelConnect } from '../../core/channel-agent';
import type { Clock } from '../../core/clock';
import type { Timers } from '../../core/timers';
import type { HeldQuestion, ParkQuestion, ParkResult, SegmentEndReason, SegmentUsage } from '../../core/types';
import type { TaskStore, TerminalDetails } from '../../store';
import type { LoopbackProxyServer } from '../proxy/loopback-proxy-server';
import type { TicketProxyTimings } from '../proxy/ticket-proxy-types';
import type { AskAnsweredBy, AskDecision, UnansweredQuestion } from '../questions/asks';
import type { AgentAdapter, AgentKind } from './agent-adapter';
import type { KeepAwake } from './keep-awake';
import type { RuntimeEvent } from './runtime-events';
import type { StopTimings } from './segment-stop';
import type { CheckSettings } from './segment-work';
import type { Pricer } from '../../core/spend';

/**
 * The one writer of task lifecycle changes (the service's TaskLifecycle implements it; the user
 * actions use the same one), handed to the runtime at construction.
 */
export interface TaskLifecyclePort {
  markStarted(taskId: string, ticketId: string, sessionId: string): Promise<boolean>;
  markAdmitted(ticketId: string, at?: number): Promise<void>;
  /** The segment's proxy cannot reach the gateway since `since` (its requests are held), or can again (null). */
  markGatewayUnreachable(ticketId: string, since: number | null): Promise<void>;
  /** Adds the tokens model answers of the segment used to its ledger row. */
  recordUsage(ticketId: string, usage: SegmentUsage): Promise<void>;
  endSegment(ticketId: string, reason: SegmentEndReason, error?: string): Promise<void>;
  /** The window closes under the segment; `held`: the questions open then, kept for the resumed session. */
  interrupt(taskId: string, ticketId: string, held?: readonly HeldQuestion[]): Promise<void>;
  expireSegment(taskId: string, ticketId: string): Promise<boolean>;
  complete(taskId: string, details?: TerminalDetails): Promise<boolean>;
  fail(taskId: string, details?: TerminalDetails): Promise<boolean>;
  park(
    taskId: string,
    ticketId: string,
    question: ParkQuestion,
    answer?: { decision: AskDecision; by: AskAnsweredBy },
  ): Promise<ParkResult>;
  /** The account's usage limit holds the segment until `resetAt` (null: lifted); it parks the task until then (docs/flows.md#usage-limits). */
  markUsageLimit?(ticketId: string, resetAt: number | null): Promise<void>;
  parkForUsageLimit?(taskId: string, ticketId: string, resetAt: number): Promise<boolean>;
}

export interface TaskRuntimeOptions {
  store: TaskStore;
  lifecycle: TaskLifecyclePort;
  /** The adapters this window can run, and which one new tasks use. */
  adapters: Partial<Record<AgentKind, AgentAdapter>>;
  defaultAgent: () => AgentKind;
  /**
   * The model for a task that names none: the gateway's default model (its configs), asked when a
   * segment starts. Undefined or null leaves the choice to the agent.
   */
  defaultModel?: () => Promise<string | null | undefined> | string | null | undefined;
  /** `ownLogin(agent)`: that agent's own login passes through to the model API (personal mode). */
  gateway: {
    baseUrl: string;
    channel?: ChannelConnect;
    apiKey: () => Promise<string | undefined>;
    ownLogin?: (agent: AgentKind) => boolean;
  };
  /** Per-task segment directories (logs, pid files) live here. */
  runtimeDir: string;
  /** This window's id, written in each segment's pid record (docs/flows.md#recovery). */
  windowId?: string;
  /** Tasks' own worktrees (docs/flows.md#isolation) live here; default `<runtimeDir>/worktrees`. */
  worktreesDir?: string;
  clock: Clock;
  /** For the usage recorder's periodic write; real timers by default. */
  timers?: Timers;
  keepAwake?: KeepAwake;
  proxyTimings?: TicketProxyTimings;
  /** One loopback listener for all of this window's segment proxies (each with its own secret). */
  proxyListener?: LoopbackProxyServer;
  stopTimings?: Partial<StopTimings>;
  /** An agent's unanswered permission question is denied after this long (when the agent sets no deadline). */
  askTimeoutMs?: () => number;
  /** What an unanswered question does: park the task (default) or deny after `askTimeoutMs`. */
  unansweredQuestion?: () => UnansweredQuestion;
  /** In park mode, how long a question waits before the task parks. */
  askParkMs?: () => number;
  /** Each model answer's dollars at its model's price, read at each answer (docs/flows.md#capacity-and-cost). */
  pricer?: () => Pricer;
  /** The machine settings of task checks (docs/flows.md#checks); default 15 min, 2 rounds. */
  checks?: CheckSettings;
  onEvent?: (event: RuntimeEvent) => void;
  log?: (line: string) => void;
}
