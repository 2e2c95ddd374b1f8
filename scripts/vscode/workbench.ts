// Driving the served workbench as a user would (keyboard and real clicks in headless Chromium),
// shared by `npm start --check` and the panel tour (scripts/panel-tour.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Frame, type Page } from 'playwright-core';
import { freePort, killProcessGroup } from './code-server';
import { REPO_ROOT, type VsCodeTools } from './tools';

interface Manifest {
  publisher: string;
  name: string;
  version: string;
}

/** Installs the built extension like a user install: <extensions-dir>/<publisher>.<name>-<version>. */
export function installExtension(extensionsDir: string): string {
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

/**
 * How long one step of driving the workbench (a login, a palette, a box) may take. On a loaded
 * machine (2 cores, several builds and test runs) code-server answers in tens of seconds, and
 * `npm start` failed there with a raw browser-automation timeout: the bounds only catch a hang.
 */
export const STEP_TIMEOUT_MS = 120_000;

export const BROWSER_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // No animations to draw in software (the workbench's and the web components' that ask for them).
  '--force-prefers-reduced-motion',
];

export function launchBrowser(tools: VsCodeTools): Promise<Browser> {
  return chromium.launch({ executablePath: tools.chromium, headless: true, args: BROWSER_ARGS });
}

/**
 * Opens `url` as a user would: code-server answers with its login page first (unless this browser
 * context has its session cookie already); the password is typed and submitted, and code-server
 * sends the page on to `url`. Nothing else is loaded on the way (a workbench opened and left would
 * leave its extension host running).
 */
export async function logIn(page: Page, url: string, password: string, options: { timeout?: number } = {}): Promise<void> {
  await page.goto(url, { waitUntil: 'domcontentloaded', ...options });
  if (!new URL(page.url()).pathname.endsWith('/login')) return; // the session cookie is already set
  await page.locator('input.password').fill(password);
  await page.locator('input.submit').click();
  try {
    await page.waitForURL((u) => !u.pathname.endsWith('/login'), { timeout: STEP_TIMEOUT_MS });
  } catch {
    const why = await page
      .locator('.error')
      .textContent()
      .catch(() => null);
    throw new Error(`the code-server login did not go through${why ? `: ${why.trim()}` : ''}`);
  }
}

/**
 * Logs in with code-server's password, opens the workbench and waits until its status bar shows.
 * Given a page's context instead of the browser, the new window shares that page's browser storage
 * (the workbench keeps secrets there) and its login.
 */
export async function openWorkbench(browser: Browser | BrowserContext, url: string, password: string): Promise<Page> {
  // A context of its own (not browser.newPage()'s), so that further windows can open in it.
  const context = 'newContext' in browser ? await browser.newContext({ viewport: { width: 1280, height: 900 } }) : browser;
  const page = await context.newPage();
  await logIn(page, url, password);
  await waitForWorkbench(page);
  return page;
}

/** Waits until the workbench (again, e.g. after a reload) shows its status bar. */
export async function waitForWorkbench(page: Page): Promise<void> {
  await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: 2 * STEP_TIMEOUT_MS });
}

/**
 * Runs a command from the palette (F1), retrying until the extension contributed it. F1 pressed
 * while a just-loaded workbench does not take keys yet opens nothing: it is pressed again.
 */
export async function runCommand(page: Page, title: string): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  const input = page.locator('.quick-input-widget .quick-input-box input');
  for (;;) {
    await page.keyboard.press('F1');
    if (
      await input.waitFor({ state: 'visible', timeout: 10_000 }).then(
        () => true,
        () => false,
      )
    ) {
      // The palette can close again under the fill (a terminal or an editor taking focus as it
      // opens): that is a retry, not a failure.
      const filled = await input.fill(`>${title}`, { timeout: 5000 }).then(
        () => true,
        () => false,
      );
      if (!filled) {
        if (Date.now() > deadline) throw new Error(`the command palette kept closing before "${title}" could be typed`);
        continue;
      }
      // The matching row, not the first one: fuzzy matching may rank another command higher.
      const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first();
      if (
        await row.waitFor({ state: 'visible', timeout: 3000 }).then(
          () => true,
          () => false,
        )
      ) {
        await row.click();
        return;
      }
      await page.keyboard.press('Escape');
    }
    if (Date.now() > deadline) throw new Error(`the command "${title}" never appeared in the command palette`);
  }
}

/** "Set Gateway API Key…" from the palette, typed into its password box. */
export async function setApiKey(page: Page, key: string, command = 'Set Gateway API Key'): Promise<void> {
  await runCommand(page, command);
  // The password box replaces the palette in the same widget: wait for it, not the palette's input.
  const keyBox = page.locator('.quick-input-widget .quick-input-box input[type="password"]');
  await keyBox.waitFor({ state: 'visible', timeout: STEP_TIMEOUT_MS });
  await keyBox.fill(key);
  // Enter is ignored while the box still validates the value: accept only once it settled.
  await page.waitForTimeout(500);
  await keyBox.press('Enter');
  await keyBox.waitFor({ state: 'hidden', timeout: STEP_TIMEOUT_MS });
}

/** The panel's document: an iframe inside VS Code's webview iframe, found by what it renders. */
export async function panelFrame(page: Page, selector = 'main', timeoutMs = 30_000): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const frame of page.frames()) {
      if (
        (await frame
          .locator(`#root ${selector}`)
          .count()
          .catch(() => 0)) > 0
      )
        return frame;
    }
    if (Date.now() > deadline) throw new Error(`the panel never rendered ${selector}`);
    await page.waitForTimeout(250);
  }
}

