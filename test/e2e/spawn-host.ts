// Starts a window (the real HostEngine) as its own process through host-process.ts, so a test can
// kill it with SIGKILL mid-run; collects the JSON lines it prints.
import { spawn, type ChildProcess } from 'node:child_process';
import { tsNodeArgv } from '../integration/runtime-helpers';

export interface HostLine {
  ready?: boolean;
  recovery?: { requeued: string[]; killedOrphans: number[] };
  created?: string;
  event?: { type: string; taskId: string; pid?: number; sessionId?: string; resume?: boolean; outcome?: { kind: string } };
  /** Personal mode: whether this window runs the local authority, and where it is. */
  authority?: { serving: boolean; socketPath: string };
  /** Personal mode: this window started serving the authority. */
  serving?: { at: number; takeover: boolean };
}

/** `env`: added to the window's environment (e.g. a secret that must stay out of argv). */
export function spawnHost(
  options: object,
  env: Record<string, string> = {},
): { child: ChildProcess; lines: HostLine[]; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [...tsNodeArgv('test/e2e/host-process.ts'), JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const lines: HostLine[] = [];
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buffer.slice(0, nl)) as HostLine);
      buffer = buffer.slice(nl + 1);
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(`[host ${child.pid}] ${chunk.toString()}`));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, lines, exited };
}
