// `npm test`: every suite of README.md "Running the tests", in that order, stopping at the first
// failure, and at the end (or at that failure) how long each suite took, so a slow run says where
// its time went. The steps of one group share nothing (typecheck and lint only read the sources,
// build writes dist/, which neither reads) and run side by side, each one's output printed whole
// when it ends. `test:integration:idle` (3 window processes left idle for 2 minutes, then a lease
// hand-over) is nearly all waiting, so it runs beside `test:integration` instead of adding its
// 2.5 minutes after it. Every other suite runs alone with its output live, because the suites that
// start servers, agents and browsers are timed against real clocks and two cores are all CI has.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

export const TEST_GROUPS: readonly (readonly string[])[] = [
  ['typecheck', 'lint', 'build'],
  ['test:unit'],
  ['test:integration', 'test:integration:idle'],
  ['test:mysql'],
  ['test:e2e'],
  ['test:ui'],
  ['test:ui:personal'],
  ['test:ui:walkthrough'],
  ['test:ui:panel'],
  ['test:ui:runs'],
  ['test:ui:sessions'],
  ['test:ui:park'],
  ['test:ui:review'],
  ['test:ui:checks'],
  ['test:ui:schedules'],
  ['test:bench'],
  ['test:vsix'],
];

interface StepResult {
  script: string;
  code: number | null;
  ms: number;
  lastLine: string;
}

/** npm's CLI script: the one running this (`npm test`), else the one installed beside this Node. */
export function npmCli(): string {
  const candidates = [
    process.env.npm_execpath ?? '',
    path.join(path.dirname(process.execPath), '../lib/node_modules/npm/bin/npm-cli.js'),
    path.join(path.dirname(process.execPath), 'node_modules/npm/bin/npm-cli.js'),
  ];
  const found = candidates.find((file) => /npm-cli\.c?js$/.test(file) && existsSync(file));
  if (!found) throw new Error(`npm-cli.js not found (npm_execpath unset, nothing beside ${process.execPath})`);
  return found;
}

function runScript(script: string, live: boolean): Promise<StepResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [npmCli(), 'run', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let buffered = '';
    let tail = '';
    const take = (stream: NodeJS.WriteStream) => (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-4096);
      if (live) stream.write(text);
      else buffered += text;
    };
    child.stdout.on('data', take(process.stdout));
    child.stderr.on('data', take(process.stderr));
    child.on('error', reject);
    child.on('close', (code) => {
      if (!live) process.stdout.write(`\n> ${script}\n${buffered}`);
      const lastLine = tail.split('\n').map((line) => line.trim()).filter(Boolean).pop() ?? '';
      resolve({ script, code, ms: Date.now() - started, lastLine });
    });
  });
}

function printTimes(results: readonly StepResult[], wallMs: number): void {
  process.stdout.write('\nnpm test: time per suite\n');
  for (const r of results) {
    const status = r.code === 0 ? 'ok' : `FAILED (exit ${r.code})`;
    process.stdout.write(`  ${(r.ms / 1000).toFixed(1).padStart(8)} s  ${r.script.padEnd(18)} ${status}\n`);
  }
  process.stdout.write(`  ${(wallMs / 1000).toFixed(1).padStart(8)} s  in all (wall clock; a group's steps overlap)\n`);
}

/** The groups to run: all, or only the suites named on the command line (`npm test -- lint test:e2e`). */
export function groupsToRun(only: readonly string[]): string[][] {
  const unknown = only.filter((script) => !TEST_GROUPS.some((group) => group.includes(script)));
  if (unknown.length > 0) throw new Error(`not a suite of npm test: ${unknown.join(', ')}`);
  return TEST_GROUPS.map((group) => group.filter((script) => only.length === 0 || only.includes(script))).filter((group) => group.length > 0);
}

async function main(only: readonly string[]): Promise<number> {
  const started = Date.now();
  const results: StepResult[] = [];
  for (const group of groupsToRun(only)) {
    const done = await Promise.all(group.map((script) => runScript(script, group.length === 1)));
    results.push(...done);
    if (done.some((r) => r.code !== 0)) {
      printTimes(results, Date.now() - started);
      return done.find((r) => r.code !== 0)!.code ?? 1;
    }
  }
  printTimes(results, Date.now() - started);
  // The run's last line stays the last suite's own (`vscode: N passed, N failed`).
  process.stdout.write(`${results[results.length - 1]!.lastLine}\n`);
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`npm test: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
