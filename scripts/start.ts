// `npm start`: runs the product on this machine.
//   1. builds the extension, gateway and agent bundles;
//   2. ensures code-server is set up (the same cached set-up as `npm run test:vscode`);
//   3. starts the reference Off-Peak Gateway in demo mode (`node dist/gateway.js --demo --port P`)
//      when the build supports it;
//   4. starts code-server with this extension installed and offPeak.gatewayUrl pointing at it;
//   5. prints the URL to open in a browser. Ctrl+C stops everything.
//
// usage: npm start [-- --port 8080] [--host 127.0.0.1] [--folder <workspace dir>] [--no-build]
//                   [--check]   (open the workbench in headless Chromium, run the "Open Off-Peak
//                                Tasks" command, confirm its panel appears, then stop: a smoke test)
// State (user settings, the extension's globalStorage with its task DB) persists in .tools/start/.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { freePort, killProcessGroup, portIsFree, startCodeServer, type RunningCodeServer } from './vscode/code-server';
import { ensureVsCodeTools, REPO_ROOT, TOOLS_DIR, type VsCodeTools } from './vscode/tools';

const { values: opts } = parseArgs({
  options: {
    port: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    folder: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    check: { type: 'boolean', default: false },
  },
  allowPositionals: false,
});

const log = (msg: string): void => console.log(`[start] ${msg}`);
const START_DIR = path.join(TOOLS_DIR, 'start');

interface Manifest {
  publisher: string;
  name: string;
  version: string;
}

/** Installs the built extension like a user install: <extensions-dir>/<publisher>.<name>-<version>. */
function installExtension(extensionsDir: string): string {
  const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as Manifest;
  const id = `${manifest.publisher}.${manifest.name}`;
  mkdirSync(extensionsDir, { recursive: true });
  const target = path.join(extensionsDir, `${id}-${manifest.version}`);
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target);
  // dist/ holds every bundle (and sql.js's wasm): node_modules is not needed at runtime.
  for (const entry of ['package.json', 'dist', 'media', 'README.md', 'CHANGELOG.md']) {
    const from = path.join(REPO_ROOT, entry);
    if (existsSync(from)) cpSync(from, path.join(target, entry), { recursive: true });
  }
  return id;
}

function waitForPort(port: number, host: string, child: ChildProcess, timeoutMs: number): Promise<'listening' | string> {
  return new Promise((resolve) => {
    const deadline = Date.now() + timeoutMs;
    let settled = false;
    const settle = (result: 'listening' | string): void => {
      if (!settled) {
        settled = true;
        resolve(result);
      }
    };
    child.once('exit', (code, signal) => settle(`it exited with ${code ?? signal}`));
    const probe = (): void => {
      if (settled) return;
      const socket = net.connect(port, host);
      socket.once('connect', () => {
        socket.destroy();
        settle('listening');
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) settle(`it did not listen on ${host}:${port} within ${timeoutMs / 1000} s`);
        else setTimeout(probe, 200);
      });
    };
    probe();
  });
}

