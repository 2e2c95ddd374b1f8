// The create form's small things (issue 39, item 8) as Chromium renders them, against the real host:
// the webview bundle built from source in headless Chromium, its messages going to the real
// PanelController over the real TaskService (a sql.js file, the real reference gateway on loopback,
// a real git folder so "Run on its own branch" is offered). "After" with "Continue in its branch"
// leaves no own branch ticked; the After list tells same-titled tasks apart, newest first, and opens
// inside the panel; an emptied Check command box stays empty; a long check command keeps its icon
// beside its first words.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { PanelController } from '../../src/panel/panel-controller';
import { createServiceBackend } from '../../src/panel/service-backend';
import { taskInput, World, type Window } from './service-harness';
import { BARE_HOST, NO_ASKS } from './panel-link';
import { buildPanelPage, launchChromium } from './panel-page';

const LONG_CHECK = `npm run test:integration -- --grep ${'very-long-pattern-'.repeat(8)}end`;

describe('panel create form in Chromium against the real host: After, the check command, the check line', function () {
  this.timeout(180_000);
  let world: World;
  let w: Window;
  let dir: string;
  let repo: string;
  let browser: Browser;
  let page: Page;
  let controller: PanelController;
  const taskIds: string[] = [];

  const form = () => page.locator('[data-testid="create-form"]');
  async function openForm(): Promise<void> {
    if (await page.locator('[data-testid="new-task"]').isVisible()) await page.locator('[data-testid="new-task"]').click();
    await form().waitFor();
  }
  async function closeForm(): Promise<void> {
    if (await form().locator('[data-testid="discard"]').isVisible()) await form().locator('[data-testid="discard"]').click();
  }
  /** The After list's options (not "No other task"), as listed. */
  async function afterOptions(): Promise<string[]> {
    const texts = await form().locator('[data-testid="after-task"] vscode-option').allTextContents();
    return texts.map((t) => t.trim().replace(/\s+/g, ' ')).slice(1);
  }

  before(async () => {
    world = await World.start();
    w = await world.openWindow();
    repo = mkdtempSync(path.join(os.tmpdir(), 'offpeak-form-repo-'));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
    git('init', '-q');
    writeFileSync(path.join(repo, 'README.md'), 'fixture\n');
    git('add', '.');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'init');
    for (const [title, checkCommand] of [
      ['Fix the build', undefined],
      ['Fix the build', undefined],
      ['Tidy the docs', undefined],
      ['Fix the build', LONG_CHECK],
    ] as const) {
      world.clock.advance(60_000);
      const task = await w.service.create(taskInput({ title, workspacePath: repo, ...(checkCommand ? { checkCommand } : {}) }));
      taskIds.push(task.id);
    }
    const backend = createServiceBackend(
      w.service,
      w.store,
      { ...BARE_HOST, workspaces: () => [{ name: 'repo', path: repo, identity: null }], isolation: () => 'worktree' },
      NO_ASKS,
    );
    ({ dir } = await buildPanelPage('offpeak-form-smalls-', 'window.toHost(m);'));
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 900, height: 700 } });
    const listeners: ((message: unknown) => void)[] = [];
    await page.exposeFunction('toHost', (message: unknown) => {
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
    await page.goto(`file://${path.join(dir, 'panel.html')}`);
    await page.locator('li.card').first().waitFor();
  });
  after(async () => {
    controller?.dispose();
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (repo) rmSync(repo, { recursive: true, force: true });
    await world?.close();
  });

  it('item 8: with After picked and "Continue in its branch" ticked, "Run on its own branch" is not ticked and says it continues in that branch; unticked, the choice comes back', async () => {
    await openForm();
    const own = form().locator('[data-testid="own-branch"] input');
    assert.equal(await own.isChecked(), true, 'the folder runs tasks on their own branch');
    const select = form().locator('[data-testid="after-task"]');
    await select.click();
    await select.locator('[role="option"]', { hasText: 'Tidy the docs' }).first().click();
    const continuing = form().locator('[data-testid="continue-in-branch"] input');
    assert.equal(await continuing.isChecked(), true);
    assert.equal(await own.isChecked(), false, 'continuing in the other task’s branch, it gets none of its own');
    assert.equal(await own.isDisabled(), true);
    assert.match(await form().locator('[data-testid="own-branch"]').innerText(), /continues in the branch of the task it runs after/i);
    await continuing.uncheck();
    assert.equal(await own.isChecked(), true, 'not continuing: the folder’s default again');
    assert.equal(await own.isDisabled(), false);
    await closeForm();
  });

  it('item 8: the After list tells same-titled tasks apart by state and short id, lists the newest first and says so, and opens inside the panel', async () => {
    await openForm();
    const options = await afterOptions();
    assert.equal(options.length, 4);
    assert.equal(new Set(options).size, options.length, `each option is distinguishable: ${options.join(' | ')}`);
    for (const id of taskIds)
      assert.ok(
        options.some((o) => o.includes(id.slice(0, 8))),
        `the short id ${id.slice(0, 8)} is shown`,
      );
    assert.ok(
      options.every((o) => /In queue/.test(o)),
      `each option says where its task stands: ${options.join(' | ')}`,
    );
    assert.ok(options[0]!.includes(taskIds[3]!.slice(0, 8)), `the newest first: ${options.join(' | ')}`);
    assert.match(await form().locator('[data-testid="after-hint"]').innerText(), /newest first/i);
    // The list opened with the field at the panel's bottom edge stays in the panel.
    const select = form().locator('[data-testid="after-task"]');
    await select.evaluate((el) => el.scrollIntoView({ block: 'end' }));
    await select.click();
    const dropdown = select.locator('.dropdown.open');
    await dropdown.waitFor();
    const box = (await dropdown.boundingBox())!;
    assert.ok(box.y >= 0 && box.y + box.height <= 700, `the list (${box.y}–${box.y + box.height}) is inside the 700 px panel`);
    await page.keyboard.press('Escape');
    await closeForm();
  });

  it('an emptied Check command box stays empty while a snapshot re-renders the form (the last command is the default only when the form opens)', async () => {
    await openForm();
    const check = form().locator('[data-testid="check-command"] input');
    assert.equal(await check.inputValue(), LONG_CHECK, 'the form opens with the folder’s last check command');
    await check.fill('');
    await form().locator('[data-testid="title"] input').fill('Something else');
    // A snapshot from the host re-renders the form.
    await w.service.create(taskInput({ title: 'Another one', workspacePath: repo }));
    await page.locator('li.card', { hasText: 'Another one' }).waitFor();
    assert.equal(await check.inputValue(), '', 'the box the user emptied stays empty');
    await check.press('End');
    assert.equal(await check.inputValue(), '');
    await closeForm();
  });

  it('item 8: a task queued with the Check command box emptied has no check, and the next form does not refill the box', async () => {
    await openForm();
    const check = form().locator('[data-testid="check-command"] input');
    assert.equal(await check.inputValue(), LONG_CHECK, 'the form opens with the folder’s last check command');
    await check.fill('');
    await form().locator('[data-testid="title"] input').fill('No check this time');
    await form().locator('[data-testid="prompt"] textarea').fill('Tidy the readme');
    await form().locator('[data-testid="submit"]').click();
    await page.locator('li.card', { hasText: 'No check this time' }).waitFor();
    const queued = w.service.listTasks().find((t) => t.title === 'No check this time')!;
    assert.equal(
      w.store.read((tx) => tx.checks.get(queued.id)),
      undefined,
      'no check queued',
    );
    await openForm();
    assert.equal(await form().locator('[data-testid="check-command"] input').inputValue(), '', 'the box the user emptied is not refilled');
    await closeForm();
  });

  it('item 8: a long check command keeps its icon on the line of its first words', async () => {
    const line = page.locator('[data-testid="check-line"]').first();
    await line.waitFor();
    await page.setViewportSize({ width: 420, height: 700 });
    const gap = await line.evaluate((el) => {
      const icon = el.querySelector('.codicon')!.getBoundingClientRect();
      const text = el.querySelector('[data-testid="check-text"]')!.firstChild!;
      const range = document.createRange();
      range.setStart(text, 0);
      range.setEnd(text, 1);
      const first = range.getBoundingClientRect();
      return {
        vertical: Math.abs(first.top - icon.top),
        lines: el.querySelector('[data-testid="check-text"]')!.getClientRects()[0]!.height,
      };
    });
    await page.setViewportSize({ width: 900, height: 700 });
    assert.ok(gap.lines > 30, 'the command wraps at 420 px (the test shows a long one)');
    assert.ok(gap.vertical < 8, `the icon sits beside the first words (${gap.vertical} px apart)`);
  });
});
