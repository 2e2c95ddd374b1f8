// What the panel tours (scripts/panel-tour.ts, scripts/panel-tour-runs.ts) share: their frame
// (runTour), reading the extension's task DB as it is on disk, polling until something holds,
// asking the gateway about a ticket, and driving the panel's cards by real clicks with a
// screenshot per stage.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Browser, Frame, Locator, Page } from 'playwright-core';
import initSqlJs, { type SqlJsStatic } from 'sql.js';
import { taskLogsDir } from '../../src/agent/runtime/segment-logs';
import { systemClock } from '../../src/core/clock';
import { personalTasksDir } from '../../src/personal/other-queue';
import { GatewayClient } from '../../src/gateway-client/client';
import { ensureVsCodeTools, REPO_ROOT, type VsCodeTools } from './tools';
import { startCodeServer, type CodeServerOptions, type RunningCodeServer } from './code-server';
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

export interface TaskRow {
  id: string;
  title: string;
  prompt: string;
  status: string;
  session_id: string | null;
  server_ticket_id: string | null;
  failure_reason: string | null;
  history_deleted_at: number | null;
}

export interface TicketRow {
  ticket_id: string;
  ordinal: number;
  end_reason: string | null;
}

/** Reads the extension's task DB file as it is on disk (the store persists every change). */
export class TaskDb {
  private constructor(
    private readonly sql: SqlJsStatic,
    private readonly userData: string,
    private readonly personal: boolean,
  ) {}

  /** `personal`: personal mode's own task database (docs/architecture.md#personal-mode). */
  static async open(userData: string, options: { personal?: boolean } = {}): Promise<TaskDb> {
    return new TaskDb(await initSqlJs(), userData, options.personal ?? false);
  }

  /** The extension's globalStorage: the DB, its lease file and the agents' runtime dir. */
  get storageDir(): string {
    return path.join(this.userData, 'User', 'globalStorage', 'offpeak.off-peak-tasks');
  }

  /** The folder of the task database and its lease file. */
  private get dbDir(): string {
    return this.personal ? personalTasksDir(this.storageDir) : this.storageDir;
  }

  private file(): string {
    return path.join(this.dbDir, 'tasks-index.sqlite');
  }

  private rows<T>(sql: string, params: (string | number)[] = []): T[] {
    const file = this.file();
    if (!existsSync(file)) return [];
    const db = new this.sql.Database(readFileSync(file));
    try {
      const stmt = db.prepare(sql);
      stmt.bind(params);
      const rows: T[] = [];
      while (stmt.step()) rows.push(stmt.getAsObject() as T);
      stmt.free();
      return rows;
    } finally {
      db.close();
    }
  }

  tasks(): TaskRow[] {
    return this.rows<TaskRow>(
      'SELECT off_peak_task_id AS id, title, prompt, status, session_id, server_ticket_id, failure_reason, history_deleted_at FROM off_peak_tasks',
    );
  }

  byPrompt(prefix: string): TaskRow | undefined {
    return this.tasks().find((t) => t.prompt.startsWith(prefix));
  }

  tickets(taskId: string): TicketRow[] {
    return this.rows<TicketRow>('SELECT ticket_id, ordinal, end_reason FROM off_peak_tickets WHERE task_id = ? ORDER BY ordinal', [taskId]);
  }

  ticketsOf(taskId: string): string[] {
    return this.tickets(taskId).map((t) => t.ticket_id);
  }

  /** The agent a task runs with (recorded when its first segment starts). */
  agentOf(taskId: string): string | undefined {
    return this.rows<{ agent: string }>('SELECT agent FROM off_peak_task_runtime WHERE task_id = ?', [taskId])[0]?.agent;
  }

  /** The windows registered on this DB (one row per window's extension host). */
  windows(): { window_id: string; pid: number; workspace_keys: string }[] {
    return this.rows('SELECT window_id, pid, workspace_keys FROM off_peak_windows');
  }

