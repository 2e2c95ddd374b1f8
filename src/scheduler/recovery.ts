/**
 * Recovery (docs/flows.md#recovery): a task left `running` (or legacy `awaiting`) by a window that
 * is gone goes back to `queued`, keeping its session, started_at and queued_at, so the next
 * segment resumes the same session. It runs when a window becomes the lease holder and again on
 * every lease tick of the holder, so a crashed window that was not the holder is noticed within
 * one tick. A task whose agent belongs to a live window is left alone; an agent (and whatever it
 * started in its process group) orphaned by a dead window is stopped first, so two processes
 * never work on one session.
 *
 * Which window runs a task is told by the segment's pid record (`agent.pid`: the agent's pid, the
 * window's process, id and machine, the session): the runtime writes it before the task is marked
 * running and removes it only once the segment's outcome is applied. A record of another machine
 * is never judged from here.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TaskStore } from '../store';
import { isProcessAlive } from '../core/process-alive';
import {
  killLeftovers,
  killTree,
  processesWithEnv,
  processTable,
  systemProcessHost,
  type ProcessHost,
  type ProcessRow,
} from '../core/process-control';

export interface RecoveryReport {
  requeued: string[];
  stillRunning: string[];
  /** Process groups stopped: an orphaned agent's, or what its group still held after it ended. */
  killedOrphans: number[];
}

/** What a segment's `agent.pid` holds (segment-runner.ts writes it). */
interface PidRecord {
  pid: number;
  /** The host (window) process that spawned the agent. */
  hostPid?: number;
  /** The window whose runtime spawned it (records of older builds have none). */
  windowId?: string;
  sessionId?: string;
  /** The machine the window runs on (records of older builds have none: this machine assumed). */
  host?: string;
}

export interface RecoveryOptions {
  /**
   * Tasks this window's own runtime is running (or starting) right now. A window that loses the
   * lease (one failed tick is enough) and regains it recovers again; its own agents are not orphans.
   */
  runsHere?: (taskId: string) => boolean;
  /** This window's id: a record naming it whose task `runsHere` does not know is an orphan. */
  windowId?: string;
  /**
   * Whether another window with this id is registered, alive, with this process id. Tells the
   * windows of this same process apart (tests run several engines in one process; VS Code runs
   * one per process), and spares the parent check for records that name their window.
   */
  isLiveWindow?: (windowId: string, pid: number) => boolean;
  /**
   * A running task with no pid record at all: requeue it? Default yes (a window becoming the
   * holder). The holder's tick passes a stricter rule: the record may be written in a moment.
   */
  requeueUnrecorded?: (taskId: string) => boolean;
  /** How long to wait for killed agents to be gone before their tasks are requeued. */
  killWaitMs?: number;
  /** This machine's name (default os.hostname()); injectable for tests. */
  host?: string;
  /** How processes are looked up and stopped (injectable platform). */
  processes?: ProcessHost;
}

/** The process table's row of `pid` (read once per record; undefined when it has none). */
async function rowOf(pid: number, processes: ProcessHost): Promise<ProcessRow | undefined> {
  return (await processTable(processes))?.find((row) => row.pid === pid);
}

/**
 * Whether process group `pgid` still holds a process started by the agent of `record` after the
 * agent itself ended (a command that double-forked out of its tree). Linux only (/proc): a member
 * counts when it carries the agent's marker, the `OFFPEAK_AGENT_PARENT_PID` of the dead window,
 * in its environment; elsewhere nothing is claimed, so nothing is killed.
 */
function groupHoldsAgentRemnants(pgid: number, record: PidRecord, processes: ProcessHost): boolean {
  if (record.hostPid === undefined || processes.platform === 'win32') return false;
  return processesWithEnv('OFFPEAK_AGENT_PARENT_PID', String(record.hostPid), processes, { pgid }).length > 0;
}

