// `npm run test:vscode`: builds the extension and runs test/vscode/*.test.ts INSIDE a real VS Code.
//
// usage: node --import tsx scripts/vscode-test.ts [options]
//   --runner code-server|electron  code-server (default; these machines) or @vscode/test-electron
//                                  (desktop machines that can download VS Code). Env: OFFPEAK_VSCODE_RUNNER.
//   --spec <file>                  run only this spec (repeatable); .ts files are bundled with esbuild
//   --grep <pattern>               only tests whose full title matches
//   --no-build                     use the existing dist/ instead of running `npm run build`
//   --vsix <file>                  test THAT package, not this folder: it is installed into the fresh
//                                  code-server (`--install-extension`) and the suite runs against the
//                                  installed copy (code-server runner only)
//   --package                      `npm run package` first (production bundles, checked file list),
//                                  then as --vsix with the package it wrote (= `npm run test:vsix`)
//   --timeout <seconds>            limit for one run once code-server is up (default 300)
//   --verbose                      also print the workbench's own log and the browser console
//
// Exit code: 0 only if mocha inside VS Code reported every test passed. A completed run ends with
// `vscode: N passed, N failed` with the counts reported by mocha inside the extension host.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import * as esbuild from 'esbuild';
import { installVsix } from './vscode/code-server';
import { runSuiteInCodeServer } from './vscode/run-in-code-server';
import { ensureVsCodeTools, REPO_ROOT } from './vscode/tools';
import { buildVsix } from './vsix/build';
import { formatVsixEntries } from './vsix/contents';
import type { VsCodeTestResults } from '../test/vscode/index';

type Runner = 'code-server' | 'electron';

const TEST_HOST_EXTENSION = path.join(REPO_ROOT, 'scripts', 'vscode', 'test-host');

const { values: opts } = parseArgs({
  options: {
    runner: { type: 'string' },
    spec: { type: 'string', multiple: true },
    grep: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    vsix: { type: 'string' },
    package: { type: 'boolean', default: false },
    timeout: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
  allowPositionals: false,
});

/** A failure whose message says everything (no stack trace needed). */
class HarnessError extends Error {}

function fail(message: string): never {
  console.error(`vscode-test: ${message}`);
  console.log('vscode: the suite did not run');
  process.exit(1);
}

const runner = (opts.runner ?? process.env.OFFPEAK_VSCODE_RUNNER ?? 'code-server') as Runner;
if (runner !== 'code-server' && runner !== 'electron') fail(`unknown --runner ${runner} (use code-server or electron)`);
if ((opts.vsix || opts.package) && runner !== 'code-server') fail('--vsix and --package need the code-server runner');
if (opts.vsix && opts.package) fail('--vsix and --package exclude each other (--package tests the package it writes)');
const timeoutSeconds = Number(opts.timeout ?? 300);
if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) fail(`--timeout must be a positive number of seconds`);

/** Bundles .ts specs the way esbuild.mjs bundles test/vscode (vscode and mocha stay external). */
async function prepareSpecs(specs: string[], outDir: string): Promise<string[]> {
  const files: string[] = [];
  for (const spec of specs) {
    const abs = path.resolve(spec);
    if (!existsSync(abs)) throw new HarnessError(`--spec ${spec}: no such file`);
    if (!abs.endsWith('.ts')) {
      files.push(abs);
      continue;
    }
    const outfile = path.join(outDir, `${path.basename(abs, '.ts')}.js`);
    await esbuild.build({
      entryPoints: [abs],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      sourcemap: 'inline',
      external: ['vscode', 'mocha'],
      logLevel: 'warning',
    });
    files.push(outfile);
  }
  return files;
}

function readResults(file: string): VsCodeTestResults | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as VsCodeTestResults;
  } catch {
    return undefined;
  }
}

async function runWithElectron(
  extensionTestsPath: string,
  hostEnv: Record<string, string>,
  stateDir: string,
  workspace: string,
): Promise<number> {
  // Desktop machines only: downloads VS Code into .vscode-test/ (unreachable on the CI machines).
  const { runTests } = await import('@vscode/test-electron');
  try {
    return await runTests({
      extensionDevelopmentPath: REPO_ROOT,
      extensionTestsPath,
      extensionTestsEnv: hostEnv,
      launchArgs: [
        workspace,
        '--disable-workspace-trust',
        '--skip-welcome',
        '--skip-release-notes',
        `--user-data-dir=${path.join(stateDir, 'user-data')}`,
        `--extensions-dir=${path.join(stateDir, 'extensions')}`,
      ],
    });
  } catch (err) {
    console.error(`vscode-test: @vscode/test-electron: ${(err as Error).message}`);
    return 1;
  }
}

