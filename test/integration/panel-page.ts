// The panel's webview as a page for headless Chromium: the bundle built from source (webview/main.tsx)
// with the panel's CSS and codicons, and the browser to show it. Used by the panel rendering tests.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM_PATH, REPO_ROOT } from '../../scripts/vscode/tools';

/**
 * Builds the panel page into a new temp dir (the caller removes it) and returns its dir and URL.
 * `postMessage`: the body of the page's `acquireVsCodeApi().postMessage(m)` (what the webview sends).
 */
export async function buildPanelPage(prefix: string, postMessage: string): Promise<{ dir: string; url: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  await esbuild.build({
    entryPoints: [path.join(REPO_ROOT, 'webview', 'main.tsx')],
    outfile: path.join(dir, 'main.js'),
    bundle: true,
    format: 'iife',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'error',
  });
  const codicons = createRequire(__filename).resolve('@vscode/codicons/dist/codicon.css');
  writeFileSync(
    path.join(dir, 'panel.html'),
    `<!DOCTYPE html><html><head><meta charset="UTF-8">
<link rel="stylesheet" href="${pathToFileURL(codicons).href}" id="vscode-codicon-stylesheet">
<link rel="stylesheet" href="${pathToFileURL(path.join(REPO_ROOT, 'media', 'panel.css')).href}"></head>
<body><div id="root"></div>
<script>window.acquireVsCodeApi = () => ({ postMessage: (m) => { ${postMessage} }, getState: () => undefined, setState: () => undefined });</script>
<script src="main.js"></script></body></html>`,
  );
  return { dir, url: pathToFileURL(path.join(dir, 'panel.html')).href };
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--allow-file-access-from-files'],
  });
}
