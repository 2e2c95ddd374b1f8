/**
 * The work of one segment (docs/flows.md#checks): the agent's turn, then, for a task with a check
 * command, the check; a failed check resumes the same session with the command, its exit code and
 * the tail of its output (a fix round, on the same ticket and segment), up to the most rounds; then
 * the task ends with the check failed. Every step is recorded first, so a segment that ends during
 * a check re-runs it after the retake, and one that ends during a fix resumes the fix. Terminal
 * views see one segment: the agent's output and the check's, in one log.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../../core/clock';
import type { TaskStore } from '../../store';
import type { CheckProgress } from '../../store/repos/check-repo';
import { terminalSafeText } from '../../core/untrusted-text';
import { CHECK_OUTPUT_TAIL_CHARS, CheckCommandRun, type CheckResult } from './check-command';
import type { CheckGate, WhenAgentChangedCheck } from './check-gate';
import type { SegmentOutcome, TerminalView } from './segment-outcome';
import type { SegmentRun } from './segment-runner';
import { writeSegmentPidRecord } from './segment-processes';
import { watchAgent } from './agent-watchdog';
import { ensurePrivateDir } from '../../files/private-files';

export interface SegmentCheck {
  command: string;
  /** The round of the next check run (1: the check after the agent's first turn). */
  round: number;
  maxRounds: number;
  timeoutMs: number;
  /** Where it runs: the task's worktree or folder. */
  cwd: string;
  /** Writes where the rounds stand (the task DB) before each step. */
  record(progress: CheckProgress): Promise<void>;
  /** The ticket's segment is over (its active window ended): a running check is cut, and re-run after the retake. */
  segmentOver(): boolean;
  /** Before each run: flags (and, if the user asks for it, asks about) a check whose files the agent changed. */
  gate?: CheckGate;
  /** After a failed run: a note for its output, e.g. a file it needs that is not committed (check-missing-files.ts). */
  failureNote?(result: CheckResult): Promise<string | null>;
}

export interface SegmentWorkOptions {
  /** The agent's turn the segment starts with; null: it starts with the check (one a segment end cut). */
  first: SegmentRun | null;
  check: SegmentCheck | null;
  /** Resumes the session with `prompt` (a fix round) on the same ticket. */
  resume(prompt: string): Promise<SegmentRun>;
  segmentDir: string;
  sessionId: string;
  taskId: string;
  windowId?: string;
  /** How often a running check looks whether the segment is over. */
  segmentPollMs?: number;
}

const REPLAY_CHARS = 200_000;

/** The message a fix round resumes the session with: the user's command, what it answered, and the end of its output. */
export function checkFeedbackPrompt(
  command: string,
  round: number,
  maxRounds: number,
  result: Pick<CheckResult, 'exitCode' | 'stopped' | 'output'>,
): string {
  const how =
    result.stopped === 'timeout'
      ? 'it did not finish within its time limit and was stopped'
      : `it exited with code ${result.exitCode ?? 'unknown'}`;
  return [
    `The check the user set for this task failed (round ${round} of ${maxRounds}): ${how}.`,
    `Command: ${command}`,
    'The end of its output:',
    '```',
    result.output.trimEnd() || '(no output)',
    '```',
    'Fix what makes it fail. The same command runs again when you end your turn.',
  ].join('\n');
}

export class SegmentWork {
  readonly done: Promise<SegmentOutcome>;
  readonly logFile: string;
  readonly pidFile: string;
  private agent: SegmentRun | null;
  private check: CheckCommandRun | null = null;
  private stopReason: 'cancelled' | 'interrupted' | null = null;
  private readonly views = new Set<TerminalView>();
  private replay = '';
  private finished = false;
  private toldCheckInput = false;

  constructor(private readonly options: SegmentWorkOptions) {
    this.logFile = path.join(options.segmentDir, 'agent.log');
    this.pidFile = path.join(options.segmentDir, 'agent.pid');
    this.agent = options.first;
    if (this.agent) this.follow(this.agent);
    this.done = this.drive().then((outcome) => {
      this.finished = true;
      for (const view of this.views) view.end?.(outcome);
      return outcome;
    });
  }

  /** The first agent's process (none when the segment starts with the check). */
  get pid(): number | undefined {
    return this.options.first?.pid;
  }

  /** The agent's turn that runs or ran last (none yet when the segment started with the check). */
  get agentRun(): SegmentRun | null {
    return this.agent;
  }

  get sessionId(): string {
    return this.options.sessionId;
  }

  get running(): boolean {
    return !this.finished;
  }

  attach(view: TerminalView): () => void {
    if (this.replay) view.write(this.replay);
    this.views.add(view);
    return () => this.views.delete(view);
  }

