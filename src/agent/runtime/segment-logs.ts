/**
 * A task's segment logs on disk (`<runtime>/tasks/<task>/segment-<ordinal>-<startedAt>/agent.log`,
 * written by the segment runner) and their replay into a terminal: oldest segment first, a
 * separator per segment, only what was not shown yet, capped so a huge log cannot flood the
 * terminal. The text is the agent's output, untrusted: it is meant for a terminal only.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SegmentEndReason, TicketRecord } from '../../core/types';
import { segmentEndedText } from '../../core/segment-end';

/** One segment's directory of a task. */
export interface SegmentLog {
  dir: string;
  logFile: string;
  /** The ledger ordinal of the ticket the segment ran on (an interrupted segment's ticket runs again). */
  ordinal: number;
  startedAt: number;
  /** Size of agent.log when listed (0 when the agent wrote nothing). */
  bytes: number;
  /** The host process (extension host) running it while its pid file exists; null once it ended. */
  runningInHostPid: number | null;
  /** The machine of that host process (its pid means nothing on another); null in a record older than that field. */
  runningOnHost: string | null;
}

/** Replay limit per call: a terminal's scrollback holds far less than this anyway. */
export const REPLAY_MAX_BYTES = 512 * 1024;

/** A short, bounded look for a line start after a cut, so the replay does not open mid-line. */
const LINE_START_SEARCH_BYTES = 4096;

const SEGMENT_DIR = /^segment-(\d+)-(\d+)$/;

export function taskLogsDir(runtimeDir: string, taskId: string): string {
  return path.join(runtimeDir, 'tasks', taskId);
}

/** The directory of a segment that starts now (the one naming rule, parsed back by listSegmentLogs). */
export function segmentDirOf(runtimeDir: string, taskId: string, ordinal: number, startedAt: number): string {
  return path.join(taskLogsDir(runtimeDir, taskId), `segment-${ordinal}-${startedAt}`);
}

/** The task's segments in the order they ran (ticket ordinal, then start time). */
export async function listSegmentLogs(runtimeDir: string, taskId: string): Promise<SegmentLog[]> {
  const root = taskLogsDir(runtimeDir, taskId);
  let names: string[];
  try {
    names = await fs.readdir(root);
  } catch {
    return [];
  }
  const segments: SegmentLog[] = [];
  for (const name of names) {
    const match = SEGMENT_DIR.exec(name);
    if (!match) continue;
    const dir = path.join(root, name);
    const logFile = path.join(dir, 'agent.log');
    const stat = await fs.stat(logFile).catch(() => undefined);
    segments.push({
      dir,
      logFile,
      ordinal: Number(match[1]),
      startedAt: Number(match[2]),
      bytes: stat?.isFile() ? stat.size : 0,
      ...(await runningIn(dir)),
    });
  }
  return segments.sort((a, b) => a.ordinal - b.ordinal || a.startedAt - b.startedAt);
}

async function runningIn(dir: string): Promise<Pick<SegmentLog, 'runningInHostPid' | 'runningOnHost'>> {
  try {
    const record = JSON.parse(await fs.readFile(path.join(dir, 'agent.pid'), 'utf8')) as { hostPid?: unknown; host?: unknown };
    if (typeof record.hostPid !== 'number') return { runningInHostPid: null, runningOnHost: null };
    return { runningInHostPid: record.hostPid, runningOnHost: typeof record.host === 'string' ? record.host : null };
  } catch {
    return { runningInHostPid: null, runningOnHost: null };
  }
}

const END_REASON_TEXT: Record<SegmentEndReason, string> = {
  completed: 'the task completed',
  failed: 'the task failed',
  cancelled: 'the task was cancelled',
  expired: 'the ticket segment ended; the same session resumed with a new ticket',
  interrupted: 'interrupted; the same session resumed later',
  retaken: 'the ticket was replaced',
  deleted: 'the task was deleted',
  orphan: 'the ticket was dropped',
  parked: 'a question waited for an answer; the ticket was released and the same session resumes once it is answered',
  usage_limit: 'your usage limit was reached; the ticket was released and the same session resumes after the reset',
};

export function segmentHeader(number: number, segment: Pick<SegmentLog, 'ordinal' | 'startedAt'>): string {
  return `\n──── Segment ${number} · ticket ${segment.ordinal} · started ${new Date(segment.startedAt).toLocaleString()} ────\n`;
}

