// The panel as Chromium renders it (docs/flows.md#what-the-panel-says): the webview
// bundle built from source, with the panel's CSS and codicons, in headless Chromium, renders a
// snapshot the real PanelController made from the real TaskService (a sql.js file, the real
// reference gateway on loopback): a queued, a running and a finished card. At a 500 px and a
// 260 px panel (a 500 px window with the side bar open) every action keeps a short label on one
// line inside its card; at 1000 px the whole label shows. A card's Edit form names the same
// default model as the create form (personal mode with Claude Code: "Claude Code's default model").
// The finished task's check failed: its line and its output (one click) stay inside the card.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { PanelController } from '../../src/panel/panel-controller';
import { createServiceBackend } from '../../src/panel/service-backend';
import { setupView } from '../../src/panel/setup-line';
import type { PanelState } from '../../src/protocol/webview';
import { oneRunningTask, taskInput, World } from './service-harness';
import { NO_ASKS } from './panel-link';
import { buildPanelPage, launchChromium } from './panel-page';
import { localDateTimeText } from '../../webview/task-form';

interface ActionSeen {
  card: string;
  testid: string;
  /** What the button reads (its visible text). */
  text: string;
  lines: number;
  /** Pixels past the card's right edge (0: inside). */
  pastCard: number;
}

