// `npm run test:ui:walkthrough`: the first-run walkthrough (docs/flows.md#first-run) by real clicks
// inside a real VS Code (code-server + headless Chromium), with a reference gateway (team mode):
//   1. the empty panel's line says the mode, the agent and whose credential; its "New here?" link
//      opens the walkthrough, whose mode and credential steps are complete (the key is set); the
//      credential step shown is team mode's (Set Gateway API Key…, no model key);
//   2. "Set the hours" opens the machine-scoped setting where this window can change it: code-server
//      is a remote (browser) window, so the Settings editor's Remote tab, never "No Settings Found";
//   3. "Queue a task" opens the panel with its form's prompt focused (not the palette); a task
//      queued there completes; "Queue a first task" is then complete, "The morning" is not until
//      Review changes on the card opened the task's diff.
// Screenshots at 1400 px and 500 px go to test/artifacts/panel-tour-walkthrough/.
//
// Stand-in for the outside world: a scripted fake Anthropic upstream (test/fixtures/
// fake-anthropic-upstream.ts, a TEST FIXTURE) behind a reference gateway.
//
// usage: node --import tsx scripts/panel-tour-walkthrough.ts [--no-build] [--keep]
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { FakeAnthropicUpstream } from '../test/fixtures/fake-anthropic-upstream';
import { gitWorkspace, runTour, until, type Tour } from './vscode/tour';
import { NARROW_PANEL, WIDE_WINDOW } from './vscode/panel-checks';
import { runCommand, STEP_TIMEOUT_MS } from './vscode/workbench';

const STEPS = {
  mode: 'Personal or team',
  agent: 'Agent and credential',
  hours: 'When tasks run',
  firstTask: 'Queue a first task',
  morning: 'The morning: review and merge',
};

/** The walkthrough's steps that VS Code shows checked (its step buttons' aria-checked), by title. */
async function completeSteps(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('.getting-started-step[aria-checked="true"]')].map((s) =>
      (s.querySelector('.step-title')?.textContent ?? s.textContent ?? '').trim(),
    ),
  );
}

/** Opens a walkthrough step by its title and clicks one of its buttons (a link on a line of its own). */
async function clickStepButton(page: Page, step: string, button: string): Promise<void> {
  await page.locator('.getting-started-step', { hasText: step }).first().click();
  await page.locator('.getting-started-step.expanded .button-container .monaco-button', { hasText: button }).first().click();
}

/** The buttons of the expanded walkthrough step. */
async function stepButtons(page: Page, step: string): Promise<string[]> {
  await page.locator('.getting-started-step', { hasText: step }).first().click();
  const buttons = page.locator('.getting-started-step.expanded .button-container .monaco-button');
  await buttons.first().waitFor({ timeout: STEP_TIMEOUT_MS });
  return (await buttons.allTextContents()).map((t) => t.trim());
}

async function openWalkthroughFromPalette(page: Page): Promise<void> {
  await runCommand(page, 'Welcome: Open Walkthrough');
  await page.locator('.quick-input-widget').getByText('Off-Peak Tasks: first run').first().click();
  await page.getByText('Off-Peak Tasks: first run').first().waitFor({ timeout: STEP_TIMEOUT_MS });
}

/** Screenshots at 1400 px, then at 500 px with the side bar closed (the walkthrough gets the narrow window, as a user would give it). */
async function shotAtWidths(page: Page, tour: Tour, stage: string): Promise<void> {
  const before = page.viewportSize() ?? { width: 1280, height: 900 };
  await page.setViewportSize({ width: WIDE_WINDOW, height: before.height });
  await page.waitForTimeout(600);
  await tour.shot(`${stage}-${WIDE_WINDOW}px-window`);
  if (await page.locator('.part.sidebar').isVisible()) await runCommand(page, 'View: Close Primary Side Bar');
  await page.setViewportSize({ width: NARROW_PANEL, height: before.height });
  await page.waitForTimeout(600);
  await tour.shot(`${stage}-${NARROW_PANEL}px-window`);
  await page.setViewportSize(before);
  if (!(await page.locator('.part.sidebar').isVisible())) await runCommand(page, 'View: Toggle Primary Side Bar Visibility');
}

