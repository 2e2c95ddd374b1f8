/**
 * Cross-window dispatch through the shared DB (docs/flows.md#dispatch: scheduler -> the
 * workspace's window). Every VS Code window is its own process; they share nothing but tasks-index.sqlite. So:
 *   - each window registers the workspaces it has open and its extension host's pid (no periodic
 *     writes: an idle VS Code must not rewrite the DB file every few seconds);
 *   - the lease holder's scheduler, finding another live window with the task's workspace open,
 *     writes a hand-off request for it and waits for the answer;
 *   - that window sees the request on its next store change, runs the task (its runtime marks it
 *     running through the guarded transition) and writes the result back.
 * A window that does not answer in time (hung) gets its request withdrawn and the dispatch counts
 * as failed (backoff). A window whose process is gone (crashed without unregistering) is not
 * chosen: all windows sharing a globalStorage run on one machine, so its pid tells.
 */
import os from 'node:os';
import type { Clock } from '../core/clock';
import { createSystemTimers, sleep, type Timers } from '../core/timers';
import type { OffPeakTask } from '../core/types';
import { changeConcerns, type StoreTx, type TaskStore, type WindowRecord } from '../store';
import type { DispatchResult } from './scheduler';
import type { WindowHost } from './window-dispatcher';
import { isProcessAlive } from '../core/process-alive';

export interface WindowRegistryOptions {
  store: TaskStore;
  windowId: string;
  workspaceKeys: () => readonly string[];
  clock: Clock;
  timers?: Timers;
  /** Runs a claimed task in THIS window (the task runtime). */
  runLocal: (task: OffPeakTask) => Promise<DispatchResult>;
  /** Whether a process runs (injectable for tests). */
  isAlive?: (pid: number) => boolean;
  /** How long a hand-off may wait for the other window's answer. */
  handoffTimeoutMs?: number;
  /** How often the waiting side looks for the answer. */
  handoffPollMs?: number;
  log?: (line: string) => void;
}

export class WindowRegistry {
  private readonly isAlive: (pid: number) => boolean;
  private readonly handoffTimeoutMs: number;
  private readonly handoffPollMs: number;
  private readonly log: (line: string) => void;
  private readonly timers: Timers;
  private unsubscribe: (() => void) | undefined;
  private lastKeys = '';
  private pickingUp: Promise<void> | undefined;
  private pickUpAgain = false;
  private stopped = false;

  constructor(private readonly options: WindowRegistryOptions) {
    this.isAlive = options.isAlive ?? isProcessAlive;
    this.handoffTimeoutMs = options.handoffTimeoutMs ?? 20_000;
    this.handoffPollMs = options.handoffPollMs ?? 150;
    this.log = options.log ?? (() => {});
    this.timers = options.timers ?? createSystemTimers();
  }

  async start(): Promise<void> {
    await this.register();
    const sub = this.options.store.onDidChange((change) => {
      if (change.origin === 'external' && changeConcerns(change, 'dispatch')) this.pickUp();
    });
    this.unsubscribe = () => sub.dispose();
    this.pickUp();
  }

  /** The workspaces open in this window changed: publish them now rather than at the next beat. */
  async workspacesChanged(): Promise<void> {
    if (JSON.stringify([...this.options.workspaceKeys()]) !== this.lastKeys) await this.register();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    // A hand-off being started is not awaited: the runtime's shutdown stops what it started.
    await this.options.store
      .mutate((tx) => tx.windows.unregister(this.options.windowId))
      .catch((e: unknown) => this.log(`window registry: could not unregister: ${String(e)}`));
  }

  /** Other live windows, as hosts the dispatcher can choose between. */
  remoteHosts(): WindowHost[] {
    const others = this.options.store.read((tx) => tx.windows.list()).filter((w) => w.windowId !== this.options.windowId);
    const alive = others.filter((w) => w.host === os.hostname() && this.isAlive(w.pid));
    return alive.map((w) => ({
      windowId: w.windowId,
      workspaceKeys: () => w.workspaceKeys,
      runTask: (task: OffPeakTask) => this.handOff(w.windowId, task),
    }));
  }