  writeInput(data: string): void {
    if (this.agent?.running) return this.agent.writeInput(data);
    if (this.check && !this.toldCheckInput) {
      this.toldCheckInput = true;
      this.show('\n[off-peak] the check runs; it reads no input here (Cancel stops the task)\n');
    }
  }

  releasePidFile(): void {
    fs.rmSync(this.pidFile, { force: true });
  }

  cancel(): Promise<void> {
    return this.stop('cancelled');
  }

  interrupt(): Promise<void> {
    return this.stop('interrupted');
  }

  /** A question nobody answered: the agent's (its turn parks) or the check's own (check-gate.ts). */
  park(askId: string): Promise<void> {
    if (this.options.check?.gate?.park(askId)) return Promise.resolve();
    return this.agent?.running ? this.agent.park(askId) : Promise.resolve();
  }

  private async stop(reason: 'cancelled' | 'interrupted'): Promise<void> {
    this.stopReason ??= reason;
    this.options.check?.gate?.stop();
    if (this.agent?.running) await (reason === 'cancelled' ? this.agent.cancel() : this.agent.interrupt());
    await this.check?.stop(reason);
  }

  /** The agent's output reaches this segment's views (its own `end` line is not the segment's). */
  private follow(run: SegmentRun): void {
    run.attach({ write: (text) => this.show(text) });
  }

  private show(text: string): void {
    this.replay = (this.replay + text).slice(-REPLAY_CHARS);
    for (const view of this.views) {
      try {
        view.write(text);
      } catch {
        // a broken view must not stop the segment
      }
    }
  }

  private async drive(): Promise<SegmentOutcome> {
    const check = this.options.check;
    let outcome: SegmentOutcome | null = this.agent ? await this.agent.done : null;
    let round = check?.round ?? 1;
    for (;;) {
      if (outcome && (outcome.kind !== 'completed' || !check)) return outcome;
      if (!check) return { kind: 'failed', reason: 'the segment had nothing to run', exitCode: null };
      if (this.stopReason) return { kind: this.stopReason };
      const summary = outcome?.kind === 'completed' ? outcome.summary : '';
      await check.record({ state: 'checking', round });
      const gate = check.gate ? await check.gate.decide(check.command, (text) => this.showAndLog(text)) : { kind: 'run' as const };
      if (gate.kind === 'parked') return { kind: 'parked', askId: gate.askId };
      if (gate.kind === 'stopped' || this.stopReason) return { kind: this.stopReason ?? 'interrupted' };
      if (gate.kind === 'skip') {
        this.showAndLog(`\n[off-peak] ${gate.reason}\n`);
        await check.record({ state: 'skipped', round, exitCode: null, output: gate.reason });
        return { kind: 'completed', summary, exitCode: 0 };
      }
      let result: CheckResult;
      try {
        result = await this.runCheck(check, round);
      } catch (err) {
        return { kind: 'failed', reason: `the check command could not be started: ${(err as Error).message}`, exitCode: null };
      }
      if (result.stopped === 'cancelled' || result.stopped === 'interrupted') return { kind: result.stopped };
      if (result.stopped === 'segment-ended') return { kind: 'segment-expired' };
      const last = { round, exitCode: result.exitCode, output: result.output };
      if (result.passed || round >= check.maxRounds) {
        const state = result.passed ? 'passed' : 'failed';
        await check.record({ state, ...last });
        return { kind: 'completed', summary, exitCode: 0, check: { passed: result.passed, round } };
      }
      await check.record({ state: 'fixing', ...last });
      if (this.stopReason) return { kind: this.stopReason };
      try {
        this.agent = await this.options.resume(checkFeedbackPrompt(check.command, round, check.maxRounds, result));
      } catch (err) {
        return { kind: 'failed', reason: (err as Error).message, exitCode: null };
      }
      this.follow(this.agent);
      round++;
      outcome = await this.agent.done;
    }
  }

  /** A line of the segment's own (the check's question, a skip) in its terminal and log. */
  private showAndLog(text: string): void {
    ensurePrivateDir(this.options.segmentDir);
    try {
      fs.appendFileSync(this.logFile, text, { mode: 0o600 });
    } catch {
      // the terminal still shows what the log could not keep
    }
    this.show(text);
  }