describe("panel rendered in Chromium: card actions by width, the forms' default model", function () {
  this.timeout(120_000);
  let world: World;
  let dir: string;
  let browser: Browser;
  let state: PanelState;
  let scheduledAt: number;

  before(async () => {
    world = await World.start();
    const { w, t: finished } = await oneRunningTask(world);
    await w.store.mutate((tx) => tx.tasks.complete(finished.id));
    // Its check failed after its rounds (docs/flows.md#checks), with a long output line.
    await w.store.mutate((tx) => {
      tx.checks.insert(finished.id, 'npm test -- --reporter spec', finished.workspaceKey);
      tx.checks.record(finished.id, {
        state: 'failed',
        round: 2,
        exitCode: 1,
        output: `1 failing\n  AssertionError: ${'expected-a-very-long-value-'.repeat(12)}\n`,
      });
    });
    const running = await w.service.create(taskInput({ title: 'A running task with a long title that takes room' }));
    await world.promote();
    await world.advance(15_000);
    await w.store.mutate((tx) => {
      tx.tasks.claim(running.id);
      tx.tasks.markRunning(running.id, { sessionId: `session-${running.id}` });
    });
    await w.service.create(taskInput({ title: 'A queued task' }));
    // docs/flows.md#schedules-and-chains: waits for its time, which its Edit form can move.
    scheduledAt = world.clock.now() + 5 * 3_600_000;
    await w.service.create(taskInput({ title: 'A scheduled task', notBefore: scheduledAt }));
    const backend = createServiceBackend(
      w.service,
      w.store,
      {
        hasApiKey: async () => true,
        setApiKey: async () => undefined,
        workspaces: () => [{ name: 'ws', path: world.dir, identity: null }],
        models: () => [],
        configs: () => ({ exposed: true, planEligible: true, upgradeHint: null, upgradeUrl: null }),
        reloadConfigs: async () => undefined,
        openTerminal: async () => undefined,
        confirm: async () => true,
        notice: () => undefined,
        setup: async () =>
          setupView({
            mode: 'personal',
            gatewayUrl: '',
            agentSetting: 'auto',
            agent: 'claude-code',
            modelCredential: 'claudeLogin',
            baseUrl: 'https://api.anthropic.com',
            hasModelKey: false,
            hours: 'always',
            hoursOpenAt: null,
          }),
      },
      NO_ASKS,
    );
    const controller = new PanelController(
      { postMessage: () => undefined, onDidReceiveMessage: () => ({ dispose() {} }) },
      backend,
      world.clock,
    );
    state = await controller.snapshot();
    controller.dispose();

    ({ dir } = await buildPanelPage('offpeak-narrow-', ''));
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await world?.close();
  });

  /** The panel `width` px wide, showing the snapshot. */
  async function panelAt(width: number) {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    await page.goto(pathToFileURL(path.join(dir, 'panel.html')).href);
    await page.evaluate((s) => window.dispatchEvent(new MessageEvent('message', { data: { type: 'state', state: s } })), state);
    await page.waitForFunction((n) => document.querySelectorAll('li.card').length === n, state.tasks.length);
    return page;
  }

  /** Every card's action buttons as the panel `width` px wide shows them. */
  async function actionsAt(width: number): Promise<ActionSeen[]> {
    const page = await panelAt(width);
    try {
      return await page.evaluate(`[...document.querySelectorAll('li.card')].flatMap((card) => {
        const right = card.getBoundingClientRect().right;
        return [...card.querySelectorAll('.card-head .actions button.action')].map((b) => {
          const label = b.querySelector('.label');
          return {
            card: card.querySelector('[data-testid="title"]').textContent,
            testid: b.dataset.testid,
            text: b.innerText.trim(),
            lines: label ? [...label.getClientRects()].filter((r) => r.width > 0).length : 0,
            pastCard: Math.max(0, Math.round(b.getBoundingClientRect().right - right)),
          };
        });
      })`);
    } finally {
      await page.close();
    }
  }

  for (const width of [1400, 500]) {
    it(`a ${width} px panel: a failed check reads "Check failed after 2 rounds" with the command whole, and Output shows its output inside the card`, async () => {
      const page = await panelAt(width);
      try {
        const line = page.locator('li.card [data-testid="check-line"]');
        assert.equal(await line.count(), 1);
        assert.equal(await page.locator('[data-testid="check-line"]').count(), 2, 'on the card and on its History row');
        assert.equal(
          await line.locator('[data-testid="check-text"]').innerText(),
          'Check failed after 2 rounds (npm test -- --reporter spec, exit code 1)',
        );
        assert.equal(await line.locator('[data-testid="check-output"]').count(), 0, 'the output is one click away, not shown at first');
        await line.locator('[data-testid="check-output-toggle"]').click();
        const output = line.locator('[data-testid="check-output"]');
        assert.match(await output.innerText(), /^1 failing\n {2}AssertionError: expected-a-very-long-value-/);
        const [card, pre] = await Promise.all([
          line.evaluate((el) => el.closest('li.card')!.getBoundingClientRect().right),
          output.evaluate((el) => el.getBoundingClientRect().right),
        ]);
        assert.ok(pre <= card + 0.5, `the output ends ${pre - card} px past its card at ${width} px`);
      } finally {
        await page.close();
      }
    });
  }

  const SHORT: Record<string, string> = {
    'open-session': 'Session',
    'follow-up': 'Follow up',
    terminal: 'Terminal',
    delete: 'Delete',
    cancel: 'Cancel',
    edit: 'Edit',
    pause: 'Pause',
  };

  for (const width of [500, 260]) {
    it(`a ${width} px panel: every card action shows its short label, on one line, inside its card`, async () => {
      const seen = await actionsAt(width);
      assert.ok(
        ['open-session', 'follow-up', 'terminal', 'cancel', 'edit'].every((id) => seen.some((a) => a.testid === id)),
        `the cards offer ${seen.map((a) => a.testid).join(', ')}`,
      );
      for (const a of seen) {
        const where = `${a.testid} on "${a.card}" at ${width} px`;
        assert.equal(a.text, SHORT[a.testid] ?? a.text, `${where} reads "${a.text}"`);
        assert.ok(a.text.length > 0, `${where} has no label`);
        assert.equal(a.lines, 1, `${where}: its label takes ${a.lines} lines`);
        assert.equal(a.pastCard, 0, `${where} ends ${a.pastCard} px past its card`);
      }
    });
  }

  it('a 1000 px panel: the whole labels ("Open session", "Follow up…")', async () => {
    const seen = await actionsAt(1000);
    assert.equal(seen.find((a) => a.testid === 'open-session')?.text, 'Open session');
    assert.equal(seen.find((a) => a.testid === 'follow-up')?.text, 'Follow up…');
  });

  it('the create form offers "Not before" and "After" a task that has not failed (docs/flows.md#schedules-and-chains)', async () => {
    const page = await panelAt(1000);
    try {
      await page.locator('[data-testid="new-task"]').click();
      const form = page.locator('[data-testid="create-form"]');
      assert.equal(await form.locator('[data-testid="not-before"]').getAttribute('type'), 'datetime-local');
      const options = await form.locator('[data-testid="after-task"] vscode-option').allTextContents();
      assert.equal(options[0], 'No other task');
      assert.ok(
        options.some((o) => o.startsWith('A queued task · In queue · ')) &&
          options.some((o) => o.startsWith('A running task with a long title that takes room · ')),
        options.join(' | '),
      );
      // Task 14's check failed: a step after it would only be skipped.
      assert.ok(!options.some((o) => o.includes('Check failed')), options.join(' | '));
    } finally {
      await page.close();
    }
  });

  it('a scheduled card\'s Edit form shows its "not before" time to move; a queued card\'s has none', async () => {
    const page = await panelAt(1000);
    try {
      await page.locator('li.card', { hasText: 'A scheduled task' }).locator('[data-testid="edit"]').click();
      const field = page
        .locator('li.card', { hasText: 'A scheduled task' })
        .locator('[data-testid="edit-form"] [data-testid="not-before"]');
      assert.equal(await field.getAttribute('type'), 'datetime-local');
      assert.equal(await field.evaluate((el) => (el as HTMLInputElement).value), localDateTimeText(scheduledAt));
      await page.locator('li.card', { hasText: 'A queued task' }).locator('[data-testid="edit"]').click();
      assert.equal(
        await page.locator('li.card', { hasText: 'A queued task' }).locator('[data-testid="edit-form"] [data-testid="not-before"]').count(),
        0,
      );
    } finally {
      await page.close();
    }
  });

  it("a card's Edit form offers the same default model as the create form (the agent's default in personal mode)", async () => {
    const page = await panelAt(1000);
    try {
      await page.locator('[data-testid="new-task"]').click();
      assert.equal(
        await page.locator('[data-testid="create-form"] [data-testid="model"] vscode-option').first().textContent(),
        "Claude Code's default model",
      );
      await page.locator('li.card', { hasText: 'A queued task' }).locator('[data-testid="edit"]').click();
      const first = page.locator('li.card', { hasText: 'A queued task' }).locator('[data-testid="model"] vscode-option').first();
      assert.equal(await first.textContent(), "Claude Code's default model");
    } finally {
      await page.close();
    }
  });
});
