// The programs tests start beside the engine (the reference agent, hundreds of times in one e2e
// run, and the permission relay) are bundles built from source with esbuild once per test process,
// the way esbuild.mjs builds dist/reference-agent.js and dist/permission-mcp.js, instead of the
// TypeScript entry run through tsx: every tsx start loads and transforms each module
// again (about 0.3 s of CPU for the reference agent against 0.1 s for its bundle, measured on 2
// cores), and those starts competed with the suites that run beside them (scripts/test-all.ts).
// Built from source, so a test never runs a stale dist/.
import { buildSync } from 'esbuild';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '../..');
const bundles = new Map<string, string>();
let outDir: string | undefined;

/** argv (after `node`) that runs `entry` (a path from the repository root) as a fresh bundle of its source. */
export function bundledEntryArgv(entry: string): string[] {
  const source = path.resolve(REPO_ROOT, entry);
  let bundle = bundles.get(source);
  if (!bundle) {
    if (!outDir) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-test-bundles-'));
      process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
      outDir = dir;
    }
    bundle = path.join(outDir, `${bundles.size}-${path.basename(source).replace(/\.ts$/, '')}.js`);
    buildSync({
      entryPoints: [source],
      outfile: bundle,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      logLevel: 'silent',
    });
    bundles.set(source, bundle);
  }
  return [bundle];
}

/** argv (after `node`) of the reference agent, bundled from src/reference-agent/main.ts. */
export function referenceAgentArgv(): string[] {
  return bundledEntryArgv('src/reference-agent/main.ts');
}
