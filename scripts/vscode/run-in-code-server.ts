// Runs a test suite inside a real VS Code: code-server serves the workbench and runs a real Node
// extension host; headless Debian Chromium (driven by playwright-core) opens the workbench with a
// URL payload that loads the extension under development and its extensionTestsPath.
// The workbench calls window.codeAutomationExit(code) once the suite's run() settles and forwards
// the extension host's console (mocha's reporter) through window.codeAutomationLog(type, args).
import { format } from 'node:util';
import { chromium, type Browser } from 'playwright-core';
import { startCodeServer, type RunningCodeServer } from './code-server';
import { logIn } from './workbench';
import type { VsCodeTools } from './tools';

export interface SuiteRun {
  extensionDevelopmentPath: string;
  extensionTestsPath: string;
  workspace: string;
  /** Environment of the extension host (the harness's own env is inherited as well). */
  hostEnv: Record<string, string>;
  stateDir: string;
  timeoutMs: number;
  verbose: boolean;
}

export type SuiteOutcome =
  { kind: 'exited'; hostExitCode: number } | { kind: 'timeout'; detail: string } | { kind: 'error'; detail: string };

// The workbench's own log arrives through the same hook as the extension host's console; this is
// its routine chatter (no internet here, no GitHub auth, startup timings), hidden unless --verbose.
const WORKBENCH_NOISE = new RegExp(
  [
    'ENOTFOUND',
    'getaddrinfo',
    'open-vsx\\.org',
    'authentication provider',
    '^Creating a socket',
    'connection token',
    '^\\[AccountPolicyGate\\]',
    '^\\[ChatModelSelection\\]',
    '^\\[AgentHost',
    '^\\[reconnection-grace-time\\]',
    '^\\[Service Worker\\]',
    '^Creation of workbench contribution',
    '^Updating additional builtin extensions cache',
    'Extension Host Process exited with code 0',
  ].join('|'),
);

function printForwarded(type: string, args: unknown[], verbose: boolean): void {
  // The host sends console arguments unformatted (mocha logs "  %d passing (%s)", 3, "4s").
  const text = format(...args);
  if (!verbose && WORKBENCH_NOISE.test(text)) return;
  if (type === 'error' || type === 'warn') console.error(text);
  else console.log(text);
}

const CHROMIUM_ARGS = [
  '--no-sandbox', // running as root in a container
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function runSuiteInCodeServer(tools: VsCodeTools, run: SuiteRun): Promise<SuiteOutcome & { logTail: string }> {
  let server: RunningCodeServer | undefined;
  let browser: Browser | undefined;
  const t0 = Date.now();
  const progress = (msg: string): void => console.log(`[vscode-test +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);

  const cleanup = async (): Promise<void> => {
    await browser?.close().catch(() => undefined);
    await server?.stop();
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    console.error(`[vscode-test] ${signal}: stopping code-server and Chromium`);
    void cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    server = await startCodeServer({ tools, stateDir: run.stateDir, smokeTestDriver: true, userSettings: {} });
    progress(`code-server ${server.origin} (process group ${server.pid})`);

    browser = await chromium.launch({ executablePath: tools.chromium, headless: true, args: CHROMIUM_ARGS });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (err) => {
      if (run.verbose) console.error(`[page error] ${err.message}`);
    });
    if (run.verbose) page.on('console', (msg) => console.log(`[browser] ${msg.text()}`));

    // Both hooks must exist before the workbench loads.
    await page.exposeFunction('codeAutomationLog', (type: string, args: unknown[]) =>
      printForwarded(type, Array.isArray(args) ? args : [args], run.verbose),
    );
    let reportExit: (code: number) => void = () => undefined;
    const hostExit = new Promise<number>((resolve) => (reportExit = resolve));
    await page.exposeFunction('codeAutomationExit', (code: number) => reportExit(Number(code)));

    const remote = (p: string): string => `vscode-remote://${server!.authority}${p}`;
    const payload: [string, string][] = [
      ['extensionDevelopmentPath', remote(run.extensionDevelopmentPath)],
      ['extensionTestsPath', remote(run.extensionTestsPath)],
      ['extensionEnvironment', JSON.stringify(run.hostEnv)],
      ['skipWelcome', 'true'],
      ['skipReleaseNotes', 'true'],
    ];
    const url = `${server.origin}/?folder=${encodeURIComponent(run.workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    progress('opening the workbench in headless Chromium');
    // The time limit covers loading the workbench too (slow on a loaded 2-core machine).
    const deadline = Date.now() + run.timeoutMs;
    try {
      await logIn(page, url, server.password, { timeout: run.timeoutMs });
    } catch (err) {
      if ((err as Error).name !== 'TimeoutError') throw err;
      const detail = `timed out after ${run.timeoutMs / 1000} s: the workbench page did not even load`;
      return { kind: 'timeout', detail, logTail: server.logTail() };
    }

    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race<SuiteOutcome>([
      hostExit.then((hostExitCode) => ({ kind: 'exited', hostExitCode })),
      server.exited.then((code) => ({ kind: 'error', detail: `code-server exited (code ${code}) before the tests finished` })),
      new Promise<SuiteOutcome>((resolve) => {
        timer = setTimeout(
          () =>
            resolve({
              kind: 'timeout',
              detail:
                `timed out after ${run.timeoutMs / 1000} s waiting for the tests inside VS Code to finish ` +
                '(the extension host never reported an exit code: did the workbench load, did the extension activate?)',
            }),
          Math.max(0, deadline - Date.now()),
        );
      }),
    ]);
    clearTimeout(timer);
    progress(outcome.kind === 'exited' ? `extension host reported exit code ${outcome.hostExitCode}` : outcome.detail);
    const logTail = server.logTail();
    return { ...outcome, logTail };
  } catch (err) {
    return { kind: 'error', detail: (err as Error).stack ?? String(err), logTail: server?.logTail() ?? '' };
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await cleanup();
  }
}
