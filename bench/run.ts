// Runs every bench/*.bench.ts in its own process; each writes bench/results/<name>.json and prints it.
// usage: npm run bench [-- [--short] name...]
//   --short  every bench end to end with small sizes, figures printed, results not written
//            (bench/mode.ts); `npm test` runs this so a broken bench fails CI.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { NOT_RUN_EXIT, SHORT_ENV } from './mode';

const args = process.argv.slice(2);
const short = args.includes('--short');
const only = args.filter((a) => a !== '--short');
const dir = path.dirname(new URL(import.meta.url).pathname);
const known = readdirSync(dir).filter((f) => f.endsWith('.bench.ts'));
const unknown = only.filter((name) => !known.includes(`${name}.bench.ts`));
if (unknown.length > 0) {
  console.error(`no such bench: ${unknown.join(', ')} (there are: ${known.map((f) => f.replace('.bench.ts', '')).join(', ')})`);
  process.exit(2);
}
const benches = known.filter((f) => only.length === 0 || only.includes(f.replace('.bench.ts', ''))).sort();
const env = { ...process.env, ...(short ? { [SHORT_ENV]: '1' } : {}) };
const outcomes: string[] = [];
const started = performance.now();
for (const file of benches) {
  console.log(`\n=== bench ${file}${short ? ' (short)' : ''} ===`);
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, file)], { stdio: 'inherit', env });
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  const outcome = r.status === 0 ? 'ok     ' : r.status === NOT_RUN_EXIT ? 'NOT RUN' : 'FAILED ';
  outcomes.push(`${outcome} ${file} ${seconds} s${r.status === 0 || r.status === NOT_RUN_EXIT ? '' : ` (exit ${r.status ?? r.signal})`}`);
}
if (benches.length === 0) console.log('no benchmarks found');
const count = (prefix: string) => outcomes.filter((o) => o.startsWith(prefix)).length;
const failed = count('FAILED');
const summary = `${count('ok')} passed, ${failed} failed${count('NOT RUN') > 0 ? `, ${count('NOT RUN')} not run` : ''}`;
console.log(
  `\n=== benches${short ? ' (short)' : ''}: ${summary}, ${((performance.now() - started) / 1000).toFixed(1)} s ===\n${outcomes.join('\n')}`,
);
process.exitCode = failed > 0 ? 1 : 0;
