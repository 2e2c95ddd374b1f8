// Several panel tours in one process, in turn: `node --import tsx scripts/ui-tours.ts test:ui:panel
// test:ui:runs …` (npm test runs its consecutive tours this way, scripts/test-all.ts). Each tour is
// the script its npm script names (scripts/panel-tour*.ts), with its own artifacts, state dir,
// gateways and code-server, exactly as when it runs alone; what they share is what costs without
// testing anything: one start of this process (tsx), one headless Chromium, and one browser context
// whose HTTP cache keeps the workbench's scripts (code-server serves them for a year) from one tour
// to the next, its code-servers listening on one port so the origin stays the same. Between tours
// every window is closed and the origin's cookies and storage (the workbench's state and secrets)
// are cleared: a tour starts as a new browser would, with warm scripts. Measured on the same machine
// in the same conditions, a window opened with a warm cache took a quarter less CPU time.
// Stops at the first tour that fails. After each tour a line `[suite-time] <script> ok|FAILED <ms>
// <busy>` for npm test's table of times.
//
// usage: node --import tsx scripts/ui-tours.ts [--keep] <npm script>...
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { BrowserContext } from 'playwright-core';
import { cpuTimes, suiteTimeLine, tourScriptFile } from './test-all';
import { collectTours, playTour, tourPort, type TourShared } from './vscode/tour';
import { ensureVsCodeTools, REPO_ROOT } from './vscode/tools';
import { launchBrowser } from './vscode/workbench';

/** What a tour leaves in the browser for its origins: everything but the HTTP cache. */
const STORAGE_TYPES = 'cookies,file_systems,indexeddb,local_storage,websql,service_workers,cache_storage';

async function clearOrigins(context: BrowserContext, origins: Set<string>): Promise<void> {
  const page = await context.newPage();
  try {
    const cdp = await context.newCDPSession(page);
    for (const origin of origins) await cdp.send('Storage.clearDataForOrigin', { origin, storageTypes: STORAGE_TYPES });
    await cdp.detach();
  } finally {
    await page.close();
  }
  await context.clearCookies();
  await context.clearPermissions();
  origins.clear();
}

async function main(): Promise<number> {
  const { values: opts, positionals: names } = parseArgs({
    options: { keep: { type: 'boolean', default: false } },
    allowPositionals: true,
  });
  const scripts = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const files = names.map((name) => {
    const file = tourScriptFile(scripts[name]);
    if (!file) throw new Error(`${name} is not a panel tour's npm script (node --import tsx scripts/panel-tour….ts --no-build)`);
    return { name, file: path.join(REPO_ROOT, file) };
  });
  if (files.length === 0) throw new Error('no tour named');
  const tools = ensureVsCodeTools({ browser: true });
  const browser = await launchBrowser(tools);
  const shared: TourShared = {
    tools,
    context: await browser.newContext({ viewport: { width: 1280, height: 900 } }),
    port: await tourPort(),
    origins: new Set(),
    keep: opts.keep,
  };
  try {
    for (const { name, file } of files) {
      // CommonJS's require, not import(): the tour must share this process's instance of ./vscode/tour.
      const tours = await collectTours(async () => {
        createRequire(__filename)(file);
      });
      if (tours.length !== 1) throw new Error(`${file} declared ${tours.length} tours (runTour), not one`);
      const { name: tour, body } = tours[0]!;
      const started = Date.now();
      const before = cpuTimes();
      const ok = await playTour(tour, body, { shared }).then(
        () => true,
        (err: unknown) => {
          console.error(`${tour}: FAILED: ${(err as Error).stack ?? String(err)}`);
          return false;
        },
      );
      const after = cpuTimes();
      const busy = after.total > before.total ? (after.busy - before.busy) / (after.total - before.total) : undefined;
      await clearOrigins(shared.context, shared.origins);
      console.log(suiteTimeLine({ script: name, code: ok ? 0 : 1, ms: Date.now() - started, busy }));
      if (!ok) return 1;
    }
    return 0;
  } finally {
    await browser.close().catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`ui-tours: ${(err as Error).stack ?? String(err)}`);
    process.exit(1);
  },
);
