/**
 * Drives N real window processes (engine-workers/idle-window.ts) on one globalStorage holding
 * `tasks` finished tasks and nothing live, against the real reference gateway on loopback, for
 * `seconds`, and reports what they did meanwhile.
 * Shared by the idle integration test and bench/idle.bench.ts (not a test file itself).
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { machineTimeZone, wallTimeAt } from '../../src/core/zoned-time';
import { leaseFileFor, TaskStore, type StoreTx } from '../../src/store';
import { readGeneration } from '../../src/store/db/db-file';
import { readLeaseFile } from '../../src/store/db/lease-file';
import { startWorld, USER_KEY } from '../e2e/gateway-fixture';
import { TSX_IMPORT } from './runtime-helpers';
import { referenceAgentArgv } from '../support/source-bundle';

const WORKER = path.join(__dirname, 'engine-workers', 'idle-window.ts');
const PROMPT = 'Refactor the request pipeline so that retries are centralised; keep behaviour identical, add tests. '
  .repeat(9)
  .slice(0, 800);

export interface WindowReport {
  windowId: string;
  isLeader: boolean;
  ms: number;
  persists: number;
  reloads: number;
  leaseWrites: number;
  leaseRenewals: number;
  panelSnapshots: number;
  cpuMs: number;
  /** Bytes this window process sent to storage (Linux write_bytes), null elsewhere. */
  storageBytesWritten: number | null;
  /** Bytes passed to write() calls of any kind, pipes and eventfds included (Linux wchar). */
  syscallBytesWritten: number | null;
}

export interface IdleRun {
  reports: WindowReport[];
  /** The DB file (inode, size, mtime, generation) did not change during the measurement. */
  dbFileUnchanged: boolean;
  dbFileBytes: number;
  /** After SIGKILL of the lease holder (when asked): how the lease moved. */
  handover?: { killed: string; newHolder: string; killedAt: number; oldExpiresAt: number; acquiredAt: number };
  stderr: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `schedules` daily schedules, none due for hours (the first 6 h after now, one minute apart, in
 * the machine's zone): idle schedules, as a user with many keeps them (docs/flows.md#schedules-and-chains).
 */
function seedSchedules(tx: StoreTx, schedules: number): void {
  const zone = machineTimeZone();
  const nowMinute = wallTimeAt(tx.now, zone).minuteOfDay;
  for (let i = 0; i < schedules; i++) {
    const at = (nowMinute + 6 * 60 + i) % (24 * 60);
    const draft = {
      title: `Nightly ${i}`,
      prompt: `${i} ${PROMPT}`,
      workspacePath: `/ws/project-${i % 7}`,
      workspaceIdentity: null,
      permissionMode: 'acceptEdits' as const,
      model: null,
      thoughtLevel: null,
      isolation: null,
      checkCommand: null,
    };
    tx.schedules.insert(
      `schedule-${i}`,
      draft,
      i % 3 === 0 ? { kind: 'weekdays', days: [1, 2, 3, 4, 5], at } : { kind: 'daily', at },
      zone,
    );
  }
}

/** 1,000 finished tasks the way they end up after real use: completed (ran, settled) and cancelled. */
async function seed(storageDir: string, tasks: number, schedules = 0): Promise<void> {
  const store = await TaskStore.open({ directory: storageDir, watch: false });
  try {
    await store.mutate((tx) => {
      seedSchedules(tx, schedules);
      for (let i = 0; i < tasks; i++) {
        const id = `done-${i}`;
        tx.tasks.insert({
          id,
          title: `Task ${i}`,
          prompt: `${i} ${PROMPT}`,
          permissionMode: 'acceptEdits',
          workspacePath: `/ws/project-${i % 7}`,
          serverTicketId: `tk-${i}`,
          schedulable: true,
        });
        if (i % 4 === 3) {
          tx.tasks.cancel(id);
        } else {
          tx.tasks.claim(id);
          tx.tasks.markRunning(id, { sessionId: `session-${i}` });
          tx.tasks.complete(id, { filesChanged: i % 5 });
        }
        tx.tasks.markSettled(id);
      }
    });
  } finally {
    await store.close();
  }
}

function fileState(file: string): string {
  const st = fs.statSync(file);
  return `${st.ino}:${st.size}:${st.mtimeMs}:${readGeneration(file)}`;
}

function ask<T>(child: ChildProcess, cmd: string, key: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (msg: Record<string, unknown>) => {
      if (cmd === 'report' ? 'windowId' in msg : key in msg) {
        child.off('message', onMessage);
        resolve(msg as T);
      }
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`window exited (${code}) before answering ${cmd}`)));
    child.send({ cmd });
  });
}

