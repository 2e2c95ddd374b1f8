// `npm start`: runs the product on this machine.
//   1. builds the extension, gateway and agent bundles;
//   2. ensures code-server is set up (the same cached set-up as `npm run test:vscode`);
//   3. starts the reference Off-Peak Gateway in demo mode (`node dist/gateway.js --demo --port P`)
//      when the build supports it;
//   4. starts code-server with this extension installed and offPeak.gatewayUrl pointing at it,
//      behind code-server's password page with a random password made for this start;
//   5. prints the URL to open in a browser and the password. Ctrl+C stops everything.
// The workbench is a terminal as this user for whoever gets in, hence the password. --host may be
// another interface (the password guards it, over plain HTTP: prefer an SSH tunnel); the demo
// gateway, whose demo key is public, listens on loopback only.
//
// usage: npm start [-- --port 8080] [--host 127.0.0.1] [--folder <workspace dir>] [--no-build]
//                   [--state <dir>]   (where settings and the task DB persist; default .tools/start/)
//                   [--check]   (open the workbench in headless Chromium, log in with the password,
//                                queue a task by clicks, see it complete, then stop: a smoke test)
//                   [--personal --upstream-url <url>]   personal mode: no gateway; the key comes from
//                                OFFPEAK_MODEL_API_KEY or ANTHROPIC_API_KEY in the environment and is
//                                set with "Off-Peak: Set Model API Key" in the served workbench
//                                (scripts/start-personal.ts; without them it says what to set, exit 2)
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, portIsFree, startCodeServer, type RunningCodeServer } from './vscode/code-server';
import { ensureVsCodeTools, REPO_ROOT, TOOLS_DIR, type VsCodeTools } from './vscode/tools';
import { personalStart } from './start-personal';
import { ensureDemoRepository } from './demo-workspace';
import { answerDialog, installExtension, launchBrowser, openWorkbench, panelFrame, runCommand, setApiKey, startGateway, STEP_TIMEOUT_MS, type GatewayProcess } from './vscode/workbench';

const { values: opts } = parseArgs({
  options: {
    port: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    folder: { type: 'string' },
    state: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    check: { type: 'boolean', default: false },
    personal: { type: 'boolean', default: false },
    'upstream-url': { type: 'string' },
  },
  allowPositionals: false,
});

const log = (msg: string): void => console.log(`[start] ${msg}`);
const START_DIR = path.join(TOOLS_DIR, 'start');

/** Where the demo gateway listens, whatever --host says: its demo key is printed and public. */
const GATEWAY_HOST = '127.0.0.1';

/** Starts the reference gateway in demo mode, or explains why it is not available. */
async function startDemoGateway(extraArgs: string[] = []): Promise<GatewayProcess | undefined> {
  try {
    // Show its banner (URL, demo API key) and keep printing what it says: admissions and errors.
    return await startGateway(GATEWAY_HOST, extraArgs, (text) => process.stdout.write(prefixLines('[gateway] ', text.endsWith('\n') ? text : `${text}\n`)));
  } catch (err) {
    log(`reference gateway demo mode is not available (${(err as Error).message.split('\n')[0]}): starting VS Code without a gateway`);
    return undefined;
  }
}

function prefixLines(prefix: string, text: string): string {
  return text.replace(/^(?=.)/gm, prefix);
}

/** The demo gateway's default user key (`--demo-key`); `npm start` does not change it. */
const DEMO_KEY = 'opk-demo-key-0000';

/**
 * Smoke test for `npm start`, done as a user would: keyboard and real clicks in the served
 * workbench. Sets the demo API key through the command palette, opens the panel, types a task
 * into the webview's form and clicks "Queue task", waits for its card to say Completed and for
 * its History row, then removes the History row and deletes the card with clicks.
 */
