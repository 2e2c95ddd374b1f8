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
  /** A remote window (absent: a local one). */
  remote?: RemoteWindow;
  /** Claude Code's own login, looked for before anything is queued; `found`: where Claude Code is (absent: not looked at). */
  claudeLogin?: { missing: boolean; found: string };
}

/**
 * A remote window (docs/platforms.md#remote-windows): VS Code's name for the remote
 * (`vscode.env.remoteName`: `ssh-remote`, `wsl`, `dev-container`…) and whether any of the
 * extension's machine settings is set where that window reads them (the remote's settings).
 */
export interface RemoteWindow {
  name: string;
  machineSettingsSet: boolean;
}

const REMOTE_NAMES: Record<string, string> = {
  'ssh-remote': 'Remote-SSH',
  wsl: 'WSL',
  'dev-container': 'Dev Container',
  'attached-container': 'container',
  codespaces: 'Codespaces',
  tunnel: 'Remote Tunnel',
};

/**
 * The settings whose scope is `machine` (package.json `contributes.configuration`): in a remote
 * window VS Code reads them from the remote's settings only, never from the local user settings.
 */
export function machineSettingKeys(packageJson: unknown): string[] {
  const configuration = (packageJson as { contributes?: { configuration?: unknown } } | undefined)?.contributes?.configuration;
  const sections = (Array.isArray(configuration) ? configuration : [configuration]) as (
    { properties?: Record<string, { scope?: string }> } | undefined
  )[];
  return sections.flatMap((section) =>
    Object.entries(section?.properties ?? {})
      .filter(([, p]) => p.scope === 'machine' || p.scope === 'machine-overridable')
      .map(([key]) => key),
  );
}

/** The setup line's words for a remote window that runs on the defaults (none of its machine settings set there). */
export function remoteDefaultsText(remote: RemoteWindow | undefined): string | undefined {
  if (!remote || remote.machineSettingsSet) return undefined;
  const where = REMOTE_NAMES[remote.name] ?? remote.name;
  return `${where} window: Off-Peak runs on the remote machine with default settings. Its machine settings come from the remote's settings (Preferences: Open Remote Settings), not your local ones.`;
}

const AGENT_NAMES = { reference: 'Reference agent', 'claude-code': 'Claude Code' } as const;

/** What a question nobody answers does under the settings in force (the form's help says it). */
export function unansweredQuestionText(policy: 'park' | 'deny', minutes: number): string {
  return policy === 'park'
    ? `an ask nobody answers within ${minutes} min parks the task: it waits for your answer without holding capacity`
    : `an ask nobody answers within ${minutes} min is denied and the agent goes on without it`;
}

export function setupView(i: SetupInputs): SetupView {
  const remoteText = remoteDefaultsText(i.remote);
  return { ...modeView(i), ...(remoteText ? { remoteText } : {}) };
}

function modeView(i: SetupInputs): SetupView {
  const agentName = AGENT_NAMES[i.agent];
  const agentText =
    i.agentSetting !== 'auto' ? agentName : i.agent === 'claude-code' ? 'Claude Code (found)' : 'Reference agent (Claude Code not found)';
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
  const loginMissing = ownLogin && i.claudeLogin?.missing === true;
  const credentialText = ownLogin
    ? `your Claude Code login${loginMissing ? ' (not logged in)' : ''}`
    : i.hasModelKey
      ? 'your model API key'
      : 'your model API key (not set)';
  return {
    mode: 'personal',
    modeText: 'Personal mode',
    agentText,
    credentialText,
    modelApiHost: hostOf(i.baseUrl) ?? i.baseUrl,
    hours: i.hours.trim() || 'always',
    hoursOpenAt: i.hoursOpenAt ?? null,
    defaultModelText: `${agentName}'s default model`,
    ...(loginMissing
      ? {
          missing: `Claude Code is not logged in: run ${i.claudeLogin!.found} once in a terminal to log in, or set "Off-Peak › Personal: Model Credential" to apiKey and run "Off-Peak: Set Model API Key…".`,
        }
      : ownLogin || i.hasModelKey
        ? {}
        : { missing: 'Run "Off-Peak: Set Model API Key…", or use Claude Code with its own login.' }),
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
  /** A task's changes were reviewed (in this window) or brought home (merged or applied, in any). */
  reviewed: boolean;
}

export function walkthroughKeys(
  setup: SetupView,
  state: { engineStarted: boolean; hasGatewayKey: boolean; taskCount: number; reviewed: boolean },
): WalkthroughKeys {
  const team = setup.mode === 'team';
  return {
    modeReady: state.engineStarted && (!team || state.hasGatewayKey),
    teamMode: team,
    credentialReady: team ? state.hasGatewayKey : setup.missing === undefined,
    taskQueued: state.taskCount > 0,
    reviewed: state.reviewed,
  };
}

/**
 * How to open one of the extension's settings where this window can change it: machine-scoped
 * settings of a remote or browser window (`vscode.env.remoteName` set, code-server's included)
 * live in the Remote tab; its User tab says "No Settings Found" for them.
 */
export function openSettingCommand(key: string, remoteName: string | undefined): { command: string; args: { query: string } } {
  return { command: remoteName ? 'workbench.action.openRemoteSettings' : 'workbench.action.openSettings', args: { query: key } };
}

/** The part of package.json `contributes.walkthroughs` that says which context key completes which step. */
export interface WalkthroughManifest {
  contributes?: { walkthroughs?: readonly { id: string; steps: readonly { id: string; completionEvents?: readonly string[] }[] }[] };
}

/**
 * The walkthrough steps each `offPeak.walkthrough.*` key completes, as VS Code names them
 * (`<extension id>#<walkthrough>#<step>`), read from the manifest's `onContext:` completion events.
 */
export function walkthroughStepsByKey(manifest: WalkthroughManifest, extensionId: string): Map<string, string[]> {
  const steps = new Map<string, string[]>();
  for (const walkthrough of manifest.contributes?.walkthroughs ?? []) {
    for (const step of walkthrough.steps) {
      for (const event of step.completionEvents ?? []) {
        const key = /^onContext:offPeak\.walkthrough\.(\w+)$/.exec(event)?.[1];
        if (key) steps.set(key, [...(steps.get(key) ?? []), `${extensionId}#${walkthrough.id}#${step.id}`]);
      }
    }
  }
  return steps;
}