function segmentFooter(number: number, reason: SegmentEndReason | undefined): string {
  // A time-limit end is the normal course of a long task: it reads as such, not as a failure.
  if (reason === 'expired') return `──── ${segmentEndedText(number)} ────\n`;
  return `──── Segment ${number} ended${reason ? `: ${END_REASON_TEXT[reason]}` : ''} ────\n`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export interface ReplayOptions {
  runtimeDir: string;
  taskId: string;
  maxBytes?: number;
  /** This process: a segment whose pid file names it is shown live by its terminal, not from disk. */
  hostPid?: number;
  /**
   * This machine (default os.hostname()): the same pid on another machine sharing the home folder
   * (Remote-SSH hosts on NFS) is another process, whose segment is replayed from disk.
   */
  host?: string;
}

/**
 * What one terminal has shown of a task's logs. Each `next()` returns the output written since
 * the last call (whole new segments, or the rest of one that was still growing), oldest first.
 */
export class SegmentLogReplay {
  /** Bytes of each segment's log already shown; Infinity for a segment shown live. */
  private readonly shownBytes = new Map<string, number>();
  private readonly footerShown = new Set<string>();
  private readonly maxBytes: number;
  private readonly hostPid: number;
  private readonly host: string;

  constructor(private readonly options: ReplayOptions) {
    this.maxBytes = options.maxBytes ?? REPLAY_MAX_BYTES;
    this.hostPid = options.hostPid ?? process.pid;
    this.host = options.host ?? os.hostname();
  }

  /** Whether this process runs the segment: its pid, on this machine (a record without a machine: by pid alone). */
  private runsHere(segment: SegmentLog): boolean {
    return segment.runningInHostPid === this.hostPid && (segment.runningOnHost === null || segment.runningOnHost === this.host);
  }

  /** The segment in `dir` is shown live (attached to its running agent): never replay it from disk. */
  markLive(dir: string): void {
    this.shownBytes.set(dir, Infinity);
    this.footerShown.add(dir);
  }

  /** The number the separators give the segment in `dir` (1 for the first), or undefined when it is not listed. */
  async segmentNumber(dir: string): Promise<number | undefined> {
    const index = (await listSegmentLogs(this.options.runtimeDir, this.options.taskId)).findIndex((s) => s.dir === dir);
    return index >= 0 ? index + 1 : undefined;
  }

  /** The separator that opens the live segment in `dir` (numbered like the replayed ones). */
  async liveHeader(dir: string): Promise<string> {
    const segments = await listSegmentLogs(this.options.runtimeDir, this.options.taskId);
    const index = segments.findIndex((s) => s.dir === dir);
    return index >= 0 ? segmentHeader(index + 1, segments[index]) : `\n──── Segment ${segments.length + 1} ────\n`;
  }

  /**
   * The unseen output, with separators; `tickets` (the task's ledger) say how each ticket's last
   * segment ended. Empty when there is nothing new.
   */
  async next(tickets: readonly Pick<TicketRecord, 'ordinal' | 'endReason'>[] = []): Promise<string> {
    const endReasons = new Map(tickets.map((t) => [t.ordinal, t.endReason ?? undefined]));
    const segments = await listSegmentLogs(this.options.runtimeDir, this.options.taskId);
    const pending = segments.map((segment, index) => {
      const shown = this.shownBytes.get(segment.dir);
      const from = Math.min(shown ?? 0, segment.bytes);
      const runningHere = this.runsHere(segment);
      return { segment, number: index + 1, from, isNew: shown === undefined, runningHere };
    });
    // The budget goes to the newest output first: the end of a long run matters most.
    let budget = this.maxBytes;
    const start = new Map<string, number>();
    let omitted = 0;
    for (const item of [...pending].reverse()) {
      if (item.runningHere) continue;
      const want = item.segment.bytes - item.from;
      const take = Math.min(want, budget);
      budget -= take;
      start.set(item.segment.dir, item.segment.bytes - take);
      omitted += want - take;
    }

    let text = '';
    if (omitted > 0) {
      text += `\n[off-peak] ${formatBytes(omitted)} of older output not shown (the terminal shows the last ${formatBytes(this.maxBytes)}); the full logs are in ${taskLogsDir(this.options.runtimeDir, this.options.taskId)}\n`;
    }
    for (const item of pending) {
      const { segment, number } = item;
      // A segment this process runs (or is starting) is shown live when its terminal attaches.
      if (item.runningHere || this.shownBytes.get(segment.dir) === Infinity) continue;
      if (item.isNew) text += segmentHeader(number, segment);
      const from = start.get(segment.dir) ?? item.from;
      if (from > item.from) text += `[off-peak] … ${formatBytes(from - item.from)} of this segment not shown\n`;
      if (segment.bytes > from) {
        let chunk = await readRange(segment.logFile, from, segment.bytes);
        if (from > 0 && from > item.from) chunk = fromNextLine(chunk);
        text += chunk.toString('utf8');
      }
      this.shownBytes.set(segment.dir, segment.bytes);
      if (segment.runningInHostPid === null && !this.footerShown.has(segment.dir)) {
        const last = pending.every((other) => other.segment.ordinal !== segment.ordinal || other.number <= number);
        if (!text.endsWith('\n')) text += '\n';
        text += segmentFooter(number, last ? endReasons.get(segment.ordinal) : 'interrupted');
        this.footerShown.add(segment.dir);
      }
    }
    return text;
  }
}

async function readRange(file: string, from: number, to: number): Promise<Buffer> {
  const handle = await fs.open(file, 'r');
  try {
    const buffer = Buffer.alloc(to - from);
    let offset = 0;
    while (offset < buffer.length) {
      const { bytesRead } = await handle.read(buffer, offset, buffer.length - offset, from + offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
    }
    return buffer.subarray(0, offset);
  } finally {
    await handle.close();
  }
}

/** After a cut in the middle of a log: start at the next line (also keeps UTF-8 sequences whole). */
function fromNextLine(chunk: Buffer): Buffer {
  const newline = chunk.subarray(0, LINE_START_SEARCH_BYTES).indexOf(0x0a);
  return newline >= 0 ? chunk.subarray(newline + 1) : chunk;
}
