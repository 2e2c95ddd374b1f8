import { render } from 'preact';

declare function acquireVsCodeApi(): { postMessage(message: unknown): void };

function App() {
  return <main><h1>Off-Peak Tasks</h1><p>No tasks yet.</p></main>;
}

const vscode = acquireVsCodeApi();
render(<App />, document.getElementById('root')!);
vscode.postMessage({ type: 'ready' });