/** Clicks a button of the workbench's modal dialog (e.g. a confirmation) by its exact label. */
export async function answerDialog(page: Page, label: string): Promise<string> {
  const dialog = page.locator('.monaco-dialog-box');
  await dialog.waitFor({ state: 'visible', timeout: 15_000 });
  const text = (await dialog.innerText()).replace(/\s+/g, ' ').trim();
  await dialog.getByRole('button', { name: label, exact: true }).click();
  await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
  return text;
}

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts `node dist/gateway.js --demo --port P <extra>`; resolves once it listens. `onOutput`
 * gets what it prints (the banner, admissions and errors); `env` is added to its environment
 * (e.g. OFFPEAK_UPSTREAM_API_KEY, which is never a flag).
 */
export async function startGateway(
  host: string,
  extraArgs: string[],
  onOutput?: (text: string) => void,
  env: Record<string, string> = {},
): Promise<GatewayProcess> {
  const bundle = path.join(REPO_ROOT, 'dist', 'gateway.js');
  if (!existsSync(bundle)) throw new Error('dist/gateway.js is missing: run npm run build');
  const port = await freePort(host);
  const child = spawn(process.execPath, [bundle, '--demo', '--host', host, '--port', String(port), ...extraArgs], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(`it did not listen within 20 s`), 20_000);
    const fail = (why: string) => {
      clearTimeout(timer);
      void killProcessGroup(child);
      reject(new Error(`the demo gateway did not start (${why}):\n${output.slice(-2000)}`));
    };
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      output += text;
      onOutput?.(text);
      if (/listening on http/.test(output)) {
        clearTimeout(timer);
        resolve({ child, url: `http://${host}:${port}`, stop: () => killProcessGroup(child) });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) => fail(`it exited with ${code ?? signal}`));
  });
}

/** Moves keyboard focus out of a webview (F1 typed there does not reach the workbench). */
export async function focusWorkbench(page: Page): Promise<void> {
  await page.locator('.part.statusbar').click({ position: { x: 600, y: 10 } });
}

/** One setting's value in a settings.json as it is on disk now (undefined while absent or mid-write). */
function settingOnDisk(file: string, id: string): unknown {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>)[id];
  } catch {
    return undefined;
  }
}

/**
 * Sets a setting through the Settings editor, as a user types it, then returns to `backToTab`.
 * `remote`: in the window's Remote tab (machine-scoped settings live there in code-server).
 * `userData`: code-server's user-data dir; the editor is closed only once the setting's new value
 * is in its settings.json (the editor writes after a debounce, which a loaded machine stretches;
 * closing it sooner can drop the write).
 */
export async function setSettingInUi(
  page: Page,
  id: string,
  value: string,
  backToTab: string,
  options: { remote?: boolean; userData: string },
): Promise<void> {
  const file = path.join(options.userData, options.remote ? 'Machine' : 'User', 'settings.json');
  const before = JSON.stringify(settingOnDisk(file, id));
  await focusWorkbench(page);
  await runCommand(page, options.remote ? 'Preferences: Open Remote Settings' : 'Preferences: Open User Settings');
  const search = page.locator('.settings-editor .settings-header .suggest-input-container');
  await search.waitFor({ state: 'visible', timeout: 20_000 });
  await search.click();
  await page.keyboard.press('Control+A');
  // `@id:` finds that setting alone (a plain search for offPeak.agent also finds offPeak.check.whenAgentChangedIt).
  await page.keyboard.type(`@id:${id}`);
  await page.locator('.settings-editor .settings-count-widget', { hasText: '1 Setting Found' }).waitFor({ timeout: 20_000 });
  // A text setting has an input box, an enum setting a drop-down.
  const control = page.locator('.settings-editor .setting-item-control').locator('input, select').first();
  await control.waitFor({ state: 'visible', timeout: 20_000 });
  if ((await control.evaluate((e) => e.tagName)) === 'SELECT') await control.selectOption(value);
  else {
    await control.fill(value);
    await control.press('Tab');
  }
  // A drop-down shows labels, so its stored value is only known to have changed.
  for (const deadline = Date.now() + STEP_TIMEOUT_MS; ; await page.waitForTimeout(100)) {
    const now = settingOnDisk(file, id);
    if (now !== undefined && JSON.stringify(now) !== before) break;
    if (Date.now() > deadline) throw new Error(`${id} was not written to ${file} (it holds ${JSON.stringify(now)})`);
  }
  // Recent workbenches show Settings as a modal over the editors: close it, then show the tab.
  await page.keyboard.press('Escape');
  const settings = page.locator('.settings-editor');
  if (
    !(await settings.waitFor({ state: 'hidden', timeout: 3000 }).then(
      () => true,
      () => false,
    ))
  ) {
    await runCommand(page, 'View: Close Editor');
    await settings.waitFor({ state: 'hidden', timeout: 10_000 });
  }
  await page.locator('.tabs-container .tab', { hasText: backToTab }).first().click();
}

/** "Preferences: Color Theme" from the palette. */
export async function setColorTheme(page: Page, theme: string): Promise<void> {
  await focusWorkbench(page);
  await runCommand(page, 'Preferences: Color Theme');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(theme);
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: theme }).first();
  await row.waitFor({ timeout: 10_000 });
  await row.click();
  await input.waitFor({ state: 'hidden', timeout: 10_000 });
}
