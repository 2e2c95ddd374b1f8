// `npm run test:ui:walkthrough`: the first-run walkthrough (docs/flows.md#first-run) by real clicks
// inside a real VS Code (code-server + headless Chromium), with a demo gateway (team mode):
//   1. the empty panel's line says the mode, the agent and whose credential; its "New here?" link
//      opens the walkthrough, whose mode and credential steps are complete (the key is set);
//   2. a task queued from the panel completes; the walkthrough's "Queue a first task" and "The
//      morning" steps are then complete too (the panel showed its result).
// Screenshots at 1400 px and 500 px go to test/artifacts/panel-tour-walkthrough/.
//
// usage: node --import tsx scripts/panel-tour-walkthrough.ts [--no-build] [--keep]
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { runTour, until, type Tour } from './vscode/tour';
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

runTour('panel-tour-walkthrough', async ({ stateDir, log, gateway, codeServer, openPanel }) => {
  const workspace = path.join(stateDir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(path.join(workspace, 'README.md'), '# walkthrough tour\n');
  const gw = await gateway(['--demo', '--demo-script', 'echo', '--log-level', 'warn']);
  const server = await codeServer({
    userSettings: { 'workbench.colorTheme': 'Default Dark Modern' },
    // The demo model's script uses the reference agent's tools.
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
  await shotAtWidths(page, tour, 'walkthrough-key-set');

  // --- 2. a first task, then the walkthrough again -------------------------------------------
  await runCommand(page, 'Open Off-Peak Tasks');
  await tour.panel('main');
  const prompt = 'Walkthrough tour: create hello.txt';
  await tour.create(prompt);
  await tour.phaseOf(prompt, 'Completed', 180_000);
  await tour.shot('first-task-completed');
  await runCommand(page, 'Welcome: Open Walkthrough');
  await page.locator('.quick-input-widget').getByText('Off-Peak Tasks: first run').first().click();
  await page.getByText('Off-Peak Tasks: first run').first().waitFor({ timeout: STEP_TIMEOUT_MS });
  await until(
    'the first task and morning steps complete',
    async () => {
      const done = await completeSteps(page);
      return done.some((t) => t.includes(STEPS.firstTask)) && done.some((t) => t.includes(STEPS.morning));
    },
    STEP_TIMEOUT_MS,
  );
  const done = await completeSteps(page);
  log(`complete after the first task: ${done.join(' | ')}`);
  assert.ok(
    done.some((t) => t.includes(STEPS.hours)),
    'the hours step is complete in team mode (the gateway decides)',
  );
  await shotAtWidths(page, tour, 'walkthrough-after-first-task');
});
