// `npm test`: every suite of README.md "Running the tests", stopping at the first failure, and at
// the end (or at that failure) how long each suite took and how busy the cores were, so a slow run
// says where its time went.
//
// The static checks and the build come first, side by side (typecheck and lint only read the
// sources; build writes dist/, which the later suites read). Then two streams run side by side, each
// suite of a stream after the one before it. The workbench stream is CPU-bound: headless Chromium
// draws the VS Code workbench in software beside code-server and its extension host. The process
// stream starts real gateways, window processes and agents that mostly wait on clocks and on each
// other (run alone, its e2e suite kept the cores 21% busy), so the two share two cores without either
// waiting long. `test:integration:idle` (3 window processes left idle for 2 minutes, then a lease
// hand-over) runs beside `test:integration`. A failure in either stream starts nothing new in both;
// what runs is let finish, so its output is whole. A stream's suites print their output whole when
// each ends (the workbench stream's live, the process stream's when the suite ends), and the
// last line stays `test:vsix`'s own. Consecutive panel tours of a stream (scripts/panel-tour*.ts)
// run in one process, in turn (scripts/ui-tours.ts): one Chromium and a warm browser cache for them
// all; each still has its own line in the table of times.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Run first, side by side. */
export const STATIC_GROUP: readonly string[] = ['typecheck', 'lint', 'build'];

/** The two streams, side by side after the static group: groups of suites, in order. */
export const STREAMS: readonly (readonly (readonly string[])[])[] = [
  [
    ['test:unit'],
    ['test:ui'],
    ['test:ui:personal'],
    ['test:ui:walkthrough'],
    ['test:ui:panel'],
    ['test:ui:runs'],
    ['test:ui:sessions'],
    ['test:ui:park'],
    ['test:ui:review'],
    ['test:ui:checks'],
    ['test:ui:chains'],
    ['test:ui:schedules'],
    ['test:vsix'],
  ],
  [['test:integration', 'test:integration:idle'], ['test:mysql'], ['test:e2e'], ['test:bench']],
];

/** Every group, in the order README.md lists the suites: the static group, then each stream's. */
export const TEST_GROUPS: readonly (readonly string[])[] = [STATIC_GROUP, ...STREAMS.flat()];

/** The suite whose last line ends the run (`vscode: N passed, N failed`). */
const LAST_SUITE = 'test:vsix';

interface StepResult {
  script: string;
  code: number | null;
  ms: number;
  lastLine: string;
  /** How busy the machine's cores were while this step's group ran (0–1), to tell waiting from work. */
  busy?: number;
  /** The end of its output, printed again beside the table when it failed (a live stream's is far above by then). */
  tail?: string;
}

/** Busy and total CPU time of every core so far (os.cpus(): every platform). */
export function cpuTimes(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const { times } of os.cpus()) {
    const all = times.user + times.nice + times.sys + times.irq + times.idle;
    total += all;
    busy += all - times.idle;
  }
  return { busy, total };
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

/** The file a panel tour's npm script runs (`node --import tsx scripts/panel-tour….ts --no-build`), else undefined. */
export function tourScriptFile(command: string | undefined): string | undefined {
  return /^node --import tsx (scripts\/panel-tour[\w-]*\.ts) --no-build$/.exec(command ?? '')?.[1];
}

/** What scripts/ui-tours.ts prints after each tour, for the table of times. */
export function suiteTimeLine(r: Pick<StepResult, 'script' | 'code' | 'ms' | 'busy'>): string {
  return `[suite-time] ${r.script} ${r.code === 0 ? 'ok' : 'FAILED'} ${r.ms} ${r.busy?.toFixed(3) ?? '-'}`;
}

const SUITE_TIME_LINE = /^\[suite-time\] (\S+) (ok|FAILED) (\d+) (\S+)$/;

/**
 * The units one stream runs, in order: its groups, except that consecutive groups of one panel tour
 * each become one batch (run in one process by scripts/ui-tours.ts).
 */
export function batchTours(
  stream: readonly (readonly string[])[],
  scripts: Record<string, string>,
): (readonly string[] | { tours: string[] })[] {
  const units: (readonly string[] | { tours: string[] })[] = [];
  for (const group of stream) {
    const last = units.at(-1);
    if (group.length !== 1 || !tourScriptFile(scripts[group[0]!])) units.push(group);
    else if (last && 'tours' in last) last.tours.push(group[0]!);
    else units.push({ tours: [group[0]!] });
  }
  return units;
}

/**
 * Runs an npm script, or (`tours`) scripts/ui-tours.ts on several; the results are the script's,
 * or each tour's from its `[suite-time]` line (a tour that never ran has none).
 */
