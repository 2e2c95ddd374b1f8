/**
 * What a task's terminal shows, without VS Code: the task's earlier segments replayed from their
 * logs (a separator each), then the running segment live when this window runs it. When nothing
 * runs here the terminal is read-only and says so. The VS Code Pseudoterminal (src/vscode/
 * task-terminals.ts) only renders `write` and forwards keystrokes to `input`.
 */
import path from 'node:path';
import type { TaskStatus, TicketRecord } from '../../core/types';
import { terminalSafeLines } from '../../core/untrusted-text';
import { segmentEndedText } from '../../core/segment-end';
import { SegmentLogReplay } from './segment-logs';
import type { SegmentOutcome } from './segment-outcome';
import type { SegmentRun } from './segment-runner';

/** What the feed reads of the window's engine; undefined while the engine is (re)starting. */
export interface TerminalFeedSource {
  runtimeDir: string;
  /** The live segment of the task in this window, if any. */
  segment(taskId: string): Pick<SegmentRun, 'logFile' | 'attach' | 'running' | 'writeInput'> | undefined;
  taskStatus(taskId: string): TaskStatus | undefined;
  /** The task's tickets from the ledger: how each one's segment ended. */
  tickets(taskId: string): readonly Pick<TicketRecord, 'ordinal' | 'endReason'>[];
}

const OUTCOME_TEXT: Record<SegmentOutcome['kind'], string> = {
  completed: 'Task completed.',
  'segment-expired': 'The ticket segment ended; the task is queued and will resume the same session with a new ticket.',
  cancelled: 'Task cancelled.',
  interrupted: 'Interrupted; the task will resume the same session.',
  parked: 'Waiting for your answer without holding capacity; the same session resumes once the question is answered.',
  'usage-limited': 'Your usage limit is reached: waiting for its reset without holding capacity; the same session resumes then.',
  failed: 'Task failed.',
};

/** The line after a live segment; `segmentNumber` names the segment that ended (as its separator does). */
export function outcomeLine(outcome: SegmentOutcome, segmentNumber?: number): string {
  if (outcome.kind === 'segment-expired') return `\n[off-peak] ${segmentEndedText(segmentNumber)}.\n`;
  // A task with a check (docs/flows.md#checks): how it ended, as the card says it.
  if (outcome.kind === 'completed' && outcome.check) {
    const { passed, round } = outcome.check;
    return `\n[off-peak] ${passed ? `Ready for review: the check passed (round ${round}).` : `Check failed after ${round} round${round === 1 ? '' : 's'}; the task's work is kept for review.`}\n`;
  }
  // A failure reason may quote the agent or the model: shown inert (docs/flows.md#terminal-text).
  return `\n[off-peak] ${OUTCOME_TEXT[outcome.kind]}${outcome.kind === 'failed' ? ` ${terminalSafeLines(outcome.reason, false)}` : ''}\n`;
}

const READ_ONLY_NOTICE =
  '\n[off-peak] Nothing runs for this task in this window: this terminal only shows its output, and typing does nothing.\n';
const ELSEWHERE_NOTICE =
  '\n[off-peak] This task runs in another VS Code window; its terminal there is live and takes input. Showing the output so far (open Terminal again for more).\n';
const NO_OUTPUT_NOTICE = '[off-peak] No output yet: this task has not run.\n';

export class TaskTerminalFeed {
  private replay: SegmentLogReplay | undefined;
  private live: { dir: string; detach: () => void; segment: NonNullable<ReturnType<TerminalFeedSource['segment']>> } | undefined;
  private chain: Promise<void> = Promise.resolve();
  private wroteAnything = false;
  private readOnlyNoticeShown = false;
  private elsewhereNoticeShown = false;
  private disposed = false;

  constructor(
    readonly taskId: string,
    private readonly write: (text: string) => void,
    private readonly source: () => TerminalFeedSource | undefined,
    private readonly options: { maxReplayBytes?: number; hostPid?: number } = {},
  ) {}

  /** Catch up: replay what the logs hold that this terminal has not shown, then attach live. Serialized. */
  sync(): Promise<void> {
    this.chain = this.chain
      .then(() => this.syncNow())
      .catch((err: unknown) => this.emit(`\n[off-peak] could not read this task's logs: ${(err as Error).message}\n`));
    return this.chain;
  }

  /** A keystroke: to the live agent, or a one-time notice that this terminal is read-only. */
  input(data: string): void {
    const live = this.live?.segment;
    if (live?.running) {
      // Enter arrives as '\r'; the agent reads lines.
      live.writeInput(data.replace(/\r/g, '\n'));
      return;
    }
    if (!this.readOnlyNoticeShown) {
      this.readOnlyNoticeShown = true;
      this.emit(READ_ONLY_NOTICE);
    }
  }

  dispose(): void {
    this.disposed = true;
    this.live?.detach();
    this.live = undefined;
  }

  private async syncNow(): Promise<void> {
    const source = this.source();
    if (!source || this.disposed) return;
    this.replay ??= new SegmentLogReplay({
      runtimeDir: source.runtimeDir,
      taskId: this.taskId,
      maxBytes: this.options.maxReplayBytes,
      hostPid: this.options.hostPid,
    });
    const segment = source.segment(this.taskId);
    const status = source.taskStatus(this.taskId);
    if ((status === 'running' || status === 'awaiting') && !segment && !this.elsewhereNoticeShown) {
      this.elsewhereNoticeShown = true;
      this.emit(ELSEWHERE_NOTICE);
    }
    this.emit(await this.replay.next(source.tickets(this.taskId)));
    if (this.disposed) return;

    const dir = segment ? path.dirname(segment.logFile) : undefined;
    if (segment && dir && this.live?.dir !== dir) {
      this.live?.detach();
      const number = await this.replay.segmentNumber(dir);
      this.emit(await this.replay.liveHeader(dir));
      this.replay.markLive(dir);
      this.readOnlyNoticeShown = false;
      const detach = segment.attach({ write: (text) => this.emit(text), end: (outcome) => this.emit(outcomeLine(outcome, number)) });
      this.live = { dir, detach, segment };
    } else if (!this.wroteAnything) {
      this.emit(NO_OUTPUT_NOTICE);
    }
  }

  private emit(text: string): void {
    if (!text || this.disposed) return;
    this.wroteAnything = true;
    this.write(text);
  }
}
