// Personal mode in VS Code (docs/architecture.md#personal-mode): the model API key commands, and
// the local authority this window starts or follows, built from the machine settings.
import os from 'node:os';
import * as vscode from 'vscode';
import { claudeLoginChangedAt, claudeLoginSeen } from '../agent/runtime/claude-code-locate';
import type { OffPeakTask } from '../core/types';
import type { AgentKind } from '../agent/runtime/agent-adapter';
import type { LocalAuthority } from '../personal/local-authority';
import { hoursNextOpening, parseModelBaseUrl, parsePersonalHours } from '../personal/personal-config';
import { setModelApiKeyCommand } from '../panel/api-key-command';
import { CLAUDE_LOGIN_COMMAND } from '../panel/failure-fix';
import { setupView, unansweredQuestionText } from '../panel/setup-line';
import type { SetupView } from '../protocol/webview';
import { ApiKeyStore, MODEL_SECRET_KEY } from './api-key';
import { confirmModal } from './confirm';
import { currentAgent, readSettings, remoteWindow } from './settings';

export function modelKeyStore(secrets: vscode.SecretStorage): ApiKeyStore {
  return new ApiKeyStore(secrets, MODEL_SECRET_KEY, 'Model API key (personal mode)');
}

/** "Off-Peak: Set Model API Key…" / "Clear Model API Key". */
export function registerModelKeyCommands(context: vscode.ExtensionContext, modelKey: ApiKeyStore): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('offPeak.setModelApiKey', (key?: unknown) => setModelApiKeyCommand(modelKey, key, confirmModal)),
    vscode.commands.registerCommand('offPeak.clearModelApiKey', async () => {
      await modelKey.clear();
      void vscode.window.showInformationMessage('Off-Peak model API key removed.');
    }),
    // A missing login's fix button: Claude Code, where it was found, in a terminal of its own (no shell).
    vscode.commands.registerCommand(CLAUDE_LOGIN_COMMAND, () => {
      const found = currentAgent().claudeCode;
      if (!found) return void vscode.window.showErrorMessage('Off-Peak Tasks: Claude Code was not found (see offPeak.claudeCodePath).');
      const terminal = vscode.window.createTerminal({
        name: 'Claude Code login',
        shellPath: found.command,
        shellArgs: found.argsPrefix,
        env: found.env,
      });
      terminal.show();
    }),
  );
}

/**
 * Imports the model API key `npm start -- --personal` handed over (personal/model-key-handover.ts)
 * into this window's SecretStorage; the hand-over file is gone afterwards either way.
 */
