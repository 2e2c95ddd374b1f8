// Checks the panel tours make of what the user reads, in the real workbench: every card's title
// is readable at a wide and a narrow panel (nothing squeezed to zero, nothing overflowing), the
// ticket tables scroll instead of clipping, and every text meets WCAG AA contrast (axe-core's
// color-contrast rule, run inside the panel's frame on the colours the theme gave it).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Frame, Page } from 'playwright-core';
import type { TourLog } from './tour';

const requireHere = createRequire(import.meta.url);

/** The layout is checked with the window 1400 px wide, the panel ~500 px wide, and the window 500 px wide. */
export const WIDE_WINDOW = 1400;
export const NARROW_PANEL = 500;

interface LayoutReport {
  panelWidth: number;
  cards: number;
  problems: string[];
}

/** What the panel's layout gets wrong in the frame as it is now (empty `problems`: nothing). */
async function layoutProblems(frame: Frame): Promise<LayoutReport> {
  // Sent as source text: the tour's compiler would wrap named functions in a helper the page lacks.
  return frame.evaluate(`(() => {
    const problems = [];
    const width = document.documentElement.clientWidth;
    const nameOf = (el) => (el.closest('li.card, .history-row')?.querySelector('.title')?.textContent ?? '').slice(0, 40);
    const cards = [...document.querySelectorAll('li.card')];
    for (const card of cards) {
      const title = card.querySelector('.card-head [data-testid="title"]');
      const box = title?.getBoundingClientRect();
      const head = card.querySelector('.card-head');
      // Readable: not squeezed below 100 px (or half the card's width when that is less).
      const least = Math.min(100, (head?.clientWidth ?? 0) / 2);
      if (!box || box.width < least || box.height < 1) problems.push('card "' + nameOf(card) + '": its title is ' + (box ? box.width.toFixed(0) + 'x' + box.height.toFixed(0) + ' px' : 'missing') + ' (at least ' + least.toFixed(0) + ' px wide expected)');
      if (head && head.scrollWidth > head.clientWidth + 1) problems.push('card "' + nameOf(card) + '": its head overflows (' + head.scrollWidth + ' > ' + head.clientWidth + ' px)');
      for (const part of card.querySelectorAll('.card-head > *')) {
        const r = part.getBoundingClientRect();
        if (r.right > width + 1) problems.push('card "' + nameOf(card) + '": ' + (part.className || part.tagName) + ' ends at ' + r.right.toFixed(0) + ' px, past the panel width ' + width + ' px');
      }
    }
    for (const row of document.querySelectorAll('.history-row')) {
      const box = row.querySelector('.title')?.getBoundingClientRect();
      if (!box || box.width < Math.min(100, row.clientWidth / 2)) problems.push('History row "' + nameOf(row) + '": its title is squeezed to ' + (box ? box.width.toFixed(0) : 0) + ' px');
      if (row.getBoundingClientRect().right > width + 1 || row.scrollWidth > row.clientWidth + 1) problems.push('History row "' + nameOf(row) + '" overflows');
    }
    for (const scroll of document.querySelectorAll('.segments-scroll')) {
      const r = scroll.getBoundingClientRect();
      if (r.right > width + 1) problems.push('a ticket table ends at ' + r.right.toFixed(0) + ' px, past the panel width ' + width + ' px (clipped instead of scrolling)');
    }
    if (document.documentElement.scrollWidth > width + 1) {
      // Name what sticks out: the innermost elements that end past the panel's right edge.
      const past = [...document.querySelectorAll('main *')].filter((el) => el.getBoundingClientRect().right > width + 1 && !el.closest('.segments-scroll'));
      const innermost = past.filter((el) => !past.some((other) => other !== el && el.contains(other))).slice(0, 3);
      const what = innermost.map((el) => el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(' ').filter(Boolean).join('.') : '') + ' "' + (el.textContent ?? '').trim().slice(0, 30) + '"').join(', ');
      problems.push('the panel scrolls sideways (' + document.documentElement.scrollWidth + ' > ' + width + ' px): ' + what);
    }
    return { panelWidth: width, cards: cards.length, problems };
  })()`);
}

/**
 * Checks the layout with the window `WIDE_WINDOW` px wide, with the panel about `NARROW_PANEL` px
 * wide and with the window `NARROW_PANEL` px wide (a screenshot of each), then puts the window back.
 */
export async function checkLayout(
  page: Page,
  frameOf: () => Promise<Frame>,
  shot: (name: string) => Promise<void>,
  stage: string,
  log: TourLog,
): Promise<void> {
  const before = page.viewportSize() ?? { width: 1280, height: 900 };
  try {
    await page.setViewportSize({ width: WIDE_WINDOW, height: before.height });
    await page.waitForTimeout(500);
    const wide = await layoutProblems(await frameOf());
    await shot(`${stage}-${WIDE_WINDOW}px-window`);
    // The panel's width follows the window's, less the workbench around it (side bar, activity bar).
    const around = WIDE_WINDOW - wide.panelWidth;
    await page.setViewportSize({ width: NARROW_PANEL + around, height: before.height });
    await page.waitForTimeout(500);
    const narrow = await layoutProblems(await frameOf());
    await shot(`${stage}-${narrow.panelWidth}px-panel`);
    // And the whole window 500 px wide: the panel gets what the side bar leaves.
    await page.setViewportSize({ width: NARROW_PANEL, height: before.height });
    await page.waitForTimeout(500);
    const tiny = await layoutProblems(await frameOf());
    await shot(`${stage}-${NARROW_PANEL}px-window`);
    const problems = [...wide.problems, ...narrow.problems, ...tiny.problems];
    log(
      `layout (${stage}): ${wide.cards} cards, panel ${wide.panelWidth} px, ${narrow.panelWidth} px and ${tiny.panelWidth} px: ${problems.length} problems`,
    );
    assert.ok(narrow.panelWidth <= NARROW_PANEL + 20, `the narrow panel is ${narrow.panelWidth} px`);
    assert.deepEqual(problems, [], `layout problems (${stage})`);
  } finally {
    await page.setViewportSize(before);
    await page.waitForTimeout(300);
  }
}

/**
 * Every text in the panel meets WCAG AA (4.5:1; 3:1 for large text), by axe-core's color-contrast
 * rule on the colours the theme gave it. Throws with each failing text, its colours and ratio.
 */
export async function checkContrast(frame: Frame, theme: string, log: TourLog): Promise<void> {
  const axeSource = readFileSync(requireHere.resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated by the browser's debugging protocol, which the panel's script CSP does not cover.
  await frame.evaluate(axeSource);
  const result: { violations: string[]; incomplete: string[]; passed: number } = await frame.evaluate(`(async () => {
    const r = await window.axe.run(document, { runOnly: { type: 'rule', values: ['color-contrast'] } });
    const describe = (n) => n.target.join(' ') + ': ' + (n.any[0]?.message ?? '') + ' (' + n.html.slice(0, 120) + ')';
    return {
      violations: r.violations.flatMap((v) => v.nodes.map(describe)),
      incomplete: r.incomplete.flatMap((v) => v.nodes.map(describe)),
      passed: r.passes.reduce((n, p) => n + p.nodes.length, 0),
    };
  })()`);
  log(`contrast (${theme}): ${result.passed} texts pass WCAG AA, ${result.violations.length} fail, ${result.incomplete.length} undecided`);
  for (const undecided of result.incomplete) log(`  undecided: ${undecided}`);
  assert.deepEqual(result.violations, [], `texts below WCAG AA contrast in ${theme}`);
}