function runScript(script: string, live: boolean, tours?: readonly string[]): Promise<StepResult[]> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const argv = tours ? ['--import', 'tsx', 'scripts/ui-tours.ts', ...tours] : [npmCli(), 'run', script];
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let buffered = '';
    let tail = '';
    let partial = '';
    const timed: StepResult[] = [];
    const take = (stream: NodeJS.WriteStream) => (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-16384);
      if (live) stream.write(text);
      else buffered += text;
      if (stream !== process.stdout) return;
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const found = SUITE_TIME_LINE.exec(line.trim());
        if (found)
          timed.push({
            script: found[1]!,
            code: found[2] === 'ok' ? 0 : 1,
            ms: Number(found[3]),
            lastLine: found[2] === 'ok' ? `${found[1]}: passed` : `${found[1]}: FAILED`,
            busy: found[4] === '-' ? undefined : Number(found[4]),
          });
      }
    };
    child.stdout.on('data', take(process.stdout));
    child.stderr.on('data', take(process.stderr));
    child.on('error', reject);
    child.on('close', (code) => {
      if (!live) process.stdout.write(`\n> ${script}\n${buffered}`);
      const lastLine =
        tail
          .split('\n')
          .map((line) => line.trim())
          .filter(Boolean)
          .pop() ?? '';
      if (!tours) return resolve([{ script, code, ms: Date.now() - started, lastLine, tail }]);
      // A batch that ended badly without saying which tour failed: its first tour without a line did.
      if (code !== 0 && !timed.some((r) => r.code !== 0)) {
        const unrun = tours.find((name) => !timed.some((r) => r.script === name)) ?? script;
        timed.push({ script: unrun, code, ms: Date.now() - started - timed.reduce((sum, r) => sum + r.ms, 0), lastLine });
      }
      resolve(timed.map((r) => (r.code === 0 ? r : { ...r, tail })));
    });
  });
}

/** The last lines of each failed suite's output, so the reason stands next to the table. */
export function failureTails(results: readonly Pick<StepResult, 'script' | 'code' | 'tail'>[], lines = 60): string {
  return results
    .filter((r) => r.code !== 0 && r.tail)
    .map((r) => `\nnpm test: the end of ${r.script}'s output\n${r.tail!.split('\n').slice(-lines).join('\n')}\n`)
    .join('');
}

function printTimes(results: readonly StepResult[], wallMs: number): void {
  process.stdout.write(failureTails(results));
  process.stdout.write('\nnpm test: time per suite\n');
  for (const r of results) {
    const status = r.code === 0 ? 'ok' : `FAILED (exit ${r.code})`;
    const busy = r.busy === undefined ? '' : `  cores ${Math.round(r.busy * 100)}% busy`;
    process.stdout.write(`  ${(r.ms / 1000).toFixed(1).padStart(8)} s  ${r.script.padEnd(20)} ${status.padEnd(6)}${busy}\n`);
  }
  process.stdout.write(
    `  ${(wallMs / 1000).toFixed(1).padStart(8)} s  in all (wall clock: the streams overlap; "busy" is the whole machine's)\n`,
  );
}

/** What to run: everything, or only the suites named (`npm test -- lint test:e2e`), each where the plan has it. */
export function planToRun(only: readonly string[]): { first: string[]; streams: string[][][] } {
  const unknown = only.filter((script) => !TEST_GROUPS.some((group) => group.includes(script)));
  if (unknown.length > 0) throw new Error(`not a suite of npm test: ${unknown.join(', ')}`);
  const keep = (group: readonly string[]) => group.filter((script) => only.length === 0 || only.includes(script));
  return {
    first: keep(STATIC_GROUP),
    streams: STREAMS.map((stream) => stream.map(keep).filter((group) => group.length > 0)).filter((stream) => stream.length > 0),
  };
}

async function main(only: readonly string[]): Promise<number> {
  const plan = planToRun(only);
  const started = Date.now();
  const results: StepResult[] = [];
  let failed: StepResult | undefined;
  const scripts = (JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts;
  const runGroup = async (unit: readonly string[] | { tours: string[] }, live: boolean): Promise<void> => {
    if ('tours' in unit) {
      // Each tour's own time and busy share, from the batch's lines.
      const done = await runScript(unit.tours.join(' + '), live, unit.tours);
      results.push(...done);
      failed ??= done.find((r) => r.code !== 0);
      return;
    }
    const before = cpuTimes();
    const done = (await Promise.all(unit.map((script) => runScript(script, live && unit.length === 1)))).flat();
    const after = cpuTimes();
    const busy = after.total > before.total ? (after.busy - before.busy) / (after.total - before.total) : undefined;
    results.push(...done.map((r) => ({ ...r, busy })));
    failed ??= done.find((r) => r.code !== 0);
  };
  if (plan.first.length > 0) await runGroup(plan.first, false);
  if (!failed) {
    // The first stream's output is live; the others' is printed whole as each suite ends.
    await Promise.all(
      plan.streams.map(async (stream, index) => {
        for (const unit of batchTours(stream, scripts)) {
          if (failed) return;
          await runGroup(unit, index === 0);
        }
      }),
    );
  }
  printTimes(results, Date.now() - started);
  if (failed) return failed.code ?? 1;
  // The run's last line stays the last suite's own (`vscode: N passed, N failed`).
  const last = results.find((r) => r.script === LAST_SUITE) ?? results[results.length - 1]!;
  process.stdout.write(`${last.lastLine}\n`);
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
