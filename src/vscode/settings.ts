// Typed reads of the extension's settings (package.json `contributes.configuration`).
import * as vscode from 'vscode';
import { DEFAULT_MODEL_BASE_URL, resolveMode, type OffPeakMode } from '../personal/personal-config';
import { CLAUDE_SETTING_SOURCES, DEFAULT_CLAUDE_SETTING_SOURCES, type ClaudeSettingSources } from '../agent/runtime/claude-code-adapter';
import type { CheckSettings } from '../agent/runtime/segment-work';
import { machineSettingKeys, type RemoteWindow } from '../panel/setup-line';
import {
  AGENT_SETTINGS,
  DEFAULT_CLAUDE_COMMAND,
  engineAgentChoice,
  resolveAgent,
  systemLocateHost,
  type AgentSetting,
  type ClaudeCodeLocation,
  type SettingAgent,
} from '../agent/runtime/claude-code-locate';

export interface OffPeakSettings {
  gatewayUrl: string;
  /** `offPeak.agent` as set: `auto` (default), `reference` or `claude-code`; `currentAgent()` resolves it. */
  agentSetting: AgentSetting;
  claudeCodePath: string;
  claudeCodeSettingSources: ClaudeSettingSources;
  keepAwake: boolean;
  askTimeoutMinutes: number;
  /** What an unanswered question does: park the task (default) or deny after askTimeoutMinutes. */
  unansweredQuestion: 'park' | 'deny';
  askParkMinutes: number;
  /** Task checks (docs/flows.md#checks): machine settings, so a repository cannot change them. */
  check: { timeoutMinutes: number; maxRounds: number; whenAgentChangedIt: 'run' | 'ask' };
  /** New tasks on a git folder run on their own branch (worktree) or in the folder (docs/flows.md#isolation). */
  isolation: 'worktree' | 'inPlace';
  /** Personal mode's headroom (docs/flows.md#usage-limits): 0..1, null = off; the local gateway gets it through `personalAccountLimits`. */
  stopAtUtilization: number | null;
  /** `offPeak.mode` resolved: personal (a local authority) or a gateway (docs/architecture.md#personal-mode). */
  mode: OffPeakMode;
  personal: {
    hours: string;
    /** Claude Code's own login (default) or the model API key for every agent. */
    modelCredential: 'claudeLogin' | 'apiKey';
    baseUrl: string;
  };
  /** Finished tasks beyond these move to the history archive (docs/flows.md#archive). */
  history: { keepDays: number; keepCount: number };
  /** Open pull request (docs/flows.md#pull-requests): the remote, draft or ready, the GitHub Enterprise hosts. */
  pullRequest: { remote: string; draft: boolean; githubEnterpriseHosts: string[] };
  /** `offPeak.prices` as set (checked entry by entry where it is used; docs/flows.md#capacity-and-cost). */
  prices: unknown;
}

export function readSettings(): OffPeakSettings {
  const c = vscode.workspace.getConfiguration('offPeak');
  const agent = c.get<string>('agent', 'auto');
  const sources = c.get<string>('claudeCodeSettingSources', DEFAULT_CLAUDE_SETTING_SOURCES);
  const gatewayUrl = c.get<string>('gatewayUrl', '').trim();
  return {
    gatewayUrl: gatewayUrl.replace(/\/+$/, ''),
    agentSetting: AGENT_SETTINGS.find((a) => a === agent) ?? 'auto',
    claudeCodePath: c.get<string>('claudeCodePath', DEFAULT_CLAUDE_COMMAND) || DEFAULT_CLAUDE_COMMAND,
    claudeCodeSettingSources: CLAUDE_SETTING_SOURCES.find((s) => s === sources) ?? DEFAULT_CLAUDE_SETTING_SOURCES,
    keepAwake: c.get<boolean>('keepAwake', true),
    askTimeoutMinutes: Math.max(1, c.get<number>('askTimeoutMinutes', 10)),
    unansweredQuestion: c.get<string>('unansweredQuestion', 'park') === 'deny' ? 'deny' : 'park',
    askParkMinutes: Math.max(1, c.get<number>('askParkMinutes', 10)),
    check: {
      timeoutMinutes: Math.max(1, c.get<number>('check.timeoutMinutes', 15)),
      maxRounds: Math.max(1, Math.floor(c.get<number>('check.maxRounds', 2))),
      whenAgentChangedIt: c.get<string>('check.whenAgentChangedIt', 'run') === 'ask' ? 'ask' : 'run',
    },
    isolation: c.get<string>('isolation', 'worktree') === 'inPlace' ? 'inPlace' : 'worktree',
    stopAtUtilization: fraction(c.get<unknown>('personal.stopAtUtilization', null)),
    mode: resolveMode(c.get<string>('mode', 'auto'), gatewayUrl),
    personal: {
      hours: c.get<string>('personal.hours', 'always'),
      modelCredential: c.get<string>('personal.modelCredential', 'claudeLogin') === 'apiKey' ? 'apiKey' : 'claudeLogin',
      baseUrl: c.get<string>('personal.baseUrl', DEFAULT_MODEL_BASE_URL),
    },
    history: {
      keepDays: Math.max(1, c.get<number>('history.keepDays', 90)),
      keepCount: Math.max(0, c.get<number>('history.keepCount', 500)),
    },
    pullRequest: {
      remote: c.get<string>('pullRequest.remote', 'origin').trim() || 'origin',
      draft: c.get<boolean>('pullRequest.draft', true),
      githubEnterpriseHosts: c.get<unknown[]>('pullRequest.githubEnterpriseHosts', []).filter((h): h is string => typeof h === 'string'),
    },
    prices: c.get<unknown>('prices', {}),
  };
}

/** The check settings the runtime reads at each check (docs/flows.md#checks). */
export function checkSettings(): CheckSettings {
  return {
    timeoutMs: () => readSettings().check.timeoutMinutes * 60_000,
    maxRounds: () => readSettings().check.maxRounds,
    whenAgentChangedIt: () => readSettings().check.whenAgentChangedIt,
  };
}

/** A number 0..1, else null (unset, or not a fraction: off). */
function fraction(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1 ? value : null;
}

/** The agent new tasks run now, and where Claude Code was found (docs/flows.md#which-agent). */
export function currentAgent(settings: OffPeakSettings = readSettings()): {
  agent: SettingAgent;
  claudeCode: ClaudeCodeLocation | undefined;
} {
  return resolveAgent(settings, systemLocateHost());
}

/** What the engine picks a new task's agent with, from the settings at each first start (docs/flows.md#which-agent). */
export function engineAgent(): ReturnType<typeof engineAgentChoice> {
  return engineAgentChoice(readSettings, systemLocateHost);
}

/** This extension's id (package.json `publisher`.`name`). */
const EXTENSION_ID = 'offpeak.off-peak-tasks';

/**
 * A remote window (Remote-SSH, WSL, a container, Codespaces): its name, and whether any of the
 * extension's machine settings is set there (docs/platforms.md#remote-windows); undefined in a local window.
 */
export function remoteWindow(): RemoteWindow | undefined {
  const name = vscode.env.remoteName;
  if (!name) return undefined;
  const config = vscode.workspace.getConfiguration();
  const keys = machineSettingKeys(vscode.extensions.getExtension(EXTENSION_ID)?.packageJSON);
  const machineSettingsSet = keys.some((key) => {
    const found = config.inspect(key);
    return found !== undefined && [found.globalValue, found.workspaceValue, found.workspaceFolderValue].some((v) => v !== undefined);
  });
  return { name, machineSettingsSet };
}
