/**
 * Every process of a segment, however it detached (docs/flows.md#segments). The agent runs in its
 * own process group (Windows: its tree) and that is stopped when the segment ends, but a command
 * the model ran can leave the group (`setsid`, `setpgid`, a daemonizing double fork) and would
 * outlive the segment. So the agent is started with a unique tag in its environment, which every
 * process it starts inherits, and at the segment's end every process carrying the tag is killed
 * too. Only Linux can read another process's environment (src/core/process-control.ts); macOS
 * and Windows stop the group or tree only.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { processesWithEnv, systemProcessHost, type ProcessHost } from '../../core/process-control';

/** The environment variable that marks a segment's processes. Not a secret: only a name. */
export const SEGMENT_TAG_ENV = 'OFFPEAK_SEGMENT_TAG';

export function newSegmentTag(): string {
  return crypto.randomUUID();
}

/**
 * SIGKILLs every process of the segment that is still there. Killing can let a parent start
 * another child before it dies, so the scan repeats until it finds nothing (a few rounds at most).
 * Returns how many processes were killed.
 */
export function killTaggedProcesses(tag: string, host: Pick<ProcessHost, 'procDir' | 'kill'> = systemProcessHost()): number {
  let killed = 0;
  for (let round = 0; round < 5; round++) {
    const pids = processesWithEnv(SEGMENT_TAG_ENV, tag, host);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        host.kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // already gone
      }
    }
  }
  return killed;
}

/** What a segment's pid record (`agent.pid`) holds; recovery reads it (src/scheduler/recovery.ts). */
export interface SegmentPidRecord {
  /** The process the segment runs now: the agent, or its check command (docs/flows.md#checks). */
  pid: number | undefined;
  windowId: string | undefined;
  sessionId: string;
  taskId: string;
  tag?: string;
}

/** Writes the pid record, with the window's process and machine, readable by the user only. */
export function writeSegmentPidRecord(file: string, record: SegmentPidRecord): void {
  const { pid, ...rest } = record;
  fs.writeFileSync(file, JSON.stringify({ pid, hostPid: process.pid, host: os.hostname(), ...rest }), { mode: 0o600 });
}
