/**
 * Personal mode's local authority (issue 21; docs/architecture.md#personal-mode). Writes its keys
 * into bench/results/personal.json (merged: other keys of that file are left as they are) and
 * prints them.
 *
 * local_authority_ready_ms  a window's first need -> the authority answers it: `LocalAuthority.start`
 *                           in a fresh globalStorage (the local key made, the lock taken, the sql.js
 *                           ticket file created, the gateway listening) until an authenticated
 *                           availability request succeeds. In-process, sql.js already loaded (a
 *                           window's task store loaded it). Median of the runs. Goal: at most 500.
 * handover_ms               the window running the authority closes (SIGTERM: its clean shutdown)
 *                           -> another window's authority answers at the name it publishes
 *                           (each connection proven, personal/channel-proof.ts). Separate
 *                           processes, timed from this one. Median. Goal: at most 2,000.
 * handover_crash_ms         the same when the running window is killed (SIGKILL).
 * personal_load             the machine's 1-minute load average before and after the runs.
 * usage: npm run bench -- personal
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemClock } from '../src/core/clock';
import { GatewayClient } from '../src/gateway-client/client';
import { AUTHORITY_URL } from '../src/personal/authority-channel';
import { authorityPaths, readDiscovery } from '../src/personal/authority-files';
import { connectPublished, LocalAuthority } from '../src/personal/local-authority';
import { loadSqlJs } from '../src/store/db/sqljs';
import { SHORT, sized } from './mode';
import { machineLoad } from './proxy-stream';

const median = (s: number[]) => [...s].sort((a, b) => a - b)[Math.floor(s.length / 2)];

async function readyOnce(): Promise<number> {
  const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-bench-personal-'));
  try {
    const t0 = performance.now();
    const authority = await LocalAuthority.start({
      storageDir,
      settings: () => ({ hours: 'always', modelBaseUrl: 'http://127.0.0.1:9' }),
      modelApiKey: async () => undefined,
    });
    const client = new GatewayClient({
      baseUrl: authority.url,
      channel: authority.connect,
      apiKey: () => authority.key,
      clock: systemClock,
    });
    await client.availability();
    const ms = performance.now() - t0;
    await authority.dispose();
    return ms;
  } finally {
    fs.rmSync(storageDir, { recursive: true, force: true });
  }
}

function startWindow(storageDir: string): { child: ChildProcess; next: () => Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'personal-window.ts'), storageDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  return { child, next: () => (lines.length > 0 ? Promise.resolve(lines.shift()!) : new Promise((resolve) => waiters.push(resolve))) };
}

async function handoverOnce(signal: 'SIGTERM' | 'SIGKILL'): Promise<number> {
  const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-bench-personal-'));
  const a = startWindow(storageDir);
  let b: ReturnType<typeof startWindow> | undefined;
  try {
    if ((await a.next()) !== 'serving') throw new Error('window A should run the authority');
    b = startWindow(storageDir);
    if ((await b.next()) !== 'following') throw new Error('window B should follow');
    const key = fs.readFileSync(authorityPaths(storageDir).key, 'utf8').trim();
    const client = new GatewayClient({
      baseUrl: AUTHORITY_URL,
      channel: connectPublished(storageDir),
      apiKey: () => key,
      clock: systemClock,
      timeouts: { readMs: 500 },
    });
    await client.availability();
    const exited = new Promise((resolve) => a.child.once('exit', resolve));
    const t0 = performance.now();
    a.child.kill(signal);
    for (;;) {
      try {
        await client.availability();
        // Answered by the new runner, not the closing one.
        if (a.child.exitCode !== null || a.child.signalCode !== null) break;
      } catch {
        // refused in the gap
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    const ms = performance.now() - t0;
    await exited;
    if (readDiscovery(authorityPaths(storageDir))?.pid !== b.child.pid || (await b.next()) !== 'serving')
      throw new Error('window B should have taken over');
    return ms;
  } finally {
    for (const w of [a, b]) if (w && w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    fs.rmSync(storageDir, { recursive: true, force: true });
  }
}

/** Sets this bench's keys in bench/results/personal.json, keeping any others (a full run only). */
function publishMerged(result: Record<string, unknown>): void {
  console.log(JSON.stringify(result, null, 2));
  if (SHORT) {
    console.log('(short run: figures from small sizes, not comparable; bench/results/personal.json left as it is)');
    return;
  }
  const file = path.join(__dirname, 'results', 'personal.json');
  let existing: Record<string, unknown> = {};
  try {
    existing = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    // first run
  }
  const goals = { ...(existing.goals as Record<string, unknown> | undefined), ...(result.goals as Record<string, unknown>) };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ ...existing, ...result, goals }, null, 2)}\n`);
}

async function main(): Promise<void> {
  const loadAtStart = machineLoad();
  await loadSqlJs();
  const runs = sized(9, 2);
  const ready: number[] = [];
  for (let i = 0; i < runs; i++) ready.push(await readyOnce());
  const handover: number[] = [];
  const crash: number[] = [];
  for (let i = 0; i < sized(5, 1); i++) {
    handover.push(await handoverOnce('SIGTERM'));
    crash.push(await handoverOnce('SIGKILL'));
  }
  const round = (n: number) => Math.round(n);
  publishMerged({
    local_authority_ready_ms: round(median(ready)),
    local_authority_ready_runs: ready.map(round),
    handover_ms: round(median(handover)),
    handover_runs: handover.map(round),
    handover_crash_ms: round(median(crash)),
    handover_crash_runs: crash.map(round),
    goals: { local_authority_ready_ms: 500, handover_ms: 2000 },
    // Every figure here is wall-clock time on a shared machine: the load says how busy it was.
    personal_load: { before: loadAtStart, after: machineLoad() },
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