  /** The task's segment dirs in the order they ran (segment-<ordinal>-<startedAt>). */
  segmentDirs(taskId: string): string[] {
    const dir = taskLogsDir(path.join(this.storageDir, 'runtime'), taskId);
    if (!existsSync(dir)) return [];
    // Only the segments' folders: the task's folder also holds its files-changed snapshot.
    return readdirSync(dir)
      .filter((name) => /^segment-\d+-\d+$/.test(name))
      .sort()
      .map((segment) => path.join(dir, segment));
  }

  /**
   * The agent processes of a task's segments that are running (each segment's agent.pid exists
   * while its agent runs): the agent's pid and the pid of the extension host that started it.
   */
  runningAgents(taskId: string): { pid: number; hostPid: number; sessionId: string }[] {
    return this.segmentDirs(taskId).flatMap((dir) => {
      try {
        return [JSON.parse(readFileSync(path.join(dir, 'agent.pid'), 'utf8')) as { pid: number; hostPid: number; sessionId: string }];
      } catch {
        return []; // no pid file: that segment's agent is not running (or just exited)
      }
    });
  }

  /** What the task's agents printed so far, all segments (each segment's agent.log). */
  agentOutput(taskId: string): string {
    return this.segmentDirs(taskId)
      .map((dir) => path.join(dir, 'agent.log'))
      .filter((file) => existsSync(file))
      .map((file) => readFileSync(file, 'utf8'))
      .join('');
  }

  /** The leader lease file beside the DB (`{holder, token, acquiredAt, ttlMs, pid, host}`). */
  lease(): { holder: string; pid?: number } | undefined {
    const file = path.join(this.dbDir, 'tasks-index.lease');
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { holder: string; pid?: number }) : undefined;
  }
}

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
  private static shotNo = 0;
  frame!: Frame;

  constructor(
    readonly page: Page,
    readonly db: TaskDb,
    private readonly artifacts: string,
    private readonly log: TourLog,
  ) {}

  async shot(name: string): Promise<void> {
    const file = path.join(this.artifacts, `${String(++Tour.shotNo).padStart(2, '0')}-${name}.png`);
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
  browser: Browser;
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

/**
 * The frame of a tour script: `--no-build` / `--keep`, the build, a clean artifacts dir
 * (test/artifacts/<name>), the tools, a temp state dir with the built extension installed, a
 * headless browser; then `body`; then everything stopped, and `<name>: passed` or `FAILED` with
 * exit code 1.
 */
export function runTour(name: string, body: (run: TourRun) => Promise<void>): void {
  const { values: opts } = parseArgs({
    options: { 'no-build': { type: 'boolean', default: false }, keep: { type: 'boolean', default: false } },
    allowPositionals: false,
  });
  const log = tourLog(name);
  const main = async (): Promise<void> => {
    if (!opts['no-build']) {
      const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, stdio: 'inherit' });
      if (build.status !== 0) throw new Error('npm run build failed');
    }
    const artifacts = path.join(REPO_ROOT, 'test', 'artifacts', name);
    rmSync(artifacts, { recursive: true, force: true });
    mkdirSync(artifacts, { recursive: true });
    const tools = ensureVsCodeTools({ browser: true });
    const stateDir = mkdtempSync(path.join(os.tmpdir(), `offpeak-${name}-`));
    installExtension(path.join(stateDir, 'extensions'));
    const stops: (() => Promise<void>)[] = [];
    let failureShot: (() => Promise<void>) | undefined;
    const browser = await launchBrowser(tools);
    try {
      await body({
        tools,
        browser,
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
          const server = await startCodeServer({ tools, stateDir, smokeTestDriver: false, host: TOUR_HOST, ...settings });
          stops.unshift(() => server.stop()); // before the gateways its extension talks to
          return server;
        },
        onFailure: (shot) => (failureShot = shot),
        openPanel: async (server, folder) => {
          const page = await openWorkbench(browser, `${server.origin}/?folder=${encodeURIComponent(folder)}`, server.password);
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
      await browser.close().catch(() => undefined);
      for (const stop of stops) await stop().catch(() => undefined);
      if (!opts.keep) rmSync(stateDir, { recursive: true, force: true });
      else log(`state kept in ${stateDir}`);
    }
  };
  main().catch((err: unknown) => {
    console.error(`${name}: FAILED: ${(err as Error).stack ?? String(err)}`);
    process.exit(1);
  });
}