async function waitGone(pids: readonly number[], ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (pids.some((pid) => isProcessAlive(pid)) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
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

/** What one pid record says about its task: its window lives, or it is gone (and what was killed). */
type RecordVerdict = { kind: 'live' } | { kind: 'gone'; killed?: number };

async function judgeRecord(file: string, record: PidRecord, options: RecoveryOptions): Promise<RecordVerdict> {
  // Another machine's window (two Remote-SSH hosts sharing a home folder): its pids mean nothing
  // here, so it is never judged dead from here; that machine's windows recover it.
  if (record.host !== undefined && record.host !== (options.host ?? os.hostname())) return { kind: 'live' };
  const processes = options.processes ?? systemProcessHost();
  const agentAlive = !!record.pid && isProcessAlive(record.pid);
  // The table is read only when needed (on Windows each read starts PowerShell), and once.
  let row: Promise<ProcessRow | undefined> | undefined;
  const agentRow = () => (row ??= rowOf(record.pid, processes));
  // Its window runs: that window applies the segment's outcome, whatever the agent does.
  if (await hostLives(record, agentRow, agentAlive, options)) return { kind: 'live' };
  let killed: number | undefined;
  if (agentAlive) {
    // Only our agent is killed, not a program that got its pid: its session id is in our agent's
    // command line; where the table tells no command line (Wine), its parent is still the dead
    // window's pid (Windows keeps a parent's id). An agent that cannot be verified is left alone.
    if (isOurAgent(record, await agentRow(), processes) && (await killTree(record.pid, processes)).length > 0) killed = record.pid;
  } else if (
    record.pid &&
    groupHoldsAgentRemnants(record.pid, record, processes) &&
    (await killLeftovers(record.pid, processes)).length > 0
  ) {
    // The agent ended, but its group still holds something it started (the group's id cannot
    // have been reused while no process has that pid and the group is not empty).
    killed = record.pid;
  }
  fs.rmSync(file, { force: true });
  return { kind: 'gone', killed };
}

function isOurAgent(record: PidRecord, row: ProcessRow | undefined, processes: ProcessHost): boolean {
  if (row === undefined) return false;
  if (row.command !== undefined) return !record.sessionId || row.command.includes(record.sessionId);
  return processes.platform === 'win32' && record.hostPid !== undefined && row.ppid === record.hostPid;
}

/** Whether the window that spawned the record's agent still runs (and so will apply its outcome). */
async function hostLives(
  record: PidRecord,
  agentRow: () => Promise<ProcessRow | undefined>,
  agentAlive: boolean,
  options: RecoveryOptions,
): Promise<boolean> {
  if (record.hostPid === undefined) return false;
  const registered =
    record.windowId !== undefined &&
    record.windowId !== options.windowId &&
    (options.isLiveWindow?.(record.windowId, record.hostPid) ?? false);
  // A window of this very process: only another, registered one is alive for us.
  if (record.hostPid === process.pid) return registered;
  if (!isProcessAlive(record.hostPid)) return false;
  if (registered || !agentAlive) return true;
  // A record of an older build (no window id): a live agent that is no longer the child of that
  // pid means its window died and the pid was reused.
  const row = await agentRow();
  return row === undefined || row.ppid === record.hostPid;
}

/**
 * @param runsHere see RecoveryOptions.runsHere (kept positional for callers of the first version).
 */
export async function recoverInterrupted(
  store: TaskStore,
  runtimeDir: string,
  requeue: RequeueInterrupted,
  runsHere: (taskId: string) => boolean = () => false,
  options: Omit<RecoveryOptions, 'runsHere'> = {},
): Promise<RecoveryReport> {
  const opts: RecoveryOptions = { ...options, runsHere };
  const report: RecoveryReport = { requeued: [], stillRunning: [], killedOrphans: [] };
  const running = store.read((tx) => tx.tasks.list({ status: ['running', 'awaiting'] }));
  const toRequeue: string[] = [];
  for (const task of running) {
    if (runsHere(task.id)) {
      report.stillRunning.push(task.id);
      continue;
    }
    let live = false;
    let gone = false;
    for (const file of pidFilesOf(runtimeDir, task.id)) {
      let record: PidRecord;
      try {
        record = JSON.parse(fs.readFileSync(file, 'utf8')) as PidRecord;
      } catch {
        fs.rmSync(file, { force: true });
        continue;
      }
      const verdict = await judgeRecord(file, record, opts);
      if (verdict.kind === 'live') live = true;
      else {
        gone = true;
        if (verdict.killed !== undefined) report.killedOrphans.push(verdict.killed);
      }
    }
    if (live) report.stillRunning.push(task.id);
    else if (gone || (opts.requeueUnrecorded?.(task.id) ?? true)) toRequeue.push(task.id);
  }
  if (report.killedOrphans.length > 0) await waitGone(report.killedOrphans, opts.killWaitMs ?? 2_000);
  if (toRequeue.length > 0) report.requeued = await requeue(toRequeue);
  return report;
}