/** The package to test: the one --package writes (its file list printed and checked), or --vsix's. */
async function packageUnderTest(): Promise<string | undefined> {
  if (opts.vsix) {
    const file = path.resolve(opts.vsix);
    if (!existsSync(file)) throw new HarnessError(`--vsix ${opts.vsix}: no such file`);
    return file;
  }
  if (!opts.package) return undefined;
  const built = await buildVsix();
  console.log(`\n${path.relative(REPO_ROOT, built.file)}:\n${formatVsixEntries(built.entries)}`);
  if (built.problems.length > 0)
    throw new HarnessError(`the .vsix breaks the content rule (scripts/vsix/contents.ts):\n  ${built.problems.join('\n  ')}`);
  return built.file;
}

async function main(): Promise<number> {
  const vsix = await packageUnderTest();
  // --package's production build has built the suite too.
  if (!opts['no-build'] && !opts.package) {
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, stdio: 'inherit' });
    if (build.status !== 0) fail('npm run build failed');
  }
  const extensionTestsPath = path.join(REPO_ROOT, 'dist', 'test', 'vscode', 'index.js');
  for (const needed of [...(vsix ? [] : [path.join(REPO_ROOT, 'dist', 'extension.js')]), extensionTestsPath]) {
    if (!existsSync(needed)) fail(`${path.relative(REPO_ROOT, needed)} is missing: run npm run build`);
  }

  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'offpeak-vscode-test-'));
  try {
    const workspace = mkdtempSync(path.join(stateDir, 'workspace-'));
    const resultsFile = path.join(stateDir, 'results.json');
    // Where the extension under test must have been loaded from (test/vscode/packaging.test.ts).
    const hostEnv: Record<string, string> = { OFFPEAK_VSCODE_RESULTS: resultsFile, OFFPEAK_VSCODE_EXTENSION_PATH: REPO_ROOT };
    if (opts.spec?.length) hostEnv.OFFPEAK_VSCODE_SPECS = JSON.stringify(await prepareSpecs(opts.spec, path.join(stateDir, 'specs')));
    if (opts.grep) hostEnv.OFFPEAK_VSCODE_GREP = opts.grep;

    let hostExitCode: number;
    if (runner === 'electron') {
      hostExitCode = await runWithElectron(extensionTestsPath, hostEnv, stateDir, workspace);
    } else {
      let tools;
      try {
        tools = ensureVsCodeTools();
      } catch (err) {
        throw new HarnessError(`set-up failed: ${(err as Error).message}`);
      }
      let extensionDevelopmentPath = REPO_ROOT;
      if (vsix) {
        try {
          hostEnv.OFFPEAK_VSCODE_EXTENSION_PATH = installVsix(tools, stateDir, vsix);
        } catch (err) {
          throw new HarnessError((err as Error).message);
        }
        console.log(`vscode-test: installed ${path.relative(REPO_ROOT, vsix)} into a fresh extensions dir; the suite tests that copy`);
        // Tests run only in an Extension Development Host: a do-nothing extension is the one "under
        // development", so the extension under test is the installed one, loaded as a user's is.
        extensionDevelopmentPath = TEST_HOST_EXTENSION;
      }
      const outcome = await runSuiteInCodeServer(tools, {
        extensionDevelopmentPath,
        extensionTestsPath,
        workspace,
        hostEnv,
        stateDir,
        timeoutMs: timeoutSeconds * 1000,
        verbose: opts.verbose ?? false,
      });
      hostExitCode = outcome.kind === 'exited' ? outcome.hostExitCode : 1;
      // Failing tests explain themselves in mocha's output; anything else gets code-server's log.
      const explainedByMocha = readResults(resultsFile)?.failed;
      if (outcome.kind !== 'exited') console.error(`vscode-test: ${outcome.detail}`);
      if (hostExitCode !== 0 && !explainedByMocha) console.error(`--- code-server log (tail) ---\n${outcome.logTail}`);
    }

    const results = readResults(resultsFile);
    if (results && results.failed === 0 && hostExitCode !== 0) {
      console.error(`vscode-test: mocha reported no failures, but the extension host exited with code ${hostExitCode}`);
    }
    if (!results) {
      console.error('vscode-test: mocha inside VS Code reported no results (the suite did not load or never finished)');
      console.log('vscode: the suite did not run to completion (no counts from mocha)');
      return 1;
    }
    for (const failure of results.failures) console.error(`vscode-test: FAILED ${failure.title}: ${failure.error}`);
    console.log(`vscode: ${results.passed} passed, ${results.failed} failed`);
    return hostExitCode === 0 && results.failed === 0 && results.passed > 0 ? 0 : 1;
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  // main's finally has removed its temp dir by now
  (err: unknown) => fail(err instanceof HarnessError ? err.message : ((err as Error).stack ?? String(err))),
);