runTour('panel-tour-walkthrough', async ({ stateDir, log, gateway, codeServer, openPanel, stopLater }) => {
  const { workspace } = gitWorkspace(stateDir, { 'README.md': '# walkthrough tour\n' });
  // The agent writes hello.txt, then says it is done: a change to review.
  const upstream = await FakeAnthropicUpstream.start();
  stopLater(() => upstream.close());
  upstream.setDefaultReply((request) => {
    const messages = (request.body as { messages?: { role: string }[] }).messages ?? [];
    return messages.some((m) => m.role === 'assistant')
      ? { kind: 'text', text: 'Done.' }
      : { kind: 'tool_use', name: 'write_file', input: { path: 'hello.txt', content: 'hello\n' } };
  });
  const gw = await gateway(['--log-level', 'warn', '--upstream-url', upstream.url], { OFFPEAK_UPSTREAM_API_KEY: 'upstream-secret' });
  const server = await codeServer({
    userSettings: { 'workbench.colorTheme': 'Default Dark Modern', 'git.enabled': false },
    machineSettings: { 'offPeak.gatewayUrl': gw.url, 'offPeak.agent': 'reference' },
  });
  const { page, tour } = await openPanel(server, workspace);
  // The secondary side bar is empty here (chat is off): hidden, so it takes no width from the walkthrough.
  if (await page.locator('.part.auxiliarybar').isVisible()) await runCommand(page, 'View: Hide Secondary Side Bar');

  // --- 1. the line, the empty state's link, the walkthrough ------------------------------------
  const line = tour.frame.locator('[data-testid="setup-line"]');
  await line.waitFor();
  const text = (await line.textContent()) ?? '';
  log(`setup line: ${text}`);
  assert.match(
    text,
    /^Team gateway 127\.0\.0\.1:\d+ · Reference agent · the gateway's account \(your gateway API key\) · tasks run when the gateway admits them/,
  );
  await tour.shot('empty-panel-with-setup-line');
  await tour.frame.locator('[data-testid="open-walkthrough"]').click();
  await page.getByText('Off-Peak Tasks: first run').first().waitFor({ timeout: STEP_TIMEOUT_MS });
  await until(
    'the mode and credential steps complete',
    async () => {
      const done = await completeSteps(page);
      return done.some((t) => t.includes(STEPS.mode)) && done.some((t) => t.includes(STEPS.agent));
    },
    STEP_TIMEOUT_MS,
  );
  log(`complete after the key: ${(await completeSteps(page)).join(' | ')}`);
  // item 5: team mode's credential step is the gateway key's, and the personal one is not shown.
  const credentialButtons = await stepButtons(page, STEPS.agent);
  log(`credential step buttons: ${credentialButtons.join(' | ')}`);
  assert.ok(credentialButtons.includes('Set Gateway API Key…'), credentialButtons.join(' | '));
  assert.ok(!credentialButtons.some((b) => /Model API Key/.test(b)), credentialButtons.join(' | '));
  assert.equal(await page.locator('.getting-started-step', { hasText: STEPS.agent }).count(), 1, 'one credential step in team mode');
  await shotAtWidths(page, tour, 'walkthrough-key-set');

  // --- 2. "Set the hours": the machine setting where this (browser, remote) window changes it --
  await clickStepButton(page, STEPS.hours, 'Set the hours');
  const settings = page.locator('.settings-editor');
  await settings.waitFor({ timeout: STEP_TIMEOUT_MS });
  const hoursItem = settings.locator('.setting-item-contents', { hasText: 'Hours' }).first();
  await hoursItem.waitFor({ timeout: STEP_TIMEOUT_MS });
  assert.equal(await settings.getByText('No Settings Found').isVisible(), false, 'the setting is found on the tab opened');
  const tab = ((await settings.locator('.settings-tabs-widget .action-label.checked').first().textContent()) ?? '').trim();
  log(`"Set the hours" opened the Settings editor on the ${tab} tab`);
  assert.match(tab, /^Remote/, 'the Remote tab: machine-scoped settings of a remote window live there');
  await tour.shot('set-the-hours-remote-settings');
  // This workbench opens Settings as a modal editor: its own close button, else Escape.
  const close = page.locator('.monaco-modal-editor-block .codicon-close, .monaco-modal-editor-block [aria-label^="Close"]').first();
  if (await close.isVisible().catch(() => false)) await close.click();
  else await page.keyboard.press('Escape');
  await settings.waitFor({ state: 'hidden', timeout: STEP_TIMEOUT_MS });

  // --- 3. "Queue a task": the panel's form, focused; the task; then review ---------------------
  await openWalkthroughFromPalette(page);
  await clickStepButton(page, STEPS.firstTask, 'Queue a task');
  await tour.panel('[data-testid="create-form"]');
  await until("the form's prompt has the focus", async () =>
    tour.frame.evaluate(
      () =>
        document.activeElement?.closest('[data-testid="prompt"]') !== null ||
        document.activeElement?.getAttribute('data-testid') === 'prompt',
    ),
  );
  assert.equal(await page.locator('.quick-input-widget').isVisible(), false, 'no palette input opened');
  await tour.shot('queue-a-task-focuses-the-form');
  const prompt = 'Walkthrough tour: create hello.txt';
  await tour.create(prompt, 'Accept edits');
  await tour.phaseOf(prompt, 'Completed', 180_000);
  await tour.shot('first-task-completed');
  await openWalkthroughFromPalette(page);
  await until(
    'the first task step completes',
    async () => (await completeSteps(page)).some((t) => t.includes(STEPS.firstTask)),
    STEP_TIMEOUT_MS,
  );
  let done = await completeSteps(page);
  log(`complete after the first task: ${done.join(' | ')}`);
  assert.ok(
    done.some((t) => t.includes(STEPS.hours)),
    'the hours step is complete in team mode (the gateway decides)',
  );
  assert.ok(!done.some((t) => t.includes(STEPS.morning)), 'the morning step waits for a review or merge (a result seen is not one)');
  await shotAtWidths(page, tour, 'walkthrough-after-first-task');
  await runCommand(page, 'Open Off-Peak Tasks');
  await tour.panel('main');
  await tour.click(prompt, 'review-changes');
  await page.locator('.tabs-container .tab', { hasText: 'hello.txt' }).first().waitFor({ timeout: 60_000 });
  await openWalkthroughFromPalette(page);
  await until(
    'the morning step completes after the review',
    async () => (await completeSteps(page)).some((t) => t.includes(STEPS.morning)),
    STEP_TIMEOUT_MS,
  );
  done = await completeSteps(page);
  log(`complete after the review: ${done.join(' | ')}`);
  await shotAtWidths(page, tour, 'walkthrough-after-review');
});
