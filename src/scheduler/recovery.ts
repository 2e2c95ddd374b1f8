/**
 * Start-up recovery (seed 07 branch 12): a task left `running` (or legacy `awaiting`) by a host
 * that is gone goes back to `queued`, keeping its session, started_at and queued_at, so the next
 * segment resumes the same session. A task whose agent still runs under a live host (another
 * window) is left alone; an agent orphaned by a dead host is stopped first, so two processes never
 * work on one session.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TaskStore } from '../store';

export interface RecoveryReport {
  requeued: string[];
  stillRunning: string[];
  killedOrphans: number[];
}

interface PidRecord {
  pid: number;
  sessionId?: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Linux: the parent pid from /proc; undefined elsewhere or when unreadable. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Linux: whether the process's command line mentions the session (it is really our agent). */
function runsSession(pid: number, sessionId: string | undefined): boolean {
  if (!sessionId) return false;
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(sessionId);
  } catch {
    return false;
  }
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

export async function recoverInterrupted(store: TaskStore, runtimeDir: string): Promise<RecoveryReport> {
  const report: RecoveryReport = { requeued: [], stillRunning: [], killedOrphans: [] };
  const running = store.read((tx) => tx.tasks.list({ status: ['running', 'awaiting'] }));
  const toRequeue: string[] = [];
  for (const task of running) {
    let liveUnderHost = false;
    for (const file of pidFilesOf(runtimeDir, task.id)) {
      let record: PidRecord;
      try {
        record = JSON.parse(fs.readFileSync(file, 'utf8')) as PidRecord;
      } catch {
        fs.rmSync(file, { force: true });
        continue;
      }
      if (!record.pid || !alive(record.pid) || (process.platform === 'linux' && !runsSession(record.pid, record.sessionId))) {
        fs.rmSync(file, { force: true }); // stale: the agent is gone (or the pid was reused)
        continue;
      }
      const parent = parentOf(record.pid);
      if (parent !== undefined && parent > 1 && alive(parent)) {
        liveUnderHost = true; // another window's segment: leave it
        continue;
      }
      if (parent === undefined && process.platform !== 'linux') {
        liveUnderHost = true; // cannot tell: do not take the session away from a possibly live run
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
  if (toRequeue.length > 0) {
    report.requeued = await store.mutate((tx) =>
      toRequeue.filter((id) => {
        const task = tx.tasks.get(id);
        if (!tx.tasks.requeue(id)) return false;
        if (task?.serverTicketId) tx.tickets.endSegment(task.serverTicketId, 'interrupted');
        return true;
      }),
    );
  }
  return report;
}
