// Builds off-peak-tasks-<version>.vsix with @vscode/vsce. vsce runs the `vscode:prepublish` script
// first (`node esbuild.mjs --production`: minified bundles), packs what .vscodeignore lets through
// and leaves node_modules out (`--no-dependencies`: every dependency is in the bundles).
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ensureNode24Tool, REPO_ROOT } from '../vscode/tools';
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

/** vsce 4 needs Node 22+: this Node if it is new enough, otherwise the project's Node 24 in .tools/. */
function nodeForVsce(): string {
  const major = Number(process.versions.node.split('.')[0]);
  return major >= 22 ? process.execPath : ensureNode24Tool();
}

export async function buildVsix(): Promise<BuiltVsix> {
  const file = vsixPath();
  rmSync(file, { force: true });
  const vsce = path.join(REPO_ROOT, 'node_modules', '@vscode', 'vsce', 'vsce');
  const result = spawnSync(nodeForVsce(), [vsce, 'package', '--no-dependencies', '--out', file], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (result.error) throw new Error(`vsce: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`vsce package exited with ${result.status ?? result.signal}`);
  const entries = await readVsixEntries(file);
  return { file, entries, problems: checkVsixEntries(entries) };
}