export async function importHandedOverModelKey(storageDir: string, modelKey: ApiKeyStore, log: (line: string) => void): Promise<void> {
  try {
    const { takeModelKeyHandover } = await import('../personal/model-key-handover');
    const key = takeModelKeyHandover(storageDir);
    if (key === undefined) return;
    await modelKey.set(key);
    log('the model API key handed over by npm start is now in SecretStorage (its hand-over file is deleted)');
  } catch (e) {
    // The panel then says the key is not set, and how to set it.
    log(`the model API key handed over by npm start was not imported: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Starts or follows this machine's local authority; bad settings are an error saying which one. */
export async function startPersonalAuthority(options: {
  storageDir: string;
  wasmPath: string;
  modelKey: ApiKeyStore;
  log: (line: string) => void;
  /** Why the authority cannot run now (the panel's notice), undefined once it runs again. */
  onProblem: (problem: string | undefined) => void;
}): Promise<LocalAuthority> {
  const settings = () => {
    const { personal, stopAtUtilization } = readSettings();
    parsePersonalHours(personal.hours);
    return { hours: personal.hours, modelBaseUrl: parseModelBaseUrl(personal.baseUrl), stopAtUtilization };
  };
  settings(); // checked before anything starts
  const { LocalAuthority } = await import('../personal/local-authority');
  return LocalAuthority.start({
    storageDir: options.storageDir,
    wasmPath: options.wasmPath,
    settings,
    modelApiKey: () => options.modelKey.get(),
    log: options.log,
    onProblem: options.onProblem,
  });
}

/** The user's own model API and key: "Open session" continues a reference-agent session with them (docs/flows.md#open-session). */
export function ownModelOf(modelKey: ApiKeyStore): { baseUrl: string; apiKey: () => Promise<string | undefined> } {
  return { baseUrl: parseModelBaseUrl(readSettings().personal.baseUrl), apiKey: () => modelKey.get() };
}

/**
 * The panel's line when a task of the chosen agent could not reach the model: personal mode, that
 * agent needs the model API key (the reference agent has no login of its own), and none is set.
 */
export async function missingModelKeyNotice(modelKey: ApiKeyStore): Promise<string | undefined> {
  const settings = readSettings();
  const { agent } = currentAgent(settings);
  if (settings.mode !== 'personal' || ownLoginOf(agent) || (await modelKey.has())) return undefined;
  const who =
    agent === 'reference'
      ? 'The reference agent has no login of its own: in personal mode it'
      : 'With "Model Credential" set to apiKey, every agent';
  return `${who} uses a model API key, and none is set: run "Off-Peak: Set Model API Key…" (kept in SecretStorage), or choose Claude Code to use your Claude Code login.`;
}

/**
 * The model API refused the model API key when the window asked for its list (after
 * offPeak.personal.baseUrl or the key changed): said once per model API and key, with the fix.
 */
export function modelKeyRefusals(): { refused(status: number): void; keyChanged(): void } {
  let shownFor: string | undefined;
  return {
    refused(status) {
      const baseUrl = readSettings().personal.baseUrl;
      if (shownFor === baseUrl) return;
      shownFor = baseUrl;
      const text = `Off-Peak Tasks: the model API ${baseUrl} refused the model API key (${status}): run "Off-Peak: Set Model API Key…" to set it again, or check offPeak.personal.baseUrl.`;
      void vscode.window
        .showWarningMessage(text, 'Set Model API Key…')
        .then((c) => c && vscode.commands.executeCommand('offPeak.setModelApiKey'));
    },
    keyChanged() {
      shownFor = undefined;
    },
  };
}

/** How a task's failure for Claude Code's missing login begins (its reader's sentence, claude-code-adapter.ts). */
const LOGIN_MISSING_PREFIX = 'Claude Code is not logged in';

/** Which agents use their own login: Claude Code, unless the setting says the API key for all. */
export function ownLoginOf(agent: AgentKind): boolean {
  return agent === 'claude-code' && readSettings().personal.modelCredential === 'claudeLogin';
}

/** When a task last failed for Claude Code's missing login (undefined: none did). */
export function loginFailedAt(tasks: readonly Pick<OffPeakTask, 'status' | 'failureReason' | 'endedAt'>[]): number | undefined {
  const ended = tasks.filter((t) => t.status === 'failed' && t.failureReason?.startsWith(LOGIN_MISSING_PREFIX)).map((t) => t.endedAt ?? 0);
  return ended.length > 0 ? Math.max(...ended) : undefined;
}

/**
 * Claude Code's own login, looked for before anything is queued: missing when none is there, or
 * when a task failed for the lack of it since its login files last changed.
 */
function claudeLoginOf(found: string, failedAt: number | undefined): { missing: boolean; found: string } {
  const seen = claudeLoginSeen(process.env, os.homedir());
  return { missing: !seen || (failedAt !== undefined && failedAt > claudeLoginChangedAt(process.env, os.homedir())), found };
}

/** The panel's mode, agent, credential, model API and hours line, from the settings now (docs/flows.md#what-the-panel-says). */
export async function panelSetup(modelKey: ApiKeyStore, now: number, failedAt?: number): Promise<SetupView> {
  const settings = readSettings();
  const { agent, claudeCode } = currentAgent(settings);
  const view = setupView({
    mode: settings.mode,
    gatewayUrl: settings.gatewayUrl,
    agentSetting: settings.agentSetting,
    agent,
    claudeLogin:
      settings.mode === 'personal' && agent === 'claude-code'
        ? claudeLoginOf(claudeCode?.found ?? settings.claudeCodePath, failedAt)
        : undefined,
    modelCredential: settings.personal.modelCredential,
    baseUrl: settings.personal.baseUrl,
    hasModelKey: await modelKey.has(),
    hours: settings.personal.hours,
    hoursOpenAt: hoursNextOpening(settings.personal.hours, now),
    remote: remoteWindow(),
  });
  const minutes = settings.unansweredQuestion === 'park' ? settings.askParkMinutes : settings.askTimeoutMinutes;
  return { ...view, unansweredText: unansweredQuestionText(settings.unansweredQuestion, minutes) };
}