  private async register(): Promise<void> {
    if (this.stopped) return;
    const workspaceKeys = [...this.options.workspaceKeys()];
    this.lastKeys = JSON.stringify(workspaceKeys);
    try {
      // Only a changed row (or a dead window's row to drop) is written: an idle window writes nothing.
      await this.options.store.mutate((tx) => {
        tx.windows.register({ windowId: this.options.windowId, workspaceKeys, pid: process.pid, host: os.hostname() });
        this.dropDeadIn(tx);
      });
    } catch (e) {
      this.log(`window registry: could not register this window: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Whether a window with this id is registered on this machine and its process (`pid`, when given) runs. */
  isLive(windowId: string, pid?: number): boolean {
    const row = this.options.store.read((tx) => tx.windows.get(windowId));
    return row !== undefined && row.host === os.hostname() && (pid === undefined || row.pid === pid) && this.isAlive(row.pid);
  }

  /**
   * The lease holder's tick (docs/flows.md#recovery): drops the registrations of windows whose
   * process is gone. Writes only when there is one; returns their ids.
   */
  async dropDeadWindows(): Promise<string[]> {
    if (this.stopped || this.deadWindows(this.options.store.read((tx) => tx.windows.list())).length === 0) return [];
    return this.options.store.mutate((tx) => this.dropDeadIn(tx));
  }

  private deadWindows(rows: readonly WindowRecord[]): WindowRecord[] {
    return rows.filter((w) => w.windowId !== this.options.windowId && w.host === os.hostname() && !this.isAlive(w.pid));
  }

  /** Registrations of windows whose process is gone (crashed without unregistering) are dropped. */
  private dropDeadIn(tx: StoreTx): string[] {
    const dead = this.deadWindows(tx.windows.list());
    for (const other of dead) {
      tx.windows.unregister(other.windowId);
      // Its open questions go with it (no agent is left to apply an answer to them), but an answer
      // left for a task it left running stays for recovery (docs/flows.md#a-question-across-a-reload).
      tx.asks.withdrawDeadWindow(other.windowId);
    }
    return dead.map((w) => w.windowId);
  }

  /** Leader side: asks another window to run the task and waits for its answer. */
  private async handOff(windowId: string, task: OffPeakTask): Promise<DispatchResult> {
    const { store, clock } = this.options;
    await store.mutate((tx) => tx.windows.requestHandOff(task.id, windowId));
    const deadline = clock.now() + this.handoffTimeoutMs;
    for (;;) {
      const answer = store.read((tx) => tx.windows.handOffAnswer(task.id, windowId));
      if (answer) {
        await store.mutate((tx) => tx.windows.removeHandOff(task.id));
        try {
          return JSON.parse(answer) as DispatchResult;
        } catch {
          return { status: 'failed', error: `window ${windowId} answered the hand-off unreadably` };
        }
      }
      if (clock.now() >= deadline || this.stopped) break;
      await sleep(this.timers, this.handoffPollMs);
    }
    // No answer: withdraw the request (unless the window took it at the last moment).
    const withdrawn = await store.mutate((tx) => tx.windows.removeHandOff(task.id, { windowId, onlyUnanswered: true }));
    if (!withdrawn) return this.handOffResultAfterRace(task.id);
    return { status: 'failed', error: `window ${windowId} did not take the task within ${Math.round(this.handoffTimeoutMs / 1000)} s` };
  }

  private async handOffResultAfterRace(taskId: string): Promise<DispatchResult> {
    const answer = this.options.store.read((tx) => tx.windows.handOffAnswer(taskId));
    await this.options.store.mutate((tx) => tx.windows.removeHandOff(taskId));
    try {
      return answer ? (JSON.parse(answer) as DispatchResult) : { status: 'failed', error: 'hand-off lost' };
    } catch {
      return { status: 'failed', error: 'hand-off answer unreadable' };
    }
  }

  /** Window side: runs the tasks handed to this window (single-flight; re-runs if more arrive). */
  private pickUp(): void {
    if (this.stopped) return;
    if (this.pickingUp) {
      this.pickUpAgain = true;
      return;
    }
    this.pickingUp = this.pickUpOnce()
      .catch((e: unknown) => this.log(`window registry: pick-up failed: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => {
        this.pickingUp = undefined;
        if (this.pickUpAgain) {
          this.pickUpAgain = false;
          this.pickUp();
        }
      });
  }

  private async pickUpOnce(): Promise<void> {
    const { store, windowId } = this.options;
    const requests = store.read((tx) => tx.windows.pendingHandOffs(windowId));
    for (const taskId of requests) {
      const task = store.read((tx) => tx.tasks.get(taskId));
      let result: DispatchResult;
      if (!task) result = { status: 'refused', reason: 'the task no longer exists' };
      else {
        try {
          result = await this.options.runLocal(task);
        } catch (e) {
          result = { status: 'failed', error: e instanceof Error ? e.message : String(e) };
        }
      }
      await store.mutate((tx) => tx.windows.answerHandOff(taskId, windowId, JSON.stringify(result)));
    }
  }
}
