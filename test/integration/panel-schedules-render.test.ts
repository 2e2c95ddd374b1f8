// The panel's schedules (docs/flows.md#schedules-and-chains) as Chromium renders them, against the
// real host: the webview bundle built from source in headless Chromium, its messages going to the
// real PanelController over the real TaskService (a sql.js file, the real reference gateway on
// loopback), and the controller's snapshots coming back. The create form's Repeat sends
// `createSchedule` with the rule the fields say; the Schedules section shows what the host saved
// and sends Pause/Resume, Edit (future runs) and Delete (asked first); a run it queued late names it
// on its card with "(catch-up)"; a skipped chain step says why on its card; at a 106 px panel nothing
// scrolls sideways.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { machineTimeZone } from '../../src/core/zoned-time';
import { PanelController } from '../../src/panel/panel-controller';
import { createServiceBackend } from '../../src/panel/service-backend';
import { startRunning, taskInput, World, type Window } from './service-harness';
import { BARE_HOST, NO_ASKS } from './panel-link';
import { buildPanelPage, launchChromium } from './panel-page';

/** A zone no CI machine is set to: the webview's, apart from the host's. */
const WEBVIEW_ZONE = 'Pacific/Chatham';

interface Sent {
  method: string;
  params: Record<string, unknown>;
}