/** Starts `node dist/gateway.js --demo --port P`, or explains why the demo gateway is not available. */
async function startDemoGateway(host: string, extraArgs: string[] = []): Promise<{ child: ChildProcess; url: string } | undefined> {
  const bundle = path.join(REPO_ROOT, 'dist', 'gateway.js');
  if (!existsSync(bundle)) {
    log('reference gateway: dist/gateway.js is missing; starting VS Code without a gateway');
    return undefined;
  }
  const port = await freePort(host);
  const child = spawn(process.execPath, [bundle, '--demo', '--port', String(port), ...extraArgs], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-2000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const state = await waitForPort(port, host, child, 15_000);
  if (state !== 'listening') {
    await killProcessGroup(child);
    log(`reference gateway demo mode is not available yet (${state}): starting VS Code without a gateway`);
    if (output.trim()) log(`  gateway said: ${output.trim().split('\n').slice(-3).join(' | ')}`);
    return undefined;
  }
  // Show its banner (URL, demo API key) and keep printing what it says: admissions and errors.
  child.stdout?.removeListener('data', keep);
  child.stderr?.removeListener('data', keep);
  if (output) process.stdout.write(prefixLines('[gateway] ', output.endsWith('\n') ? output : `${output}\n`));
  child.stdout?.on('data', (chunk: Buffer) => process.stdout.write(prefixLines('[gateway] ', chunk.toString())));
  child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(prefixLines('[gateway] ', chunk.toString())));
  return { child, url: `http://${host}:${port}` };
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
async function checkWorkbench(tools: VsCodeTools, url: string, withGateway: boolean): Promise<void> {
  const browser = await chromium.launch({
    executablePath: tools.chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(url);
    await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: 90_000 });
    log('check: workbench loaded');
    const runCommand = async (title: string): Promise<void> => {
      // The palette lists a command only once the extension is installed and enabled.
      const deadline = Date.now() + 60_000;
      for (;;) {
        await page.keyboard.press('F1');
        const input = page.locator('.quick-input-widget .quick-input-box input');
        await input.waitFor({ state: 'visible', timeout: 10_000 });
        await input.fill(`>${title}`);
        const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first();
        if (await row.isVisible({ timeout: 3000 }).catch(() => false)) {
          await page.keyboard.press('Enter');
          return;
        }
        await page.keyboard.press('Escape');
        if (Date.now() > deadline) throw new Error(`the command "${title}" never appeared in the command palette`);
      }
    };
    // The key first: F1 typed while the webview has focus does not reach the workbench.
    if (withGateway) {
      await runCommand('Set Gateway API Key');
      // The password box replaces the palette in the same widget: wait for it, not the palette's input.
      const keyBox = page.locator('.quick-input-widget .quick-input-box input[type="password"]');
      await keyBox.waitFor({ state: 'visible', timeout: 10_000 });
      await keyBox.fill(DEMO_KEY);
      // Enter is ignored while the box still validates the value: accept only once it settled.
      await page.waitForTimeout(500);
      await keyBox.press('Enter');
      await keyBox.waitFor({ state: 'hidden', timeout: 10_000 });
    }
    await runCommand('Open Off-Peak Tasks');
    await page.locator('.tabs-container .tab', { hasText: 'Off-Peak Tasks' }).first().waitFor({ state: 'visible', timeout: 30_000 });
    log('check: "Open Off-Peak Tasks" opened the Off-Peak Tasks panel');
    if (!withGateway) return;

    // The panel's document is an iframe inside VS Code's webview iframe.
    const panel = async () => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        for (const frame of page.frames()) {
          if ((await frame.locator('[data-testid="create-form"]').count().catch(() => 0)) > 0) return frame;
        }
        if (Date.now() > deadline) throw new Error('the panel never rendered its form');
        await page.waitForTimeout(250);
      }
    };
    const frame = await panel();
    log('check: the panel rendered its form');
    const submit = frame.locator('[data-testid="submit"]');
    await frame.locator('[data-testid="prompt"]').click();
    await page.keyboard.type('Say hello from the npm start check');
    // Create is enabled once the key is known and the gateway's availability says yes: the form's
    // "why not" hint disappears then.
    await frame.locator('[data-testid="availability"]').waitFor({ state: 'detached', timeout: 30_000 });
    await submit.click();
    const card = frame.locator('article.card', { hasText: 'Say hello from the npm start check' });
    await card.locator('[data-testid="phase"]', { hasText: 'Completed' }).waitFor({ timeout: 90_000 });
    log('check: clicked "Queue task"; the card went to Completed');
    const history = frame.locator('.history-row', { hasText: 'Say hello from the npm start check' });
    await history.locator('.status', { hasText: 'Succeeded' }).waitFor({ timeout: 10_000 });
    await history.locator('[data-testid="delete-history"]').click();
    await history.waitFor({ state: 'detached', timeout: 10_000 });
    log('check: the History row was removed with a click');
    await card.locator('[data-testid="delete"]').click();
    await card.waitFor({ state: 'detached', timeout: 10_000 });
    log('check: the card was deleted with a click');
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  if (!opts['no-build']) {
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed');
  }
  const tools = ensureVsCodeTools({ browser: opts.check ?? false });
  const host = opts.host ?? '127.0.0.1';
  let port = opts.port ? Number(opts.port) : 8080;
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`--port ${opts.port} is not a port number`);
  if (!(await portIsFree(port, host))) {
    if (opts.port) throw new Error(`port ${port} on ${host} is in use`);
    port = await freePort(host);
  }

  // --check starts from a clean slate, so nothing restored from an earlier session can pass it.
  const stateDir = opts.check ? mkdtempSync(path.join(os.tmpdir(), 'offpeak-start-check-')) : START_DIR;
  const workspace = path.resolve(opts.folder ?? path.join(stateDir, 'workspace'));
  mkdirSync(workspace, { recursive: true });
  const extensionId = installExtension(path.join(stateDir, 'extensions'));
  log(`installed ${extensionId} from ${REPO_ROOT} into ${path.join(stateDir, 'extensions')}`);

  // The check drives the UI, not the demo: its task (default permissions) would wait for answers
  // to the paced demo script's permission asks, so its gateway's demo model answers at once.
  const gateway = await startDemoGateway(host, opts.check ? ['--demo-script', 'echo'] : []);
  let server: RunningCodeServer | undefined;
  const stopAll = async (): Promise<void> => {
    await server?.stop();
    if (gateway) await killProcessGroup(gateway.child);
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
      userSettings: gateway ? { 'offPeak.gatewayUrl': gateway.url } : {},
    });
  } catch (err) {
    await stopAll();
    throw err;
  }
  const url = `${server.origin}/?folder=${encodeURIComponent(workspace)}`;
  console.log('');
  console.log(`Off-Peak Tasks is running in VS Code (code-server). Open this URL in a browser:`);
  console.log(`  ${url}`);
  console.log(
    gateway
      ? `Reference gateway (demo mode): ${gateway.url}; give the extension its demo API key (printed above) with "Off-Peak: Set Gateway API Key…".`
      : 'No gateway running: set offPeak.gatewayUrl in the settings.',
  );
  console.log('Then run "Off-Peak: Open Off-Peak Tasks" from the command palette (F1). Press Ctrl+C to stop.');
  console.log('');

  if (opts.check) {
    try {
      await checkWorkbench(tools, url, gateway !== undefined);
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
