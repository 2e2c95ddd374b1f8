// How this window starts agents: the adapters a segment launches (the reference agent, Claude Code
// with its path read at each launch, Codex when the engine is given it) with the permission questions' deadlines, and what "Open
// session" starts (docs/flows.md#open-session): the service's TaskSessions calls it with the task.
import path from 'node:path';
import type { AgentAdapter, AgentKind } from '../agent/runtime/agent-adapter';
import { ClaudeCodeAdapter, type ClaudeCodeOptions, type ClaudeSettingSources } from '../agent/runtime/claude-code-adapter';
import { CodexAdapter } from '../agent/runtime/codex-adapter';
import { ReferenceAgentAdapter } from '../agent/runtime/reference-agent-adapter';
import type { ClaudeCodeLocation } from '../agent/runtime/claude-code-locate';
import { referenceSessionOf, sessionIsFree, sessionViewOf, withAgentGit, type SessionView } from '../agent/runtime/session-terminal';
import type { LoopbackProxyServer } from '../agent/proxy/loopback-proxy-server';
import type { SessionStarter } from '../service';
import type { HostEngineOptions } from './engine-options';

/** Claude Code with its path read at each launch: the user may change the setting at any time. */
function claudeCodeFromSetting(
  command: () => string | ClaudeCodeLocation,
  fixed: Omit<ClaudeCodeOptions, 'command'>,
  settingSources?: () => ClaudeSettingSources,
): AgentAdapter {
  const current = () => {
    const at = command();
    const launch =
      typeof at === 'string'
        ? { command: at, shownAs: at }
        : { command: at.command, argsPrefix: at.argsPrefix, env: { ...fixed.env, ...at.env }, shownAs: at.found };
    return new ClaudeCodeAdapter({ ...fixed, ...launch, settingSources: settingSources?.() });
  };
  return {
    kind: 'claude-code',
    launch: (spec) => current().launch(spec),
    createReader: (spec) => current().createReader(spec),
    sessionExists: (sessionId, workspacePath) => current().sessionExists(sessionId, workspacePath),
  };
}

/**
 * The agents a segment may launch. `asks`: the agent's own deadline for a question (a safety net
 * behind the host's) and, in park mode, when it parks.
 */
export function agentAdapters(
  options: HostEngineOptions,
  referenceSessionsDir: string,
  asks: { timeoutMs: () => number; parkMs: () => number | undefined },
): Partial<Record<AgentKind, AgentAdapter>> {
  return {
    reference: new ReferenceAgentAdapter({
      ...options.referenceAgent,
      askTimeoutMs: asks.timeoutMs,
      askParkMs: asks.parkMs,
      sessionsDir: referenceSessionsDir,
    }),
    'claude-code': claudeCodeFromSetting(
      options.claudeCommand,
      { ...options.claudeCode, permissionRelay: options.permissionRelay, askTimeoutMs: asks.timeoutMs },
      options.claudeSettingSources,
    ),
    // Its threads' ids beside the reference agent's sessions (docs/architecture.md#who-writes-what).
    ...(options.codex
      ? { codex: new CodexAdapter({ ...options.codex, threadsDir: path.join(path.dirname(referenceSessionsDir), 'codex-threads') }) }
      : {}),
  };
}

/**
 * What "Open session" starts: `claude --resume` with the user's own Claude Code, or the reference
 * agent's conversation on a model route of this window's listener (revoked when its terminal
 * closes), else the transcript.
 */
export function sessionStarter(
  proxyListener: LoopbackProxyServer,
  options: HostEngineOptions,
  referenceSessionsDir: string,
): SessionStarter<SessionView> {
  const start = {
    command: options.referenceAgent.command,
    argsPrefix: options.referenceAgent.argsPrefix,
    sessionsDir: referenceSessionsDir,
  };
  return async ({ task, agent, busy }, hostEnv) => {
    const at = options.claudeCommand();
    const claude = {
      command: typeof at === 'string' ? at : at.found,
      configDir: options.claudeCode?.configDir,
      hostEnv,
      proxyPort: proxyListener.listeningPort,
      settingSources: options.claudeSettingSources?.(),
    };
    const reference =
      agent === 'reference' && sessionIsFree(task, busy) ? await referenceSessionOf(proxyListener, start, options.ownModel) : undefined;
    const route = reference && 'route' in reference ? reference.route : undefined;
    try {
      const view = await withAgentGit(
        sessionViewOf(task, agent, claude, busy, reference && ('why' in reference ? reference : reference.input)),
        hostEnv,
      );
      return view.kind === 'interactive' && route ? { ...view, close: () => route.revoke(), routeClosed: route.closed } : view;
    } catch (e) {
      route?.revoke();
      throw e;
    }
  };
}
