/**
 * Start-up recovery (docs/flows.md#recovery): a task left `running` (or legacy `awaiting`) by a host
 * that is gone goes back to `queued`, keeping its session, started_at and queued_at, so the next
 * segment resumes the same session. A task whose agent still runs under a live host (another
 * window) is left alone; an agent orphaned by a dead host is stopped first, so two processes never
 * work on one session.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TaskStore } from '../store';
import { isProcessAlive } from '../core/process-alive';

export interface RecoveryReport {
  requeued: string[];
  stillRunning: string[];
  killedOrphans: number[];
}

interface PidRecord {
  pid: number;
  /** The host (window) process that spawned the agent. */
  hostPid?: number;
  sessionId?: string;
}


/** The parent pid (Linux: /proc; elsewhere: ps); undefined when it cannot be told. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return psField(pid, 'ppid=');
  }
}

/** The command line (Linux: /proc; elsewhere: ps); undefined when it cannot be told (Windows). */
function commandLineOf(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    const out = ps(pid, 'command=');
    return out === undefined ? undefined : out;
  }
}

function ps(pid: number, field: string): string | undefined {
  if (process.platform === 'win32') return undefined;
  try {
    return execFileSync('ps', ['-o', field, '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

function psField(pid: number, field: string): number | undefined {
  const out = ps(pid, field);
  return out === undefined ? undefined : Number(out);
}

function pidFilesOf(runtimeDir: string, taskId: string): string[] {
  const dir = path.join(runtimeDir, 'tasks', taskId);
  try {
    return fs
      .readdirSync(dir)
      .map((segment) => path.join(dir, segment, 'agent.pid'))
      .filter((file) => fs.existsSync(file));
  } catch {
    return [];
  }
}

/** Puts tasks back in the queue, returning those it requeued (the window's TaskLifecycle.requeueInterrupted). */
export type RequeueInterrupted = (taskIds: readonly string[]) => Promise<string[]>;

/**
 * @param runsHere tasks this window's own runtime is running right now. A window that loses the
 * lease (one failed tick is enough) and regains it recovers again; its own agents are not orphans.
 */
export async function recoverInterrupted(store: TaskStore, runtimeDir: string, requeue: RequeueInterrupted, runsHere: (taskId: string) => boolean = () => false): Promise<RecoveryReport> {
  const report: RecoveryReport = { requeued: [], stillRunning: [], killedOrphans: [] };
  const running = store.read((tx) => tx.tasks.list({ status: ['running', 'awaiting'] }));
  const toRequeue: string[] = [];
  for (const task of running) {
    if (runsHere(task.id)) {
      report.stillRunning.push(task.id);
      continue;
    }
    let liveUnderHost = false;
    for (const file of pidFilesOf(runtimeDir, task.id)) {
      let record: PidRecord;
      try {
        record = JSON.parse(fs.readFileSync(file, 'utf8')) as PidRecord;
      } catch {
        fs.rmSync(file, { force: true });
        continue;
      }
      if (!record.pid || !isProcessAlive(record.pid)) {
        fs.rmSync(file, { force: true }); // stale: the agent is gone
        continue;
      }
      const command = commandLineOf(record.pid);
      if (command !== undefined && record.sessionId && !command.includes(record.sessionId)) {
        fs.rmSync(file, { force: true }); // the pid was reused by another program
        continue;
      }
      // Still the child of the live host that started it (another window): leave it alone.
      const hostAlive = record.hostPid !== undefined && record.hostPid !== process.pid && isProcessAlive(record.hostPid);
      const parent = parentOf(record.pid);
      if (hostAlive && (parent === undefined || parent === record.hostPid)) {
        liveUnderHost = true;
        continue;
      }
      if (command === undefined) {
        // Cannot verify the process is our agent (Windows): do not kill; its host is gone, so it
        // lost its proxy and ends by itself. The task is requeued.
        fs.rmSync(file, { force: true });
        continue;
      }
      try {
        process.kill(process.platform === 'win32' ? record.pid : -record.pid, 'SIGKILL');
      } catch {
        try {
          process.kill(record.pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      report.killedOrphans.push(record.pid);
      fs.rmSync(file, { force: true });
    }
    if (liveUnderHost) report.stillRunning.push(task.id);
    else toRequeue.push(task.id);
  }
  if (toRequeue.length > 0) report.requeued = await requeue(toRequeue);
  return report;
}
