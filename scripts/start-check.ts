// `npm start -- --check` (`npm run test:ui`) and `npm start -- --personal --check`
// (`npm run test:ui:personal`): the smoke test of what `npm start` serves, done as a user would,
// with keyboard and real clicks in headless Chromium, in a browser of its own: the user's window,
// not one the start used (it uses none). Team mode sets the demo API key through the command
// palette; personal mode sets nothing: the key the start handed over must already be there.
// Either way it opens the panel, types a task into the webview's form and clicks "Queue task"
// with the form's defaults, waits for its card to say Completed, for its own branch (named, or removed as empty) and its
// History row, then removes the History row and deletes the card with clicks.
import { cpSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import type { Browser, Frame, Locator } from 'playwright-core';
import { EMPTY_WORKTREE_NOTE } from '../src/agent/workplace/task-workplace';
import { modelKeyHandoverPath } from '../src/personal/model-key-handover';
import { TaskDb } from './vscode/tour';
import { REPO_ROOT, type VsCodeTools } from './vscode/tools';
import { answerDialog, launchBrowser, openWorkbench, panelFrame, runCommand, setApiKey, STEP_TIMEOUT_MS } from './vscode/workbench';

/** The demo gateway's default user key (`--demo-key`); `npm start` does not change it. */
const DEMO_KEY = 'opk-demo-key-0000';
const PROMPT = 'Say hello from the npm start check';

export interface PersonalCheck {
  modelApiKey: string;
  /** The scripted stand-in's record of the keys its model requests carried (absent for a real API). */
  modelRequestKeys?: () => (string | undefined)[];
}

export interface CheckOptions {
  tools: VsCodeTools;
  url: string;
  password: string;
  /** The served VS Code's user-data folder. */
  userData: string;
  log: (msg: string) => void;
  /** Team mode with the demo gateway running. */
  gateway: boolean;
  personal?: PersonalCheck;
  /** The folder the window opened (the demo repository: its tasks run on their own branch). */
  workspace: string;
}

/**
 * The card's last word on the task's branch once it settles: its `offpeak/…` name (and the branch is
 * in the repository), or the empty-worktree note (and no `offpeak/…` branch is left).
 */
async function ownBranchOf(card: Locator, workspace: string): Promise<string> {
  const branch = card.locator('[data-testid="branch"]');
  const note = card.locator('[data-testid="isolation-note"]', { hasText: EMPTY_WORKTREE_NOTE });
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  const offpeakBranches = () =>
    execFileSync('git', ['for-each-ref', '--format=%(refname:short)', 'refs/heads/offpeak/'], { cwd: workspace, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
  for (;;) {
    if ((await note.count()) > 0) {
      const left = offpeakBranches();
      if (left.length > 0) throw new Error(`the card says its branch was removed, but ${left.join(', ')} is left`);
      return 'it changed nothing, and the card and the repository agree its branch was removed';
    }
    // The branch may go between reading the card and the repository (it was empty): look again.
    const name = ((await branch.textContent({ timeout: 1000 }).catch(() => '')) ?? '').trim();
    if (name.startsWith('offpeak/') && offpeakBranches().includes(name)) return name;
    if (Date.now() > deadline)
      throw new Error(`the card names the branch "${name}"; the repository has ${offpeakBranches().join(', ') || 'none'}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Waits until the panel's setup line says the model API key is set (the hand-over reached this window). */
async function waitForModelKey(frame: Frame): Promise<string> {
  const line = frame.locator('[data-testid="setup-line"]');
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  let text = '';
  for (;;) {
    text = ((await line.textContent({ timeout: STEP_TIMEOUT_MS }).catch(() => '')) ?? '').trim();
    if (/your model API key(?! \(not set\))/.test(text)) return text;
    if (Date.now() > deadline)
      throw new Error(`the user's window does not have the model API key the start handed over (its panel says: "${text}")`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Runs one step of the check; a failure names the step (a browser-automation error alone does not say where). */
async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw new Error(`${name}: ${((err as Error).message ?? String(err)).split('\n')[0]}`);
  }
}

export async function checkWorkbench(options: CheckOptions): Promise<void> {
  const { log, personal } = options;
  const browser = await step('start the headless browser', () => launchBrowser(options.tools));
  try {
    const page = await step('log in and load the workbench', () => openWorkbench(browser, options.url, options.password));
    log('check: logged in with the printed password in a browser of its own; workbench loaded');
    // The key first: F1 typed while the webview has focus does not reach the workbench.
    if (options.gateway) await step('set the demo API key from the command palette', () => setApiKey(page, DEMO_KEY));
    await step('open the panel with "Open Off-Peak Tasks"', async () => {
      await runCommand(page, 'Open Off-Peak Tasks');
      await page
        .locator('.tabs-container .tab', { hasText: 'Off-Peak Tasks' })
        .first()
        .waitFor({ state: 'visible', timeout: STEP_TIMEOUT_MS });
    });
    log('check: "Open Off-Peak Tasks" opened the Off-Peak Tasks panel');
    if (!options.gateway && !personal) return;

    const frame = await step("see the panel's form", () => panelFrame(page, '[data-testid="create-form"]', STEP_TIMEOUT_MS));
    log('check: the panel rendered its form');
    if (personal) log(`check: the panel says "${await waitForModelKey(frame)}"`);
    const card = frame.locator('li.card', { hasText: PROMPT });
    await step('queue a task with the form', async () => {
      await frame.locator('[data-testid="prompt"]').click();
      await page.keyboard.type(PROMPT);
      // Create is enabled once the key is known and the gateway's availability says yes: the form's
      // "why not" hint disappears then.
      await frame.locator('[data-testid="availability"]').waitFor({ state: 'detached', timeout: STEP_TIMEOUT_MS });
      await frame.locator('[data-testid="submit"]').click();
    });
    await step('see the card go to Completed', () =>
      card.locator('[data-testid="phase"]', { hasText: 'Completed' }).waitFor({ timeout: 2 * STEP_TIMEOUT_MS }),
    );
    log('check: clicked "Queue task"; the card went to Completed');
    // The form's defaults on the demo repository: the task ran on its own branch, which the card
    // names, or (the check's echo script changes nothing) which was removed as empty, as the card
    // says once the task has ended (docs/flows.md#isolation). Either way no other branch changed.
    const ownBranch = await step('see where the task ran', () => ownBranchOf(card, options.workspace));
    log(`check: with the form's defaults it ran on its own branch: ${ownBranch}`);
    if (personal) await checkPersonal(personal, options.userData, log);
    const history = frame.locator('.history-row', { hasText: PROMPT });
    await step('remove the History row with a click', async () => {
      await history.locator('.status', { hasText: 'Completed' }).waitFor({ timeout: STEP_TIMEOUT_MS });
      await history.locator('[data-testid="delete-history"]').click();
      await history.waitFor({ state: 'detached', timeout: STEP_TIMEOUT_MS });
    });
    log('check: the History row was removed with a click');
    await step('delete the card with a click', async () => {
      await card.locator('[data-testid="delete"]').click();
      // The reference agent's session transcript stays unless the session is deleted too (docs/flows.md#cancel-delete-history).
      const question = await answerDialog(page, 'Delete Task');
      if (!/transcript .*is kept unless/.test(question)) throw new Error(`Delete asked "${question}", not whether the session goes too`);
      await card.waitFor({ state: 'detached', timeout: STEP_TIMEOUT_MS });
    });
    log('check: the card was deleted with a click (its session kept)');
  } catch (err) {
    await keepFailure(browser, options);
    throw err;
  } finally {
    await browser.close();
  }
}

/** A failed check leaves a screenshot and the extension's log in test/artifacts/npm-start-check/ (CI keeps them). */
async function keepFailure(browser: Browser, options: CheckOptions): Promise<void> {
  const dir = path.join(REPO_ROOT, 'test', 'artifacts', 'npm-start-check');
  mkdirSync(dir, { recursive: true });
  const mode = options.personal ? 'personal' : 'team';
  const page = browser.contexts()[0]?.pages()[0];
  await page?.screenshot({ path: path.join(dir, `${mode}-failure.png`) }).catch(() => undefined);
  const logs = path.join(options.userData, 'logs');
  const extensionLog = existsSync(logs)
    ? readdirSync(logs, { recursive: true, encoding: 'utf8' }).find((f) => f.endsWith('Off-Peak Tasks.log'))
    : undefined;
  if (extensionLog) cpSync(path.join(logs, extensionLog), path.join(dir, `${mode}-failure-extension.log`));
  options.log(`check: failed; its screenshot and the extension's log are in ${path.relative(REPO_ROOT, dir)}`);
}

/**
 * Personal mode, after the first task completed: its model requests carried the handed-over key,
 * the hand-over file is gone, and this browser's window is the only window on the task database
 * (no window of the start's own holds the lease or runs tasks).
 */
async function checkPersonal(personal: PersonalCheck, userData: string, log: (msg: string) => void): Promise<void> {
  const keys = personal.modelRequestKeys?.();
  if (keys) {
    if (keys.length === 0 || keys.some((key) => key !== personal.modelApiKey))
      throw new Error(`the scripted model API did not get the handed-over key with every request (${keys.length} requests)`);
    log(`check: the scripted model API got the handed-over key with each of its ${keys.length} model request(s)`);
  }
  const db = await TaskDb.open(userData, { personal: true });
  if (existsSync(modelKeyHandoverPath(db.storageDir)))
    throw new Error('the model API key hand-over file is still there after the first window started');
  const windows = db.windows();
  if (windows.length !== 1)
    throw new Error(
      `${windows.length} windows are registered on the task database (expected only the user's window): ${windows.map((w) => `pid ${w.pid}`).join(', ')}`,
    );
  const lease = db.lease();
  if (lease?.pid !== undefined && lease.pid !== windows[0]!.pid)
    throw new Error(`the task lease is held by pid ${lease.pid}, not by the user's window (pid ${windows[0]!.pid})`);
  log(
    `check: the hand-over file is gone; the user's window (extension host pid ${windows[0]!.pid}) is the only window and holds the lease`,
  );
}