describe('panel schedules in Chromium against the real host: Repeat, the Schedules section, a skipped step', function () {
  this.timeout(180_000);
  let world: World;
  let w: Window;
  let dir: string;
  let browser: Browser;
  let page: Page;
  let controller: PanelController;
  /** The requests the webview sent, in order. */
  const sent: Sent[] = [];
  /** Answers for the host's next confirmations (true: the user chose the action). */
  const confirmAnswers: boolean[] = [];

  const row = (title: string) =>
    page.locator('li.schedule-row', { has: page.locator('[data-testid="schedule-title"]', { hasText: title }) });
  const lastSent = (method: string) => [...sent].reverse().find((m) => m.method === method)?.params;

  /** Picks an option of a vscode-single-select by its label. */
  async function choose(scope: string, testid: string, label: string): Promise<void> {
    const select = page.locator(`${scope} [data-testid="${testid}"]`);
    await select.click();
    await select.locator('[role="option"]', { hasText: label }).first().click();
  }

  async function fillCreateForm(title: string, prompt: string): Promise<void> {
    if (await page.locator('[data-testid="new-task"]').isVisible()) await page.locator('[data-testid="new-task"]').click();
    const form = page.locator('[data-testid="create-form"]');
    await form.locator('[data-testid="title"] input').fill(title);
    await form.locator('[data-testid="prompt"] textarea').fill(prompt);
  }

  before(async () => {
    world = await World.start();
    w = await world.openWindow();
    await w.service.create(taskInput({ title: 'A queued task', workspacePath: world.dir }));
    const backend = createServiceBackend(
      w.service,
      w.store,
      {
        ...BARE_HOST,
        workspaces: () => [{ name: 'ws', path: world.dir, identity: null }],
        configs: () => ({ exposed: true, planEligible: true, upgradeHint: null, upgradeUrl: null }),
        confirm: async (question) => {
          const answer = confirmAnswers.shift();
          assert.ok(answer !== undefined, `an unexpected confirmation: ${question.message}`);
          return answer;
        },
      },
      NO_ASKS,
    );

    ({ dir } = await buildPanelPage('offpeak-schedules-', 'window.toHost(m);'));
    browser = await launchChromium();
    // The page's zone is not the host's: a remote window's webview runs on another machine than its extension host.
    page = await browser.newPage({ viewport: { width: 1000, height: 1400 }, timezoneId: WEBVIEW_ZONE });
    // The webview's messages go to the controller as VS Code would pass them; its answers come back as message events.
    const listeners: ((message: unknown) => void)[] = [];
    await page.exposeFunction('toHost', (message: { type: string; method?: string; params?: Record<string, unknown> }) => {
      if (message.type === 'request') sent.push({ method: message.method!, params: message.params! });
      for (const listener of listeners) listener(message);
    });
    controller = new PanelController(
      {
        visible: () => true,
        postMessage: (m) =>
          void page.evaluate((data) => window.dispatchEvent(new MessageEvent('message', { data })), m).catch(() => undefined),
        onDidReceiveMessage: (listener) => {
          listeners.push(listener);
          return { dispose: () => listeners.splice(listeners.indexOf(listener), 1) };
        },
      },
      backend,
      world.clock,
    );
    await page.goto(pathToFileURL(path.join(dir, 'panel.html')).href);
    await page.locator('li.card').first().waitFor();
  });
  after(async () => {
    controller?.dispose();
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await world?.close();
  });

  it('Repeat Daily at 02:00: "Not before" and "After" go, the hint names the host\'s zone, the button says "Create schedule", createSchedule carries the fields and the rule; the section shows "Every day at 02:00" and "Next: … 02:00"', async () => {
    await fillCreateForm('Nightly deps', 'Update the dependencies and fix what breaks');
    const form = page.locator('[data-testid="create-form"]');
    assert.equal(await form.locator('[data-testid="after-task"]').count(), 1, 'a single task may wait for another');
    assert.equal(await page.locator('[data-testid="schedules"]').count(), 0, 'no Schedules section while there are none');
    await choose('[data-testid="create-form"]', 'repeat', 'Daily');
    await form.locator('[data-testid="repeat-time"] input').fill('02:00');
    assert.equal(await form.locator('[data-testid="not-before"]').count(), 0);
    assert.equal(await form.locator('[data-testid="after-task"]').count(), 0);
    const hint = await form.locator('[data-testid="repeat-hint"]').innerText();
    assert.ok(hint.includes(`this machine's clock (${machineTimeZone()})`), `the hint names the extension host's zone: ${hint}`);
    assert.equal((await form.locator('[data-testid="submit"]').innerText()).trim(), 'Create schedule');
    await form.locator('[data-testid="submit"]').click();
    await row('Nightly deps').waitFor();
    const params = lastSent('createSchedule') as { draft: Record<string, unknown>; rule: unknown };
    assert.deepEqual(params.rule, { kind: 'daily', at: 120 });
    assert.equal(params.draft.title, 'Nightly deps');
    assert.equal(params.draft.prompt, 'Update the dependencies and fix what breaks');
    assert.equal(params.draft.workspacePath, world.dir);
    assert.equal(sent.filter((m) => m.method === 'createTask').length, 0, 'no single task was queued');
    assert.equal(await row('Nightly deps').locator('[data-testid="schedule-rule"]').innerText(), 'Every day at 02:00');
    assert.match(await row('Nightly deps').locator('[data-testid="schedule-next"]').innerText(), /^Next: .*02:00$/);
  });

  it('On weekdays: no day checked says so, and neither the button nor Enter sends it; Mon, Wed, Fri at 07:30 is sent as those days and shown in words', async () => {
    await fillCreateForm('Triage flaky tests', 'Triage the flaky tests');
    const form = page.locator('[data-testid="create-form"]');
    await choose('[data-testid="create-form"]', 'repeat', 'On weekdays');
    for (const day of [1, 2, 3, 4, 5]) await form.locator(`[data-testid="repeat-day-${day}"] input`).uncheck();
    assert.equal(await form.locator('[data-testid="repeat-problem"]').innerText(), 'Choose at least one weekday.');
    assert.notEqual(await form.locator('[data-testid="submit"]').getAttribute('disabled'), null, 'a rule without days cannot be sent');
    const before = sent.length;
    await form.locator('[data-testid="title"] input').press('Enter');
    assert.equal(sent.length, before, 'Enter does not send it either');
    for (const day of [1, 3, 5]) await form.locator(`[data-testid="repeat-day-${day}"] input`).check();
    await form.locator('[data-testid="repeat-time"] input').fill('07:30');
    await form.locator('[data-testid="submit"]').click();
    await row('Triage flaky tests').waitFor();
    assert.deepEqual((lastSent('createSchedule') as { rule: unknown }).rule, { kind: 'weekdays', days: [1, 3, 5], at: 450 });
    assert.equal(await row('Triage flaky tests').locator('[data-testid="schedule-rule"]').innerText(), 'Mon, Wed, Fri at 07:30');
  });

  it('Pause sends pauseSchedule and the row says "Paused"; Resume brings "Next: …" back', async () => {
    const nightly = row('Nightly deps');
    await nightly.locator('[data-testid="schedule-pause"]').click();
    await nightly.locator('[data-testid="schedule-next"]', { hasText: 'Paused' }).waitFor();
    assert.deepEqual(lastSent('pauseSchedule'), { id: (lastSent('pauseSchedule') as { id: string }).id, paused: true });
    await nightly.locator('[data-testid="schedule-resume"]').click();
    await nightly.locator('[data-testid="schedule-next"]', { hasText: /^Next: / }).waitFor();
    assert.equal((lastSent('pauseSchedule') as { paused: boolean }).paused, false);
  });

  it('Edit: the form is filled from the schedule, says it applies to future runs, and Save sends editSchedule; the row shows the new time', async () => {
    const nightly = row('Nightly deps');
    await nightly.locator('[data-testid="schedule-edit"]').click();
    const form = nightly.locator('[data-testid="schedule-form"]');
    assert.equal(await form.locator('[data-testid="prompt"] textarea').inputValue(), 'Update the dependencies and fix what breaks');
    assert.equal(await form.locator('[data-testid="repeat-time"] input').inputValue(), '02:00');
    assert.match(await form.locator('[data-testid="future-runs"]').innerText(), /future runs/);
    await form.locator('[data-testid="repeat-time"] input').fill('03:15');
    assert.equal((await form.locator('[data-testid="submit"]').innerText()).trim(), 'Save schedule');
    await form.locator('[data-testid="submit"]').click();
    await nightly.locator('[data-testid="schedule-rule"]', { hasText: 'Every day at 03:15' }).waitFor();
    const params = lastSent('editSchedule') as { rule: unknown; draft: { prompt: string } };
    assert.deepEqual(params.rule, { kind: 'daily', at: 195 });
    assert.equal(params.draft.prompt, 'Update the dependencies and fix what breaks');
    assert.equal(await nightly.locator('[data-testid="schedule-form"]').count(), 0, 'the form closes once saved');
  });

  it('Edit of the weekday schedule: its days come checked, and Weekly on Sunday is sent as that day', async () => {
    const triage = row('Triage flaky tests');
    await triage.locator('[data-testid="schedule-edit"]').click();
    const scope = '[data-testid="schedule-form"]';
    const form = page.locator(scope);
    const checked = await Promise.all([0, 1, 2, 3, 4, 5, 6].map((d) => form.locator(`[data-testid="repeat-day-${d}"] input`).isChecked()));
    assert.deepEqual(checked, [false, true, false, true, false, true, false], 'Mon, Wed, Fri');
    const repeat = form.locator('[data-testid="repeat"]');
    await repeat.click();
    assert.equal(await repeat.locator('[role="option"]', { hasText: 'Weekly' }).count(), 1);
    assert.equal(await repeat.locator('[role="option"]', { hasText: 'Once' }).count(), 0, 'a schedule cannot become one task');
    await repeat.locator('[role="option"]', { hasText: 'Weekly' }).first().click();
    await choose(scope, 'repeat-day', 'Sunday');
    await form.locator('[data-testid="submit"]').click();
    await triage.locator('[data-testid="schedule-rule"]', { hasText: 'Every Sunday at 07:30' }).waitFor();
    assert.deepEqual((lastSent('editSchedule') as { rule: unknown }).rule, { kind: 'weekly', day: 0, at: 450 });
  });

  it('a 106 px and a 260 px panel: the Schedules rows stay inside the panel (nothing scrolls sideways), every action inside its row; so does the form as a schedule at 106 px', async () => {
    for (const width of [106, 260]) {
      await page.setViewportSize({ width, height: 1400 });
      const seen = (await page.evaluate(`(() => {
        const width = document.documentElement.clientWidth;
        const rows = [...document.querySelectorAll('li.schedule-row')];
        const past = rows.flatMap((r) => [...r.querySelectorAll('button.action, .title, .rule, .next, .last-run')].filter((el) => el.getBoundingClientRect().right > r.getBoundingClientRect().right + 0.5).map((el) => el.className + ' ' + el.textContent));
        return { rows: rows.length, sideways: document.documentElement.scrollWidth - width, past };
      })()`)) as { rows: number; sideways: number; past: string[] };
      assert.equal(seen.rows, 2);
      assert.deepEqual(seen.past, [], `at ${width} px`);
      assert.equal(seen.sideways, 0, `the panel scrolls ${seen.sideways} px sideways at ${width} px`);
    }
    // The create form as a schedule ("Create schedule" is the widest button) fits too.
    await page.setViewportSize({ width: 106, height: 1400 });
    await page.locator('[data-testid="new-task"]').click();
    await choose('[data-testid="create-form"]', 'repeat', 'Daily');
    await page.locator('[data-testid="create-form"] [data-testid="submit"]', { hasText: 'Create schedule' }).waitFor();
    const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.equal(sideways, 0, `with the create form open the panel scrolls ${sideways} px sideways at 106 px`);
    await page.locator('[data-testid="create-form"] [data-testid="discard"]').click();
    await page.setViewportSize({ width: 1000, height: 1400 });
  });

  it('a run queued late (the machine slept through its time) names its schedule on its card with "(catch-up)", and the row says what the last run did', async () => {
    // A day passes with no timer firing (the machine asleep), then the lease holder's next tick.
    world.clock.advance(24 * 3600_000);
    await world.advance(31_000);
    const card = page.locator('li.card', { has: page.locator('[data-testid="schedule-run"]', { hasText: /^\s*Nightly deps · / }) });
    await card.waitFor();
    assert.equal((await card.locator('[data-testid="catch-up"]').innerText()).trim(), '(catch-up)');
    assert.match(await row('Nightly deps').locator('[data-testid="schedule-last"]').innerText(), /^Last: .*[Cc]aught up/);
  });

  it('Delete asks first: declined keeps the schedule; accepted removes it, and with none left the section is gone', async () => {
    confirmAnswers.push(false);
    await row('Triage flaky tests').locator('[data-testid="schedule-delete"]').click();
    for (let i = 0; i < 100 && confirmAnswers.length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(confirmAnswers.length, 0, 'the host asked');
    await world.settle();
    assert.equal(await row('Triage flaky tests').count(), 1);
    confirmAnswers.push(true);
    await row('Triage flaky tests').locator('[data-testid="schedule-delete"]').click();
    await row('Triage flaky tests').waitFor({ state: 'detached' });
    confirmAnswers.push(true);
    await row('Nightly deps').locator('[data-testid="schedule-delete"]').click();
    await page.locator('[data-testid="schedules"]').waitFor({ state: 'detached' });
    assert.equal(sent.filter((m) => m.method === 'deleteSchedule').length, 3);
  });

  it('a chain step whose task failed says "Skipped: A failed." on its card', async () => {
    const a = await w.service.create(taskInput({ title: 'Step A', workspacePath: world.dir }));
    const b = await w.service.create(taskInput({ title: 'Step B', workspacePath: world.dir, afterTaskId: a.id }));
    const card = page.locator(`[data-testid="card-${b.id}"]`);
    await card.locator('[data-testid="phase"]', { hasText: 'After Step A' }).waitFor();
    await world.promote();
    await world.advance(15_000);
    await startRunning(w, a.id);
    assert.ok(await w.service.lifecycle.fail(a.id, { failureReason: 'tests failed' }));
    await world.advance(31_000);
    await card.locator('[data-testid="failure"]', { hasText: 'Skipped: Step A failed.' }).waitFor();
  });
  it('the After pick stays what it shows when the list of tasks changes under it (a task queued meanwhile), and the task is sent after that one', async () => {
    const queued = w.service.listTasks().find((t) => t.title === 'A queued task')!;
    await fillCreateForm('Step C', 'Write the migration guide');
    const form = page.locator('[data-testid="create-form"]');
    await choose('[data-testid="create-form"]', 'after-task', 'A queued task');
    await form.locator('[data-testid="continue-in-branch"]').waitFor();
    const options = form.locator('[data-testid="after-task"] vscode-option');
    const before = await options.count();
    await w.service.create(taskInput({ title: 'Queued meanwhile', workspacePath: world.dir }));
    await page.waitForFunction(([sel, n]) => document.querySelectorAll(sel as string).length > (n as number), [
      '[data-testid="create-form"] [data-testid="after-task"] vscode-option',
      before,
    ] as const);
    const shown = await form.locator('[data-testid="after-task"]').evaluate((el) => (el as HTMLSelectElement).value);
    assert.equal(shown, queued.id, 'the select still shows the task picked');
    await form.locator('[data-testid="submit"]').click();
    await page.locator('li.card', { hasText: 'Step C' }).waitFor();
    assert.equal((lastSent('createTask') as { input: { afterTaskId?: string } }).input.afterTaskId, queued.id);
  });
});
