/**
 * Every process of a segment, however it detached (docs/flows.md#segments). The agent runs in its
 * own process group and the group is SIGKILLed when the segment ends, but a command the model ran
 * can leave the group (`setsid`, `setpgid`, a daemonizing double fork) and would outlive the
 * segment. So the agent is started with a unique tag in its environment, which every process it
 * starts inherits, and at the segment's end every process carrying the tag is killed too.
 *
 * Linux: the tag is read from `/proc/<pid>/environ` (readable for the user's own processes). A
 * process that cleared or rewrote its environment (`env -i`) is not found this way.
 * macOS, Windows and other systems have no /proc: there only the process group (Unix) or the
 * process tree (`taskkill /T`, Windows) is stopped.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** The environment variable that marks a segment's processes. Not a secret: only a name. */
export const SEGMENT_TAG_ENV = 'OFFPEAK_SEGMENT_TAG';

export function newSegmentTag(): string {
  return crypto.randomUUID();
}

export interface TaggedKillOptions {
  /** Where the process table is (tests may point at another). */
  procDir?: string;
  /** Never these (the host itself). */
  exceptPids?: readonly number[];
  kill?: (pid: number, signal: NodeJS.Signals) => void;
}

/** The pids whose environment holds `SEGMENT_TAG_ENV=<tag>` (Linux; empty where /proc is missing). */
export function findTaggedProcesses(tag: string, options: TaggedKillOptions = {}): number[] {
  const procDir = options.procDir ?? '/proc';
  const needle = Buffer.from(`${SEGMENT_TAG_ENV}=${tag}\0`);
  let names: string[];
  try {
    names = fs.readdirSync(procDir);
  } catch {
    return [];
  }
  const except = new Set([process.pid, ...(options.exceptPids ?? [])]);
  const found: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (except.has(pid)) continue;
    let environ: Buffer;
    try {
      environ = fs.readFileSync(path.join(procDir, name, 'environ'));
    } catch {
      continue; // gone, or another user's process
    }
    // The first variable has no NUL before it; every later one does.
    if (environ.subarray(0, needle.length).equals(needle) || environ.includes(Buffer.concat([Buffer.from([0]), needle]))) found.push(pid);
  }
  return found;
}

/**
 * SIGKILLs every process of the segment that is still there. Killing can let a parent start
 * another child before it dies, so the scan repeats until it finds nothing (a few rounds at most).
 * Returns how many processes were killed.
 */
export function killTaggedProcesses(tag: string, options: TaggedKillOptions = {}): number {
  if (process.platform !== 'linux' && !options.procDir) return 0;
  const kill = options.kill ?? ((pid: number, signal: NodeJS.Signals) => process.kill(pid, signal));
  let killed = 0;
  for (let round = 0; round < 5; round++) {
    const pids = findTaggedProcesses(tag, options).filter((pid) => !isZombie(pid, options.procDir ?? '/proc'));
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // already gone
      }
    }
  }
  return killed;
}

/** A killed process stays in the table as a zombie until its parent reaps it: nothing left to kill. */
function isZombie(pid: number, procDir: string): boolean {
  try {
    const stat = fs.readFileSync(path.join(procDir, String(pid), 'stat'), 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true; // gone
  }
}