async function checkWorkbench(tools: VsCodeTools, url: string, password: string, withGateway: boolean): Promise<void> {
  const browser = await launchBrowser(tools);
  try {
    const page = await openWorkbench(browser, url, password);
    log('check: logged in with the printed password; workbench loaded');
    // The key first: F1 typed while the webview has focus does not reach the workbench.
    if (withGateway) await setApiKey(page, DEMO_KEY);
    await runCommand(page, 'Open Off-Peak Tasks');
    await page.locator('.tabs-container .tab', { hasText: 'Off-Peak Tasks' }).first().waitFor({ state: 'visible', timeout: STEP_TIMEOUT_MS });
    log('check: "Open Off-Peak Tasks" opened the Off-Peak Tasks panel');
    if (!withGateway) return;

    const frame = await panelFrame(page, '[data-testid="create-form"]', STEP_TIMEOUT_MS);
    log('check: the panel rendered its form');
    const submit = frame.locator('[data-testid="submit"]');
    await frame.locator('[data-testid="prompt"]').click();
    await page.keyboard.type('Say hello from the npm start check');
    // Create is enabled once the key is known and the gateway's availability says yes: the form's
    // "why not" hint disappears then.
    await frame.locator('[data-testid="availability"]').waitFor({ state: 'detached', timeout: STEP_TIMEOUT_MS });
    await submit.click();
    const card = frame.locator('li.card', { hasText: 'Say hello from the npm start check' });
    await card.locator('[data-testid="phase"]', { hasText: 'Completed' }).waitFor({ timeout: 2 * STEP_TIMEOUT_MS });
    log('check: clicked "Queue task"; the card went to Completed');
    // The form's defaults on the demo repository: the task ran on its own branch.
    const branch = (await card.locator('[data-testid="branch"]').textContent({ timeout: 10_000 }))?.trim() ?? '';
    if (!branch.startsWith('offpeak/')) throw new Error(`the demo task did not run on its own branch (the card says "${branch}")`);
    log(`check: with the form's defaults it ran on its own branch ${branch}`);
    const history = frame.locator('.history-row', { hasText: 'Say hello from the npm start check' });
    await history.locator('.status', { hasText: 'Succeeded' }).waitFor({ timeout: 10_000 });
    await history.locator('[data-testid="delete-history"]').click();
    await history.waitFor({ state: 'detached', timeout: 10_000 });
    log('check: the History row was removed with a click');
    await card.locator('[data-testid="delete"]').click();
    // The reference agent's session transcript stays unless the session is deleted too (docs/flows.md#cancel-delete-history).
    const question = await answerDialog(page, 'Delete Task');
    if (!/transcript .*is kept unless/.test(question)) throw new Error(`Delete asked "${question}", not whether the session goes too`);
    await card.waitFor({ state: 'detached', timeout: 10_000 });
    log('check: the card was deleted with a click (its session kept)');
  } finally {
    await browser.close();
  }
}

