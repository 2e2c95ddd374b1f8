// A bench runs in one of two modes. `npm run bench` measures with full sizes and writes
// bench/results/<name>.json. `npm run bench -- --short` (part of `npm test`, so CI runs it) runs
// the same code end to end with small sizes, so a broken bench fails the run: its figures are
// printed, never asserted, and bench/results/ is left as it is (short figures are not comparable).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Set by bench/run.ts --short for every bench process it starts. */
export const SHORT_ENV = 'OFFPEAK_BENCH_SHORT';

export const SHORT = process.env[SHORT_ENV] === '1';

/** Exit code of a bench that could not run here (bench/run.ts reports it as not run, not passed). */
export const NOT_RUN_EXIT = 3;

/** The full-run value, or the short-run one. */
export function sized<T>(full: T, short: T): T {
  return SHORT ? short : full;
}

/** Prints the result and, in a full run, writes it to bench/results/<name>.json. */
export function publish(name: string, result: unknown): void {
  console.log(JSON.stringify(result, null, 2));
  if (SHORT) {
    console.log(`(short run: figures from small sizes, not comparable; bench/results/${name}.json left as it is)`);
    return;
  }
  const dir = path.join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
}

/** Prints figures and, in a full run, sets just these keys in bench/results/<name>.json (the others kept). */
export function publishOne(name: string, figures: Record<string, unknown>): void {
  console.log(JSON.stringify(figures, null, 2));
  if (SHORT) return;
  const file = path.join(__dirname, 'results', `${name}.json`);
  const current = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  writeFileSync(file, `${JSON.stringify({ ...current, ...figures }, null, 2)}\n`);
}
