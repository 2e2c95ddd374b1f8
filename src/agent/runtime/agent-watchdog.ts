/**
 * An agent never outlives its window by more than about a second (docs/flows.md#segments): a
 * window that crashes (SIGKILL, an extension host killed) runs no `finish`, and its agent would go
 * on, sending its login to a ticket proxy that is gone, until another window's recovery found it.
 * So each segment gets a watchdog process holding a pipe from the window: when the window's end of
 * the pipe closes without a word (its process ended), the watchdog kills the agent's process group
 * (Unix) or process tree (`taskkill /T /F`, Windows; where taskkill fails, as Wine 8's has no `/T`,
 * at least the agent itself), then exits. A segment the window ends itself tells the watchdog
 * "stop" (`done`); it also leaves once the agent is gone.
 */
import { spawn } from 'node:child_process';
import { windowsTreeKillCommand } from '../../core/process-control';

// argv: the agent's pid, then on Windows the tree kill command (program and arguments).
const WATCHDOG = `
const pid = Number(process.argv[1]);
const treeKill = process.argv.slice(2);
let released = false;
const gone = () => {
  try { process.kill(treeKill.length ? pid : -pid, 0); return false; } catch { return true; }
};
const killAgent = () => {
  if (treeKill.length) {
    const done = require('node:child_process').spawnSync(treeKill[0], treeKill.slice(1), { stdio: 'ignore', windowsHide: true });
    if (done.status !== 0) { try { process.kill(pid, 'SIGKILL'); } catch {} }
  } else { try { process.kill(-pid, 'SIGKILL'); } catch {} }
};
const end = () => { if (!released) killAgent(); process.exit(0); };
process.stdin.on('data', (d) => { if (String(d).includes('stop')) released = true; });
process.stdin.on('end', end);
process.stdin.on('error', end);
setInterval(() => gone() && process.exit(0), 1000);
`;

export interface AgentWatchdog {
  /** The segment ended normally: the watchdog leaves without killing anything. */
  release(): void;
}

export interface WatchdogPlatform {
  platform: NodeJS.Platform;
  /** The runtime that runs the watchdog: the extension host's own (Electron as Node), or node. */
  execPath: string;
  env: NodeJS.ProcessEnv;
}

const systemPlatform = (): WatchdogPlatform => ({ platform: process.platform, execPath: process.execPath, env: process.env });

/** What runs the watchdog of the agent `agentPid` (its process group leader on Unix). */
export function watchdogCommand(
  agentPid: number,
  host: WatchdogPlatform = systemPlatform(),
): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  const windows = host.platform === 'win32';
  // taskkill from the system folder, never from PATH or the working directory.
  const treeKill = windows ? windowsTreeKillCommand(agentPid, host).flat() : [];
  const env: NodeJS.ProcessEnv = { ELECTRON_RUN_AS_NODE: '1' };
  if (windows && host.env.SystemRoot) env.SystemRoot = host.env.SystemRoot;
  return { command: host.execPath, args: ['-e', WATCHDOG, String(agentPid), ...treeKill], env };
}

/** Watches a segment's agent (spawned in its own process group on Unix) until the segment ends. */
export function watchAgent(segment: { pid: number | undefined; done: Promise<unknown> }, host: WatchdogPlatform = systemPlatform()): void {
  if (segment.pid === undefined) return;
  const watchdog = startAgentWatchdog(segment.pid, host);
  const release = () => watchdog.release();
  segment.done.then(release, release);
}

export function startAgentWatchdog(agentPid: number, host: WatchdogPlatform = systemPlatform()): AgentWatchdog {
  const { command, args, env } = watchdogCommand(agentPid, host);
  // Its own group (Unix): whatever ends the window's group does not end the watchdog with it.
  const child = spawn(command, args, { stdio: ['pipe', 'ignore', 'ignore'], env, detached: host.platform !== 'win32', windowsHide: true });
  child.on('error', () => undefined);
  child.stdin!.on('error', () => undefined);
  child.unref();
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  return {
    release: () => {
      if (child.stdin!.writable) child.stdin!.end('stop\n');
    },
  };
}