/** A step after code-server started failed: everything this start started stops, and one sentence says why. */
async function stopAfter(stopAll: () => Promise<void>, step: string, err: unknown): Promise<never> {
  await stopAll();
  const why = ((err as Error).message ?? String(err)).split('\n')[0];
  throw new Error(`could not ${step} (${why}); code-server and everything else this start began were stopped`);
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

async function main(): Promise<void> {
  // Personal mode: checked before anything is built or started; the key leaves process.env here.
  const personal = opts.personal ? personalStart(opts['upstream-url'], process.env) : undefined;
  if (personal && !personal.ok) {
    console.error(`npm start: ${personal.message}`);
    process.exit(2);
  }
  if (!opts.personal && opts['upstream-url']) throw new Error('--upstream-url goes with --personal');
  if (!opts['no-build']) {
    // Quiet: a user of npm start sees no bundle list, sizes or test bundles, only a problem.
    log('building the extension…');
    const build = spawnSync(process.execPath, ['esbuild.mjs', '--quiet'], { cwd: REPO_ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed');
  }
  const tools = ensureVsCodeTools({ browser: (opts.check ?? false) || personal !== undefined });
  const host = opts.host ?? '127.0.0.1';
  let port = opts.port ? Number(opts.port) : 8080;
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`--port ${opts.port} is not a port number`);
  if (!(await portIsFree(port, host))) {
    if (opts.port) throw new Error(`port ${port} on ${host} is in use`);
    port = await freePort(host);
  }

  // --check starts from a clean slate, so nothing restored from an earlier session can pass it.
  const stateDir = opts.check ? mkdtempSync(path.join(os.tmpdir(), 'offpeak-start-check-')) : path.resolve(opts.state ?? START_DIR);
  const workspace = path.resolve(opts.folder ?? path.join(stateDir, 'workspace'));
  mkdirSync(workspace, { recursive: true });
  // The demo folder is a repository of its own (a folder --folder names is the user's, as it is).
  if (!opts.folder && (await ensureDemoRepository(workspace)) === 'made') log(`made ${workspace} a git repository with a first commit (tasks there run on their own branch)`);
  const extensionId = installExtension(path.join(stateDir, 'extensions'));
  log(`installed ${extensionId} from ${REPO_ROOT} into ${path.join(stateDir, 'extensions')}`);

  // The check drives the UI, not the demo: its task (default permissions) would wait for answers
  // to the paced demo script's permission asks, so its gateway's demo model answers at once.
  const gateway = personal ? undefined : await startDemoGateway(opts.check ? ['--demo-script', 'echo'] : []);
  let server: RunningCodeServer | undefined;
  const stopAll = async (): Promise<void> => {
    await server?.stop();
    if (gateway) await gateway.stop();
  };
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping code-server${gateway ? ' and the gateway' : ''}`);
    void stopAll().finally(() => process.exit(0));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    server = await startCodeServer({
      tools,
      stateDir,
      smokeTestDriver: false, // a normal workbench: notifications are shown
      host,
      port,
      userSettings: {},
      // offPeak.gatewayUrl is machine-scoped: code-server reads it from the Remote settings.
      // The demo model's script uses the reference agent's tools: the demo pins that agent (`auto` would pick an installed Claude Code).
      machineSettings: personal?.ok
        ? { 'offPeak.mode': 'personal', 'offPeak.personal.baseUrl': personal.upstreamUrl, 'offPeak.personal.modelCredential': 'apiKey' }
        : gateway
          ? { 'offPeak.gatewayUrl': gateway.url, 'offPeak.agent': 'reference' }
          : undefined,
    });
  } catch (err) {
    await stopAll();
    throw err;
  }
  const url = `${server.origin}/?folder=${encodeURIComponent(workspace)}`;
  if (personal?.ok) {
    // The key goes where the extension keeps it, SecretStorage, through its own command.
    const browser = await launchBrowser(tools).catch(async (err: unknown) => stopAfter(stopAll, 'start the browser that sets the model API key', err));
    try {
      await setApiKey(await openWorkbench(browser, url, server.password), personal.modelApiKey, 'Set Model API Key');
      log(`personal mode: model API ${personal.upstreamUrl}, key set with "Off-Peak: Set Model API Key"`);
    } catch (err) {
      await stopAfter(stopAll, 'set the model API key in the served VS Code', err);
    } finally {
      await browser.close();
    }
  }
  console.log('');
  console.log(`Off-Peak Tasks is running in VS Code (code-server). Open this URL in a browser:`);
  console.log(`  ${url}`);
  console.log(`Password (new at every start; the login page asks for it): ${server.password}`);
  if (!isLoopback(host)) console.log(`Listening on ${host}: anyone who can reach it gets the login page, and the password crosses the network unencrypted (plain HTTP). Prefer --host 127.0.0.1 with an SSH tunnel.`);
  console.log(
    personal?.ok
      ? `Personal mode: no gateway; tasks are queued by a local authority on this machine and sent to ${personal.upstreamUrl}.`
      : gateway
      ? `Reference gateway (demo mode): ${gateway.url}; give the extension its demo API key (printed above) with "Off-Peak: Set Gateway API Key…".`
      : 'No gateway running: set offPeak.gatewayUrl in the settings.',
  );
  console.log('Then run "Off-Peak: Open Off-Peak Tasks" from the command palette (F1). Press Ctrl+C to stop.');
  console.log('');

  if (opts.check) {
    try {
      await checkWorkbench(tools, url, server.password, gateway !== undefined);
    } finally {
      await stopAll();
      rmSync(stateDir, { recursive: true, force: true });
    }
    return;
  }
  const code = await server.exited;
  if (!stopping) {
    log(`code-server exited with code ${code}\n${server.logTail()}`);
    await stopAll();
    process.exit(1);
  }
}

main().catch((err: unknown) => {
  console.error(`npm start: ${(err as Error).message}`);
  process.exit(1);
});
