// The panel's "what will happen" line (docs/flows.md#what-the-panel-says): the mode, the agent,
// whose credential, the model API's host and when tasks run, in words, from the settings as
// resolved by the host (vscode/). One wording for the panel and the walkthrough.
import type { SetupView } from '../protocol/webview';

export interface SetupInputs {
  mode: 'personal' | 'gateway';
  /** `offPeak.gatewayUrl` (team mode). */
  gatewayUrl: string;
  /** `offPeak.agent` as set. */
  agentSetting: 'auto' | 'reference' | 'claude-code';
  /** The agent new tasks run (`auto` resolved). */
  agent: 'reference' | 'claude-code';
  /** `offPeak.personal.modelCredential`. */
  modelCredential: 'claudeLogin' | 'apiKey';
  /** `offPeak.personal.baseUrl`. */
  baseUrl: string;
  /** A model API key is in SecretStorage. */
  hasModelKey: boolean;
  /** `offPeak.personal.hours`. */
  hours: string;
  /** When the hours next open; null: open now; undefined: the hours do not parse. */
  hoursOpenAt: number | null | undefined;
}

const AGENT_NAMES = { reference: 'Reference agent', 'claude-code': 'Claude Code' } as const;

/** What a question nobody answers does under the settings in force (the form's help says it). */
export function unansweredQuestionText(policy: 'park' | 'deny', minutes: number): string {
  return policy === 'park'
    ? `an ask nobody answers within ${minutes} min parks the task: it waits for your answer without holding capacity`
    : `an ask nobody answers within ${minutes} min is denied and the agent goes on without it`;
}

export function setupView(i: SetupInputs): SetupView {
  const agentName = AGENT_NAMES[i.agent];
  const agentText = i.agentSetting !== 'auto' ? agentName : i.agent === 'claude-code' ? 'Claude Code (found)' : 'Reference agent (Claude Code not found)';
  if (i.mode === 'gateway') {
    return {
      mode: 'team',
      modeText: `Team gateway ${hostOf(i.gatewayUrl) ?? '(no Gateway Url set)'}`,
      agentText,
      credentialText: "the gateway's account (your gateway API key)",
      modelApiHost: null,
      hours: null,
      hoursOpenAt: null,
      defaultModelText: 'Gateway default',
    };
  }
  const ownLogin = i.agent === 'claude-code' && i.modelCredential === 'claudeLogin';
  const credentialText = ownLogin ? 'your Claude Code login' : i.hasModelKey ? 'your model API key' : 'your model API key (not set)';
  return {
    mode: 'personal',
    modeText: 'Personal mode',
    agentText,
    credentialText,
    modelApiHost: hostOf(i.baseUrl) ?? i.baseUrl,
    hours: i.hours.trim() || 'always',
    hoursOpenAt: i.hoursOpenAt ?? null,
    defaultModelText: `${agentName}'s default model`,
    ...(ownLogin || i.hasModelKey ? {} : { missing: 'Run "Off-Peak: Set Model API Key…", or use Claude Code with its own login.' }),
  };
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host || undefined;
  } catch {
    return undefined;
  }
}

/** The first-run walkthrough's steps that the real state completes (package.json `walkthroughs`, context keys `offPeak.walkthrough.*`). */
export interface WalkthroughKeys {
  /** The mode works: personal mode's authority runs, or a team gateway with its key set. */
  modeReady: boolean;
  teamMode: boolean;
  /** The agent the panel names has the credential it needs. */
  credentialReady: boolean;
  /** A task was queued (any task in the queue or History). */
  taskQueued: boolean;
  /** A finished task's result was shown in a panel. */
  resultSeen: boolean;
}

export function walkthroughKeys(setup: SetupView, state: { engineStarted: boolean; hasGatewayKey: boolean; taskCount: number; lastSeenAt: number | null }): WalkthroughKeys {
  const team = setup.mode === 'team';
  return {
    modeReady: state.engineStarted && (!team || state.hasGatewayKey),
    teamMode: team,
    credentialReady: team ? state.hasGatewayKey : setup.missing === undefined,
    taskQueued: state.taskCount > 0,
    resultSeen: state.lastSeenAt !== null,
  };
}
