// What the panel tours (scripts/panel-tour.ts, scripts/panel-tour-runs.ts) share: their frame
// (runTour), polling until something holds, asking the gateway about a ticket, and driving the
// panel's cards by real clicks with a screenshot per stage. The task DB as it is on disk is read by
// ./task-db.ts; several tours in one process (scripts/ui-tours.ts) by ./tour-batch.ts.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Browser, BrowserContext, Frame, Locator, Page } from 'playwright-core';
import { systemClock } from '../../src/core/clock';
import { GatewayClient } from '../../src/gateway-client/client';
import { ensureVsCodeTools, REPO_ROOT, type VsCodeTools } from './tools';
import { freePort, portIsFree, startCodeServer, type CodeServerOptions, type RunningCodeServer } from './code-server';
import { TaskDb } from './task-db';
import {
  answerDialog,
  installExtension,
  launchBrowser,
  openWorkbench,
  panelFrame,
  runCommand,
  setApiKey,
  startGateway,
  type GatewayProcess,
} from './workbench';

export const DEMO_KEY = 'opk-demo-key-0000';
const TOUR_HOST = '127.0.0.1';

/** The form's label of the mode that never asks (queuing with it asks for a confirmation first). */
export const BYPASS_PERMISSIONS = 'Bypass permissions';

export type TourLog = (msg: string) => void;

