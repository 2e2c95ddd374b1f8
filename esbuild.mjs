// Builds the four bundles the project ships and places sql.js's wasm beside the extension.
//   dist/extension.js        VS Code extension host (CJS, 'vscode' external)
//   dist/webview/main.js     Preact webview (browser IIFE)
//   dist/gateway.js          reference Off-Peak Gateway server (Node CJS)
//   dist/reference-agent.js  bundled reference agent CLI (Node CJS)
//   dist/test/vscode/*.js    the suite that runs inside a real VS Code (only with --tests or by default)
// usage: node esbuild.mjs [--watch] [--production]
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

const node = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: !production,
  minify: production,
  logLevel: 'info',
};

const vscodeTestEntries = existsSync('test/vscode')
  ? readdirSync('test/vscode').filter((f) => f.endsWith('.ts')).map((f) => path.join('test/vscode', f))
  : [];

const builds = [
  { ...node, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'] },
  { ...node, entryPoints: ['src/gateway/main.ts'], outfile: 'dist/gateway.js', external: ['better-sqlite3'] },
  { ...node, entryPoints: ['src/reference-agent/main.ts'], outfile: 'dist/reference-agent.js', banner: { js: '#!/usr/bin/env node' } },
  {
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    sourcemap: !production,
    minify: production,
    logLevel: 'info',
    entryPoints: ['webview/main.tsx'],
    outfile: 'dist/webview/main.js',
    jsx: 'automatic',
    jsxImportSource: 'preact',
  },
];
if (vscodeTestEntries.length > 0) {
  // Mocha runs inside the extension host; 'vscode' and 'mocha' come from the host / node_modules.
  builds.push({ ...node, entryPoints: vscodeTestEntries, outdir: 'dist/test/vscode', external: ['vscode', 'mocha'] });
}

function copyWasm() {
  mkdirSync('dist', { recursive: true });
  const wasm = path.join(path.dirname(require.resolve('sql.js')), 'sql-wasm.wasm');
  copyFileSync(wasm, 'dist/sql-wasm.wasm');
}

/** The codicon font and its stylesheet, for the webview's icons (served from dist/webview). */
function copyCodicons() {
  mkdirSync('dist/webview', { recursive: true });
  const dir = path.dirname(require.resolve('@vscode/codicons/dist/codicon.css'));
  for (const file of ['codicon.css', 'codicon.ttf']) copyFileSync(path.join(dir, file), path.join('dist/webview', file));
}

copyWasm();
copyCodicons();
if (watch) {
  const contexts = await Promise.all(builds.map((b) => esbuild.context(b)));
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
