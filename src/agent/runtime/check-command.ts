/**
 * Runs a task's check command (docs/flows.md#checks). The command is what the user typed in the
 * form (never text from the repository, the model or a tool), so it runs as a terminal would run
 * it: through the platform's shell, on purpose. That is not a shell string built from untrusted
 * text: the whole string is the user's, as typed. It runs in the task's worktree or folder, in its
 * own process group (Windows: its tree), so a time limit, a cancel or a segment end stops everything
 * it started. Its output, with control sequences stripped, goes to the segment's log and terminal.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { envOf } from '../../core/executable-path';
import {
  killLeftovers,
  killTree,
  systemProcessHost,
  treeSpawnOptions,
  windowsSystemProgram,
  type ProcessHost,
} from '../../core/process-control';
import { TerminalLines, terminalSafeText } from '../../core/untrusted-text';

/** How much of the output the task keeps (the card, the fed-back tail): its end, where failures are. */
export const CHECK_OUTPUT_TAIL_CHARS = 4_000;

export interface CheckResult {
  passed: boolean;
  /** Null when it was stopped (time limit, cancel, segment end) or killed by a signal. */
  exitCode: number | null;
  /** Why it did not end by itself, or null. */
  stopped: 'timeout' | 'cancelled' | 'interrupted' | 'segment-ended' | null;
  /** The end of its output, control sequences stripped. */
  output: string;
}

/** The platform shell and its arguments for one command line, as a terminal would run it. */
export function shellInvocation(
  command: string,
  host: Pick<ProcessHost, 'platform' | 'env'>,
): { file: string; args: string[]; windowsVerbatimArguments: boolean } {
  if (host.platform === 'win32') {
    // cmd.exe by its absolute path (never from the working folder); /s /c "…" keeps the line as typed.
    const comspec = envOf(host, 'COMSPEC');
    return {
      file: comspec && /^[a-z]:\\/i.test(comspec) ? comspec : windowsSystemProgram(host, 'cmd.exe'),
      args: ['/d', '/s', '/c', `"${command}"`],
      windowsVerbatimArguments: true,
    };
  }
  return { file: '/bin/sh', args: ['-c', command], windowsVerbatimArguments: false };
}

export interface CheckCommandOptions {
  command: string;
  cwd: string;
  timeoutMs: number;
  /** Each piece of output as it comes, already made safe for a terminal. */
  onOutput(text: string): void;
  env?: NodeJS.ProcessEnv;
  processes?: ProcessHost;
}

export class CheckCommandRun {
  readonly done: Promise<CheckResult>;
  private stopReason: CheckResult['stopped'] = null;
  private tail = '';
  private exited = false;

  private constructor(
    private readonly child: ReturnType<typeof spawn>,
    private readonly processes: ProcessHost,
    options: CheckCommandOptions,
  ) {
    const timer = setTimeout(() => void this.stop('timeout'), options.timeoutMs);
    // The terminal's copy also starts no line as a question does (docs/flows.md#terminal-text); the tail kept is the text as printed.
    const lines = new TerminalLines();
    const out = (chunk: string) => {
      this.tail = (this.tail + terminalSafeText(chunk)).slice(-CHECK_OUTPUT_TAIL_CHARS);
      options.onOutput(lines.text(chunk));
    };
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.setEncoding('utf8');
      stream.on('data', out);
    }
    this.done = new Promise((resolve) => {
      child.on('close', (code) => {
        this.exited = true;
        clearTimeout(timer);
        // What it started and left running (a watcher, a server) does not outlive the check.
        const leftovers = child.pid ? killLeftovers(child.pid, processes).catch(() => []) : Promise.resolve([]);
        void leftovers.then(() =>
          resolve({
            passed: this.stopReason === null && code === 0,
            exitCode: this.stopReason ? null : code,
            stopped: this.stopReason,
            output: this.tail,
          }),
        );
      });
    });
  }

  /** Starts the command; rejects when the shell itself cannot start. */
  static async start(options: CheckCommandOptions): Promise<CheckCommandRun> {
    const processes = options.processes ?? systemProcessHost();
    const shell = shellInvocation(options.command, processes);
    const child = spawn(shell.file, shell.args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsVerbatimArguments: shell.windowsVerbatimArguments,
      ...treeSpawnOptions(processes),
    });
    await once(child, 'spawn');
    child.on('error', () => undefined);
    return new CheckCommandRun(child, processes, options);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Stops the command and everything it started; `done` says why. */
  async stop(reason: NonNullable<CheckResult['stopped']>): Promise<void> {
    if (this.exited) return;
    this.stopReason ??= reason;
    if (this.child.pid) await killTree(this.child.pid, this.processes);
    await this.done;
  }
}
