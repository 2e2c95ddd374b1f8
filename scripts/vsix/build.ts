// Builds off-peak-tasks-<version>.vsix with @vscode/vsce. vsce runs the `vscode:prepublish` script
// first (`node esbuild.mjs --production`: minified bundles), packs what .vscodeignore lets through
// and leaves node_modules out (`--no-dependencies`: every dependency is in the bundles). vsce 3.9
// (engines: Node >= 20) runs on the Node that runs this script: vsce 4 wants Node 22+, which made
// `npm install` on the README's Node 20 warn (EBADENGINE).
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../vscode/tools';
import { checkVsixEntries, readVsixEntries, type VsixEntry } from './contents';

export interface BuiltVsix {
  file: string;
  entries: VsixEntry[];
  /** Breaches of the content rule (see contents.ts); empty when the package is right. */
  problems: string[];
}

export function vsixPath(): string {
  const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  return path.join(REPO_ROOT, `${manifest.name}-${manifest.version}.vsix`);
}

export async function buildVsix(): Promise<BuiltVsix> {
  const file = vsixPath();
  rmSync(file, { force: true });
  const vsce = path.join(REPO_ROOT, 'node_modules', '@vscode', 'vsce', 'vsce');
  const result = spawnSync(process.execPath, [vsce, 'package', '--no-dependencies', '--out', file], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (result.error) throw new Error(`vsce: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`vsce package exited with ${result.status ?? result.signal}`);
  const entries = await readVsixEntries(file);
  return { file, entries, problems: checkVsixEntries(entries) };
}
