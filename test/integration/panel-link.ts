// The webview protocol over a real MessageChannel: the host's PanelController on one port, the
// webview's HostChannel on the other, and behind the controller the real service backend. Used by
// the integration tests (service world) and the runtime e2e tests (a real agent asks).
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { Clock } from '../../src/core/clock';
import { PanelController } from '../../src/panel/panel-controller';
import type { Confirmation } from '../../src/panel/confirmations';
import { createServiceBackend } from '../../src/panel/service-backend';
import type { PanelAskSource, PanelClientConfigs, PanelHostBits } from '../../src/panel/host-bits';
import type { HostToWebview, PanelState, SetupView } from '../../src/protocol/webview';
import type { TaskService } from '../../src/service';
import type { HistoryArchive } from '../../src/service/history-archive';
import type { TaskStore } from '../../src/store';
import { HostChannel } from '../../webview/host-channel';

/** The one folder open in the test window: a real directory, since the panel checks it exists. */
export const PANEL_WORKSPACE = mkdtempSync(path.join(os.tmpdir(), 'offpeak-panel-ws-'));

export interface PanelParts {
  service: TaskService;
  store: TaskStore;
  clock: Clock;
  hasApiKey(): boolean;
  /** The "Set API key…" password box: resolves false when dismissed (default: a key was saved). */
  setApiKey?(): Promise<boolean>;
  /** The permission questions (a TaskRuntime, or none where no agent runs). */
  asks?: PanelAskSource;
  /** The history archive (docs/flows.md#archive; absent: History is the task DB's rows only). */
  archive?: HistoryArchive;
  /** The mode, agent, credential, model API and hours line (docs/flows.md#what-the-panel-says; absent: none). */
  setup?(): Promise<SetupView | undefined>;
  /** The form's Model list after its default (default: one model). */
  models?(): string[];
  /** The reserve of the account's windows (docs/flows.md#capacity-and-cost; absent: none). */
  reserve?(): number | null;
  /** The window's open folders (default: one, PANEL_WORKSPACE). */
  workspaces?(): { name: string; path: string; identity: string | null }[];
}

/** No agent runs in this window: nothing ever asks. */
export const NO_ASKS: PanelAskSource = {
  pendingAsks: () => [],
  answerAsk: () => 'unknown',
  onAsksChange: () => ({ dispose: () => undefined }),
};

/** A host with nothing open, no key prompt and every confirmation accepted: tests spread it and override what they look at. */
export const BARE_HOST: PanelHostBits = {
  hasApiKey: async () => true,
  setApiKey: async () => undefined,
  workspaces: () => [],
  models: () => [],
  configs: () => undefined,
  reloadConfigs: async () => undefined,
  openTerminal: async () => undefined,
  confirm: async () => true,
  notice: () => undefined,
};

export interface Host {
  /** Answers for the next confirmation dialogs, in order (true = the user chose the action). */
  confirmAnswers: boolean[];
  asked: Confirmation[];
  configs: PanelClientConfigs | undefined;
  configLoads: number;
}

export interface Webview {
  channel: HostChannel;
  states: PanelState[];
  received: HostToWebview[];
  focusForms: number;
  raw: MessagePort;
}

export function connect(parts: PanelParts): {
  controller: PanelController;
  webview: Webview;
  host: Host;
  close(): void;
  setVisible(visible: boolean): void;
} {
  const { port1, port2 } = new MessageChannel();
  const host: Host = { confirmAnswers: [], asked: [], configs: undefined, configLoads: 0 };
  const backend = createServiceBackend(
    parts.service,
    parts.store,
    {
      hasApiKey: async () => parts.hasApiKey(),
      setApiKey: async () => (parts.setApiKey ? parts.setApiKey() : undefined),
      workspaces:
        parts.workspaces ?? (() => [{ name: 'ws-a', path: PANEL_WORKSPACE, identity: `vscode-remote://ssh-remote+box${PANEL_WORKSPACE}` }]),
      models: parts.models ?? (() => ['claude-sonnet-4-5']),
      configs: () => host.configs,
      reloadConfigs: async () => host.configLoads++,
      openTerminal: async () => undefined,
      confirm: async (question) => {
        host.asked.push(question);
        const answer = host.confirmAnswers.shift();
        assert.ok(answer !== undefined, `an unexpected confirmation: ${question.message}`);
        return answer;
      },
      notice: () => undefined,
      setup: parts.setup,
      reserve: parts.reserve,
    },
    parts.asks ?? NO_ASKS,
    parts.archive,
  );
  let visible = true;
  const controller = new PanelController(
    {
      visible: () => visible,
      postMessage: (m) => port1.postMessage(m),
      onDidReceiveMessage: (listener) => {
        const l = (data: unknown) => listener(data);
        port1.on('message', l);
        return { dispose: () => port1.off('message', l) };
      },
    },
    backend,
    parts.clock,
  );
  const webview: Webview = { states: [], received: [], focusForms: 0, raw: port2, channel: undefined as unknown as HostChannel };
  webview.channel = new HostChannel(
    { postMessage: (m) => port2.postMessage(m) },
    {
      onState: (s) => webview.states.push(s),
      onFocusForm: () => webview.focusForms++,
      onInvalidMessage: () => undefined,
    },
  );
  port2.on('message', (data) => {
    webview.received.push(data as HostToWebview);
    webview.channel.receive(data);
  });
  return {
    controller,
    webview,
    host,
    /** VS Code shows or hides the panel (its tab). */
    setVisible(v: boolean) {
      visible = v;
      controller.viewStateChanged();
    },
    close() {
      controller.dispose();
      port1.close();
      port2.close();
    },
  };
}

/** Waits (real time, 2 s at most) until `fn` gives a value: a snapshot's arrival over the channel. */
export async function until<T>(what: string, fn: () => T | undefined | false): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}
