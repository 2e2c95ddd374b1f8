/**
 * Stopping a segment's agent: SIGINT -> SIGTERM -> SIGKILL of its tree (Windows: Ctrl+C to its
 * console, then its tree terminated; src/core/process-control.ts), each step bounded by its grace;
 * and, once it exited, what it left behind in its group and what left the group (found by its tag).
 */
import type { ChildProcess } from 'node:child_process';
import { gracefulSignals, killLeftovers, killTree, signalAgent, type ProcessHost } from '../../core/process-control';
import { killTaggedProcesses } from './segment-processes';

export interface StopTimings {
  /** After SIGINT, wait this long before SIGTERM. */
  sigintGraceMs: number;
  /** After SIGTERM, wait this long before SIGKILL. */
  sigtermGraceMs: number;
}

/** What stopping needs of its segment: whether the agent exited, and the terminal to say what failed. */
export interface StopHost {
  exited(): boolean;
  show(text: string): void;
}

export class AgentStop {
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly child: ChildProcess,
    private readonly processes: ProcessHost,
    private readonly timings: StopTimings,
    private readonly host: StopHost,
  ) {}

  /** Stops the agent's tree, gracefully first; once, however often it is asked. */
  stop(): Promise<void> {
    if (this.host.exited()) return Promise.resolve();
    this.stopping ??= (async () => {
      const grace: Partial<Record<NodeJS.Signals, number>> = { SIGINT: this.timings.sigintGraceMs, SIGTERM: this.timings.sigtermGraceMs };
      for (const signal of gracefulSignals(this.processes)) {
        if (this.host.exited()) return;
        // The grace bounds the step too: one that could not be sent skips to the forced stop.
        const graceOver = this.waitForExit(grace[signal] ?? 0);
        if (!(await Promise.race([this.signal(signal), graceOver.then(() => true)]))) break;
        await graceOver;
      }
      if (this.host.exited()) return;
      // The whole tree by force (Windows: found while the agent still runs).
      if (this.child.pid) await killTree(this.child.pid, this.processes);
      await this.waitForExit(5_000);
    })();
    return this.stopping;
  }

  /** A graceful signal to the agent (Windows: Ctrl+C to its console); false when it could not be sent (logged). */
  async signal(signal: NodeJS.Signals): Promise<boolean> {
    const result = this.child.pid ? await signalAgent(this.child.pid, signal, this.processes) : 'gone';
    if (result === 'failed' && !this.host.exited())
      this.host.show(
        `\n[off-peak] could not send ${this.processes.platform === 'win32' ? 'Ctrl+C' : signal} to the agent: stopping it by force\n`,
      );
    return result === 'sent';
  }

  /** The agent exited: whatever it started in its group, or that left the group, goes too. */
  async killLeftovers(tag: string): Promise<void> {
    // Whatever the agent started in its group (Windows: its tree) must not outlive the segment...
    if (this.child.pid) await killLeftovers(this.child.pid, this.processes);
    // ...and neither may what left the group (setsid, setpgid, a double fork): found by its tag.
    killTaggedProcesses(tag, this.processes);
  }

  private waitForExit(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.host.exited()) return resolve();
      const timer = setTimeout(resolve, ms);
      this.child.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