  private async runCheck(check: SegmentCheck, round: number): Promise<CheckResult> {
    ensurePrivateDir(this.options.segmentDir); // a segment that starts with the check has no agent to make it
    const log = fs.createWriteStream(this.logFile, { flags: 'a', mode: 0o600 });
    log.on('error', () => undefined); // the terminal still shows what the log could not keep
    const write = (text: string) => {
      log.write(text);
      this.show(text);
    };
    write(`\n[off-peak] check, round ${round} of ${check.maxRounds}: ${terminalSafeText(check.command)}\n`);
    let poll: NodeJS.Timeout | undefined;
    try {
      this.check = await CheckCommandRun.start({ command: check.command, cwd: check.cwd, timeoutMs: check.timeoutMs, onOutput: write });
      const run = this.check;
      watchAgent(run); // a window that crashes does not leave it running
      writeSegmentPidRecord(this.pidFile, {
        pid: run.pid,
        windowId: this.options.windowId,
        sessionId: this.options.sessionId,
        taskId: this.options.taskId,
      });
      // Stopped meanwhile (a cancel between the steps): it does not run on.
      if (this.stopReason) void run.stop(this.stopReason);
      poll = setInterval(() => check.segmentOver() && void run.stop('segment-ended'), this.options.segmentPollMs ?? 1_000);
      const result = await run.done;
      write(`\n[off-peak] ${checkResultLine(result, check.timeoutMs)}\n`);
      const note = !result.passed && result.stopped === null ? await check.failureNote?.(result).catch(() => null) : null;
      if (!note) return result;
      write(`${note}\n`);
      return { ...result, output: `${result.output.trimEnd()}\n\n${note}\n`.slice(-CHECK_OUTPUT_TAIL_CHARS) };
    } finally {
      clearInterval(poll);
      this.check = null;
      await new Promise<void>((resolve) => log.end(resolve));
    }
  }
}

/** The terminal's line after a check run. */
export function checkResultLine(result: CheckResult, timeoutMs: number): string {
  if (result.passed) return 'check passed';
  switch (result.stopped) {
    case 'timeout':
      return `check stopped: it ran past its time limit (${Math.round(timeoutMs / 60_000)} min)`;
    case 'segment-ended':
      return "check stopped: the ticket's segment ended; it runs again after the retake";
    case 'cancelled':
      return 'check stopped: the task was cancelled';
    case 'interrupted':
      return 'check stopped; it runs again when the task resumes';
    default:
      return `check failed (exit code ${result.exitCode ?? 'unknown'})`;
  }
}

/** The machine settings of checks (`offPeak.check.*`; a repository's settings cannot set them). */
export interface CheckSettings {
  timeoutMs(): number;
  maxRounds(): number;
  /** `offPeak.check.whenAgentChangedIt`: run (default) or ask when the agent changed the check's files (check-gate.ts). */
  whenAgentChangedIt?(): WhenAgentChangedCheck;
}

export const DEFAULT_CHECK_TIMEOUT_MS = 15 * 60_000;
export const DEFAULT_CHECK_MAX_ROUNDS = 2;

/**
 * How a segment of the task starts, from its check's row: with the agent's turn (its prompt
 * replaced by the failed check's output during a fix), or with a check a segment end cut.
 */
export function segmentCheckOf(
  store: TaskStore,
  taskId: string,
  ticketId: string,
  cwd: string,
  clock: Clock,
  settings: CheckSettings | undefined,
): { check: SegmentCheck | null; startsWithCheck: boolean; fixPrompt: string | null } {
  const row = store.read((tx) => tx.checks.get(taskId));
  if (!row || row.state === 'passed' || row.state === 'failed') return { check: null, startsWithCheck: false, fixPrompt: null };
  const maxRounds = Math.max(1, Math.floor(settings?.maxRounds() ?? DEFAULT_CHECK_MAX_ROUNDS));
  const check: SegmentCheck = {
    command: row.command,
    round: row.state === 'fixing' ? row.round + 1 : Math.max(1, row.round),
    maxRounds,
    timeoutMs: settings?.timeoutMs() ?? DEFAULT_CHECK_TIMEOUT_MS,
    cwd,
    record: async (progress) => void (await store.mutate((tx) => tx.checks.record(taskId, progress))),
    segmentOver: () => {
      const ticket = store.read((tx) => tx.tickets.get(ticketId));
      return (
        !ticket ||
        ['expired', 'settled', 'not_found'].includes(ticket.serverState) ||
        (ticket.expiresAt !== null && clock.now() >= ticket.expiresAt)
      );
    },
  };
  const fixPrompt =
    row.state === 'fixing'
      ? checkFeedbackPrompt(row.command, row.round, maxRounds, { exitCode: row.exitCode, stopped: null, output: row.output ?? '' })
      : null;
  return { check, startsWithCheck: row.state === 'checking', fixPrompt };
}

/**
 * When the ticket's time runs out, as the ledger last saw it: its active window's end, or its
 * ready deadline while no request was admitted; null when unknown.
 */
export function ticketDeadlineOf(store: TaskStore, ticketId: string): number | null {
  const ticket = store.read((tx) => tx.tickets.get(ticketId));
  if (!ticket) return null;
  if (ticket.expiresAt !== null) return ticket.expiresAt;
  return ticket.activeAt === null ? ticket.readyDeadline : null;
}
