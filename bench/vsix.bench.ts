/**
 * The package a user installs (issue 11). Writes bench/results/vsix.json and prints it.
 *
 * vsix_bytes           size of off-peak-tasks-<version>.vsix as `npm run package` writes it
 * extension_js_bytes   dist/extension.js inside it (what the extension host loads to activate)
 * engine_js_bytes      dist/engine.js inside it (required when the engine starts, after activate())
 * personal_js_bytes    dist/personal.js inside it (required in personal mode, likewise)
 * runtime_js_bytes     dist/runtime.js inside it (required when this window first starts a task)
 * webview_js_bytes     dist/webview/main.js inside it (what the panel loads)
 * first_paint_bytes    the bundles the host parses before the panel's first paint with tasks in it
 *                      (FIRST_PAINT_BUNDLES in scripts/vsix/contents.ts: extension.js and engine.js)
 * activate_ms          median over runs of the time VS Code's extension host spends in activate()
 *                      (its own marks willActivateExtension -> didActivateExtension), with the .vsix
 *                      installed into a fresh code-server; the engine starts after it, in the background
 * code_load_ms         median time the host spends loading dist/extension.js before calling activate()
 *                      (its lazy bundles are not loaded by then: activate() only registers)
 * floor_*              the same two spans for a do-nothing extension in the same host and run
 * usage: npm run bench -- vsix   (needs what npm run test:vscode needs; OFFPEAK_BENCH_VSIX_RUNS=3)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildVsix } from '../scripts/vsix/build';
import { FIRST_PAINT_BUNDLES } from '../scripts/vsix/contents';
import { REPO_ROOT } from '../scripts/vscode/tools';
import { publish, sized } from './mode';

interface Activation {
  code_load_ms: number;
  activate_ms: number;
}

const RUNS = Number(process.env.OFFPEAK_BENCH_VSIX_RUNS ?? sized(3, 1));
const median = (s: number[]) => [...s].sort((a, b) => a - b)[Math.floor(s.length / 2)];

function measureActivation(vsix: string): { extension: Activation; floor: Activation } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'offpeak-bench-vsix-'));
  try {
    const out = path.join(dir, 'activation.json');
    const harness = [
      '--import',
      'tsx',
      path.join(REPO_ROOT, 'scripts', 'vscode-test.ts'),
      '--no-build',
      '--vsix',
      vsix,
      '--spec',
      path.join(REPO_ROOT, 'bench', 'vscode', 'activation-marks.ts'),
    ];
    // The extension host inherits the harness's environment.
    const run = spawnSync(process.execPath, harness, {
      cwd: REPO_ROOT,
      stdio: 'inherit',
      env: { ...process.env, OFFPEAK_BENCH_ACTIVATION_OUT: out },
    });
    if (run.status !== 0) throw new Error(`the activation run failed (exit ${run.status ?? run.signal})`);
    return JSON.parse(readFileSync(out, 'utf8')) as { extension: Activation; floor: Activation };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { file, entries, problems } = await buildVsix();
  if (problems.length > 0) throw new Error(`the .vsix breaks the content rule:\n  ${problems.join('\n  ')}`);
  const bytesOf = (p: string) => {
    const entry = entries.find((e) => e.path === p);
    if (!entry) throw new Error(`${p} is not in ${file}`);
    return entry.bytes;
  };
  const samples = Array.from({ length: RUNS }, () => measureActivation(file));
  const result = {
    vsix_bytes: statSync(file).size,
    extension_js_bytes: bytesOf('extension/dist/extension.js'),
    engine_js_bytes: bytesOf('extension/dist/engine.js'),
    personal_js_bytes: bytesOf('extension/dist/personal.js'),
    runtime_js_bytes: bytesOf('extension/dist/runtime.js'),
    webview_js_bytes: bytesOf('extension/dist/webview/main.js'),
    first_paint_bytes: FIRST_PAINT_BUNDLES.reduce((sum, p) => sum + bytesOf(p), 0),
    activate_ms: median(samples.map((s) => s.extension.activate_ms)),
    code_load_ms: median(samples.map((s) => s.extension.code_load_ms)),
    floor_activate_ms: median(samples.map((s) => s.floor.activate_ms)),
    floor_code_load_ms: median(samples.map((s) => s.floor.code_load_ms)),
    runs: RUNS,
  };
  publish('vsix', result);
  console.log(
    `samples (activate_ms, code_load_ms): ${samples.map((s) => `${s.extension.activate_ms}/${s.extension.code_load_ms}`).join(' ')}`,
  );
}

main().catch((err: unknown) => {
  console.error(`bench vsix: ${(err as Error).message}`);
  process.exit(1);
});