/** `[name +12.3s] msg` on stdout, timed from the call. */
export function tourLog(name: string): TourLog {
  const t0 = Date.now();
  return (msg) => console.log(`[${name} +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);
}

export { TaskDb, type TaskRow, type TicketRow } from './task-db';

/**
 * A probe that reads the panel while it reloads (an engine restarting on a new gateway URL reloads
 * it) can find its frame gone: that is "not yet", never a result. Any other error fails the wait.
 */
const RELOADED_UNDER_PROBE = /Frame was detached|Execution context was destroyed/;

export async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let reloaded = ''; ; reloaded = '') {
    const value = await Promise.resolve()
      .then(probe)
      .catch((error: unknown) => {
        if (!(error instanceof Error) || !RELOADED_UNDER_PROBE.test(error.message)) throw error;
        reloaded = ` (the panel reloaded under the last probe: ${error.message.split('\n')[0]})`;
        return undefined;
      });
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${reloaded}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function gatewayState(gateway: GatewayProcess, ticketId: string): Promise<string> {
  const client = new GatewayClient({ baseUrl: gateway.url, apiKey: () => DEMO_KEY, clock: systemClock });
  const status = await client.status([ticketId]);
  return status.tickets.find((t) => t.ticket_id === ticketId)?.state ?? 'absent';
}

/** One workbench page's panel, driven by real clicks; screenshots numbered in `artifacts`. */
export class Tour {
  /** The last screenshot's number per artifacts dir: a tour's windows share it, each tour of a batch starts at 01. */
  private static readonly shotNo = new Map<string, number>();
  frame!: Frame;

  constructor(
    readonly page: Page,
    readonly db: TaskDb,
    private readonly artifacts: string,
    private readonly log: TourLog,
  ) {}

  async shot(name: string): Promise<void> {
    const no = (Tour.shotNo.get(this.artifacts) ?? 0) + 1;
    Tour.shotNo.set(this.artifacts, no);
    const file = path.join(this.artifacts, `${String(no).padStart(2, '0')}-${name}.png`);
    await this.page.screenshot({ path: file });
    this.log(`screenshot ${path.relative(REPO_ROOT, file)}`);
  }

  /** The panel frame (found again after the panel reloaded, e.g. when the engine restarted). */
  async panel(selector = 'main', timeoutMs = 60_000): Promise<Frame> {
    this.frame = await panelFrame(this.page, selector, timeoutMs);
    return this.frame;
  }

  card(prompt: string): Locator {
    return this.frame.locator('li.card', { has: this.frame.locator('[data-testid="title"]', { hasText: prompt }) });
  }

  async phaseOf(prompt: string, text: string, timeoutMs = 30_000): Promise<void> {
    await this.card(prompt).locator('[data-testid="phase"]', { hasText: text }).waitFor({ timeout: timeoutMs });
  }

  async openForm(): Promise<void> {
    const newTask = this.frame.locator('[data-testid="new-task"]');
    if (await newTask.isVisible().catch(() => false)) await newTask.click();
    await this.frame.locator('[data-testid="create-form"]').waitFor();
  }

  async typePrompt(prompt: string): Promise<void> {
    await this.openForm();
    const box = this.frame.locator('[data-testid="create-form"] [data-testid="prompt"]');
    await box.click();
    // Into the element's own <textarea> (inside its shadow root): keystrokes typed while the
    // focus is still on its way there would be lost on a loaded machine.
    await box.locator('textarea').fill(prompt);
  }

  /** Picks an option of one of the form's drop-downs (a vscode-single-select) by its label. */
  async choose(testid: string, label: string): Promise<void> {
    const select = this.frame.locator(`[data-testid="create-form"] [data-testid="${testid}"]`);
    await select.click();
    await select.locator('[role="option"]', { hasText: label }).first().click();
  }

  /** Clicks "Queue task" once create is enabled; resolves when the click was made. */
  async submit(): Promise<void> {
    await this.frame.locator('[data-testid="create-form"] [data-testid="availability"]').waitFor({ state: 'detached', timeout: 30_000 });
    await this.frame.locator('[data-testid="submit"]').click();
  }

  /**
   * Types a prompt into the form (and picks a permission mode by its label, if given), queues it
   * (confirming Bypass permissions in the modal), waits for its card.
   */
  async create(prompt: string, permissionMode?: string): Promise<void> {
    await this.typePrompt(prompt);
    if (permissionMode) await this.choose('permission-mode', permissionMode);
    await this.submit();
    if (permissionMode === BYPASS_PERMISSIONS) await answerDialog(this.page, 'Queue with Bypass Permissions');
    await this.card(prompt).waitFor({ timeout: 30_000 });
  }

  async click(prompt: string, action: string): Promise<void> {
    await this.card(prompt).locator(`[data-testid="${action}"]`).click();
  }
}

/**
 * A git repository for a tour to work on: `<stateDir>/workspace` on branch main with `files`
 * committed, and `git` to run more commands in it (a tour's own fixture, not the product's git).
 */
export function gitWorkspace(stateDir: string, files: Record<string, string>): { workspace: string; git(...args: string[]): string } {
  const workspace = path.join(stateDir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=tour@example.invalid', '-c', 'user.name=tour', ...args], {
      cwd: workspace,
      encoding: 'utf8',
    }).trim();
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(workspace, name), text);
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', 'initial');
  return { workspace, git };
}

/** What runTour hands a tour's body. */
export interface TourRun {
  tools: VsCodeTools;
  /**
   * Where openWorkbench opens windows: the browser (a context of their own each) or, when several
   * tours share one browser (scripts/ui-tours.ts), the batch's one context, whose HTTP cache keeps
   * the workbench's scripts from one tour to the next.
   */
  browser: Browser | BrowserContext;
  /** A fresh temp dir (home, user-data, extensions of code-server; workspaces); removed unless --keep. */
  stateDir: string;
  userData: string;
  artifacts: string;
  log: TourLog;
  /** Stopped at the end, pass or fail, in the order given. */
  stopLater(stop: () => Promise<void>): void;
  /** A demo gateway on loopback (`startGateway`), stopped at the end. */
  gateway(args: string[], env?: Record<string, string>): Promise<GatewayProcess>;
  /** code-server on loopback on the state dir, stopped at the end. */
  codeServer(settings: Pick<CodeServerOptions, 'userSettings' | 'machineSettings'>): Promise<RunningCodeServer>;
  /** A screenshot to take if the tour fails (set once the workbench shows). */
  onFailure(shot: () => Promise<void>): void;
  /**
   * The workbench of `server` on `folder`, the demo key set, the Off-Peak panel open at its
   * create form, and a screenshot of it if the tour fails: what most tours start with.
   */
  openPanel(server: RunningCodeServer, folder: string): Promise<{ page: Page; db: TaskDb; tour: Tour }>;
}

export type TourBody = (run: TourRun) => Promise<void>;

/** What one process running several tours in turn (scripts/ui-tours.ts) lends each of them. */
export interface TourShared {
  tools: VsCodeTools;
  /** One context for every tour: its pages are closed after each tour, its storage cleared by the batch. */
  context: BrowserContext;
  /** The port every tour's code-server listens on while it is free: the same origin keeps the cache warm. */
  port: number;
  /** The origins a tour's code-servers served, for the batch to clear their storage afterwards. */
  origins: Set<string>;
  keep: boolean;
}

/** Set while scripts/ui-tours.ts loads tour scripts: runTour hands the tour over instead of running it. */
let collecting: { name: string; body: TourBody }[] | undefined;

/** Loads tour scripts with `load` and returns the tours they declared, unrun. */
export async function collectTours(load: () => Promise<void>): Promise<{ name: string; body: TourBody }[]> {
  const tours: { name: string; body: TourBody }[] = [];
  collecting = tours;
  try {
    await load();
  } finally {
    collecting = undefined;
  }
  return tours;
}

/**
 * The frame of a tour script: `--no-build` / `--keep`, the build, the tools, a headless browser,
 * then playTour; `<name>: passed` or `FAILED` with exit code 1. Loaded by scripts/ui-tours.ts, the
 * tour is handed over to it instead (collectTours), to run beside the others in its one browser.
 */
export function runTour(name: string, body: TourBody): void {
  if (collecting) {
    collecting.push({ name, body });
    return;
  }
  const { values: opts } = parseArgs({
    options: { 'no-build': { type: 'boolean', default: false }, keep: { type: 'boolean', default: false } },
    allowPositionals: false,
  });
  const main = async (): Promise<void> => {
    if (!opts['no-build']) {
      const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, stdio: 'inherit' });
      if (build.status !== 0) throw new Error('npm run build failed');
    }
    const tools = ensureVsCodeTools({ browser: true });
    const browser = await launchBrowser(tools);
    try {
      await playTour(name, body, { tools, browser, keep: opts.keep });
    } finally {
      await browser.close().catch(() => undefined);
    }
  };
  main().catch((err: unknown) => {
    console.error(`${name}: FAILED: ${(err as Error).stack ?? String(err)}`);
    process.exit(1);
  });
}

/**
 * One tour: a clean artifacts dir (test/artifacts/<name>), a temp state dir with the built
 * extension installed, `body`, then everything stopped (the windows first), pass or fail, and
 * `<name>: passed`. Alone (`browser`) or in a batch (`shared`).
 */
export async function playTour(
  name: string,
  body: TourBody,
  where: { tools: VsCodeTools; browser: Browser; keep: boolean } | { shared: TourShared },
): Promise<void> {
  const tools = 'shared' in where ? where.shared.tools : where.tools;
  const keep = 'shared' in where ? where.shared.keep : where.keep;
  const windows: Browser | BrowserContext = 'shared' in where ? where.shared.context : where.browser;
  const log = tourLog(name);
  const artifacts = path.join(REPO_ROOT, 'test', 'artifacts', name);
  rmSync(artifacts, { recursive: true, force: true });
  mkdirSync(artifacts, { recursive: true });
  const stateDir = mkdtempSync(path.join(os.tmpdir(), `offpeak-${name}-`));
  installExtension(path.join(stateDir, 'extensions'));
  const stops: (() => Promise<void>)[] = [];
  let failureShot: (() => Promise<void>) | undefined;
  let sharedPortTaken = false;
  try {
    await body({
      tools,
      browser: windows,
      stateDir,
      userData: path.join(stateDir, 'user-data'),
      artifacts,
      log,
      stopLater: (stop) => stops.push(stop),
      gateway: async (args, env) => {
        const gateway = await startGateway(TOUR_HOST, args, undefined, env);
        stops.push(() => gateway.stop());
        return gateway;
      },
      codeServer: async (settings) => {
        // In a batch the tour's first code-server takes the batch's port (if nobody else took it meanwhile).
        let port: number | undefined;
        if ('shared' in where && !sharedPortTaken && (await portIsFree(where.shared.port, TOUR_HOST))) {
          port = where.shared.port;
          sharedPortTaken = true;
        }
        const server = await startCodeServer({
          tools,
          stateDir,
          smokeTestDriver: false,
          host: TOUR_HOST,
          port,
          lean: true,
          ...settings,
        });
        if ('shared' in where) where.shared.origins.add(server.origin);
        stops.unshift(() => server.stop()); // before the gateways its extension talks to
        return server;
      },
      onFailure: (shot) => (failureShot = shot),
      openPanel: async (server, folder) => {
        const page = await openWorkbench(windows, `${server.origin}/?folder=${encodeURIComponent(folder)}`, server.password);
        const db = await TaskDb.open(path.join(stateDir, 'user-data'));
        const tour = new Tour(page, db, artifacts, log);
        failureShot = () => tour.shot('failure');
        await setApiKey(page, DEMO_KEY);
        await runCommand(page, 'Open Off-Peak Tasks');
        await tour.panel('[data-testid="create-form"]');
        return { page, db, tour };
      },
    });
    console.log(`${name}: passed`);
  } catch (err) {
    await failureShot?.().catch(() => undefined);
    throw err;
  } finally {
    // The windows close before code-server stops (a window left open would reconnect to nothing).
    if ('shared' in where) for (const page of where.shared.context.pages()) await page.close().catch(() => undefined);
    else for (const context of where.browser.contexts()) await context.close().catch(() => undefined);
    for (const stop of stops) await stop().catch(() => undefined);
    if (!keep) rmSync(stateDir, { recursive: true, force: true });
    else log(`state kept in ${stateDir}`);
  }
}

/** A free loopback port for a batch's code-servers. */
export function tourPort(): Promise<number> {
  return freePort(TOUR_HOST);
}