/**
 * Waits until start-up (registrations, the first lease, other windows' reloads) has finished: the
 * windows' counters stay the same for 3 s. A loaded machine (other suites beside this one) only
 * makes that take longer; it cannot start the measurement in the middle of a late reload.
 */
async function settle(children: ChildProcess[]): Promise<void> {
  const counters = async () =>
    JSON.stringify(
      (await Promise.all(children.map((c) => ask<WindowReport>(c, 'report', 'windowId')))).map((r) => [
        r.isLeader,
        r.persists,
        r.reloads,
        r.leaseWrites,
        r.leaseRenewals,
        r.panelSnapshots,
      ]),
    );
  let last = await counters();
  // Bounded: windows that never go quiet are measured anyway, and the measurement shows it.
  for (let quiet = 0, deadline = Date.now() + 60_000; quiet < 3 && Date.now() < deadline;) {
    await sleep(1000);
    const now = await counters();
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
}

/** The window worker bundled like the extension (one JS file, sql-wasm.wasm beside it): no tsx loader thread. */
async function bundleWorker(outDir: string): Promise<string> {
  const esbuild = await import('esbuild');
  const outfile = path.join(outDir, 'idle-window.js');
  await esbuild.build({
    entryPoints: [WORKER],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile,
    logLevel: 'error',
  });
  fs.copyFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'), path.join(outDir, 'sql-wasm.wasm'));
  return outfile;
}

export async function runIdleWindows(options: {
  windows: number;
  tasks: number;
  /** Repeating schedules in the DB besides the tasks, none due during the run (default none). */
  schedules?: number;
  seconds: number;
  killHolder: boolean;
  /** Run the windows as an esbuild bundle (as the extension ships) instead of under tsx. */
  bundled?: boolean;
  /** Extra node flags for the windows (e.g. --cpu-prof). */
  nodeFlags?: string[];
  /** Called as the measurement starts, with the shared storage directory (the bench starts its floor then). */
  onMeasureStart?: (storageDir: string) => void;
}): Promise<IdleRun> {
  const root = fs.mkdtempSync(path.join(tmpdir(), 'offpeak-idle-'));
  const storageDir = path.join(root, 'globalStorage');
  const dbFile = path.join(storageDir, 'tasks-index.sqlite');
  let stderr = '';
  const children: ChildProcess[] = [];
  const world = await startWorld();
  try {
    await seed(storageDir, options.tasks, options.schedules);
    const entry = options.bundled ? await bundleWorker(root) : WORKER;
    const loader = options.bundled ? [] : ['--import', TSX_IMPORT];
    const agentArgv = JSON.stringify(referenceAgentArgv());
    for (let i = 0; i < options.windows; i++) {
      const child = fork(entry, [storageDir, `window-${i}`, agentArgv, world.gateway.url, USER_KEY], {
        execArgv: [...loader, ...(options.nodeFlags ?? [])],
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      });
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      children.push(child);
      await new Promise<void>((resolve, reject) => {
        child.once('message', () => resolve());
        child.once('exit', (code) => reject(new Error(`window-${i} exited (${code}): ${stderr.slice(-2000)}`)));
      });
    }
    await settle(children);
    await Promise.all(children.map((c) => ask(c, 'mark', 'marked')));
    const before = fileState(dbFile);
    options.onMeasureStart?.(storageDir);
    await sleep(options.seconds * 1000);
    const reports = await Promise.all(children.map((c) => ask<WindowReport>(c, 'report', 'windowId')));
    const run: IdleRun = { reports, dbFileUnchanged: fileState(dbFile) === before, dbFileBytes: fs.statSync(dbFile).size, stderr };

    if (options.killHolder) {
      const holderIndex = reports.findIndex((r) => r.isLeader);
      if (holderIndex < 0) throw new Error('no window holds the lease');
      const leaseFile = leaseFileFor(dbFile, 'leader');
      const readLeader = () => readLeaseFile(fs, leaseFile, 'leader');
      children[holderIndex].kill('SIGKILL');
      const killedAt = Date.now();
      await new Promise((r) => children[holderIndex].once('exit', r));
      const old = readLeader();
      if (!old) throw new Error('no lease file while a window held the lease');
      let current = old;
      for (const deadline = Date.now() + 120_000; current?.holder === old.holder && Date.now() < deadline;) {
        await sleep(50);
        current = readLeader() ?? current;
      }
      run.handover = {
        killed: reports[holderIndex].windowId,
        newHolder: current?.holder ?? '',
        killedAt,
        oldExpiresAt: old.expiresAt,
        acquiredAt: current?.acquiredAt ?? NaN,
      };
    }
    run.stderr = stderr;
    return run;
  } finally {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGTERM');
          }),
      ),
    );
    await world.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}
