// Webview entry: registers the VS Code Elements used by the panel, connects to the host, renders.
import './zod-jitless';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-label/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { PanelState } from '../src/protocol/webview';
import { App } from './app';
import { HostChannel } from './host-channel';
import { PanelViewState, ViewStateContext } from './view-state';

declare function acquireVsCodeApi(): { postMessage(message: unknown): void; getState(): unknown; setState(state: unknown): void };

function Root({ channelFactory }: { channelFactory(events: ConstructorParameters<typeof HostChannel>[1]): HostChannel }) {
  const [state, setState] = useState<PanelState>();
  const [focusTick, setFocusTick] = useState(0);
  const [error, setError] = useState<string>();
  const [channel] = useState(() =>
    channelFactory({
      onState: setState,
      onFocusForm: () => setFocusTick((n) => n + 1),
      onInvalidMessage: (why) => setError(`The extension sent a message this panel does not understand (${why}).`),
    }),
  );
  useEffect(() => {
    const listener = (e: MessageEvent) => channel.receive(e.data);
    window.addEventListener('message', listener);
    channel.ready();
    return () => window.removeEventListener('message', listener);
  }, [channel]);
  return (
    <ViewStateContext.Provider value={viewState}>
      <App channel={channel} state={state} focusTick={focusTick} error={error} onError={setError} />
    </ViewStateContext.Provider>
  );
}

// The codicon font (dist/webview/codicon.css) is asked for now, while the host prepares the first
// snapshot. Left to the first card that shows an icon, it arrived after the panel's first layout:
// icons stayed blank until then (font-display: block) and its arrival laid the whole panel out
// again (1300 of 1900 layout objects at 1000 tasks, 12-20 ms).
void document.fonts?.load('16px codicon').catch(() => undefined);

const vscode = acquireVsCodeApi();
/** Scroll position and expanded cards, kept by VS Code across a window reload. */
const viewState = new PanelViewState(vscode);
render(<Root channelFactory={(events) => new HostChannel(vscode, events)} />, document.getElementById('root')!);
