// Runs every bench/*.bench.ts in its own process; each writes bench/results/<name>.json and prints it.
// usage: npm run bench [-- name...]
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

const only = process.argv.slice(2);
const dir = path.dirname(new URL(import.meta.url).pathname);
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.includes(f.replace('.bench.ts', '')))
  .sort();
let failed = 0;
for (const file of benches) {
  console.log(`\n=== bench ${file} ===`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, file)], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
if (benches.length === 0) console.log('no benchmarks found');
process.exitCode = failed > 0 ? 1 : 0;
