// The lease holder's recovery (docs/flows.md#recovery): tasks a window that is gone left running
// go back in the queue with their session, on becoming the holder and at every lease tick. One
// run at a time; each run's report is kept for tests and the log.
import type { TaskRuntime } from '../agent/runtime/task-runtime';
import { SingleFlight } from '../core/single-flight';
import { recoverInterrupted, type RecoveryReport } from '../scheduler/recovery';
import type { Scheduler } from '../scheduler/scheduler';
import type { WindowRegistry } from '../scheduler/window-registry';
import type { TaskLifecycle } from '../service';
import type { TaskStore } from '../store';

export interface RecoverySweepOptions {
  store: TaskStore;
  runtimeDir: string;
  windowId: string;
  lifecycle: TaskLifecycle;
  runtime: Pick<TaskRuntime, 'owns'>;
  windows: Pick<WindowRegistry, 'dropDeadWindows' | 'isLive'>;
  scheduler: Pick<Scheduler, 'wake'>;
  log: (line: string) => void;
}

export class RecoverySweep {
  private readonly running = new SingleFlight<void>();
  private readonly reports: RecoveryReport[] = [];
  /** Running tasks the holder's last tick found without any pid record (requeued if the next one does too). */
  private unrecorded = new Set<string>();

  constructor(private readonly options: RecoverySweepOptions) {}

  /** What each recovery this window ran did, oldest first (none until it held the lease). */
  get recoveries(): readonly RecoveryReport[] {
    return this.reports;
  }

  /** Puts tasks left running by a window that is gone back in the queue (same session): run on becoming the lease holder. */
  recover(): Promise<unknown> {
    return this.running.run(() => this.recoverNow('holder'));
  }

  /**
   * The lease holder's tick: drops the registrations of windows whose process is gone and
   * recovers what they left running. A running task without any pid record is requeued only
   * when the previous tick found it so too (its record may be about to be written).
   */
  sweep(): Promise<unknown> {
    return this.running.run(() => this.recoverNow('tick'));
  }

  /** Resolves when no run is in flight. */
  idle(): Promise<void> {
    return this.running.idle();
  }

  private async recoverNow(kind: 'holder' | 'tick'): Promise<void> {
    const { store, runtimeDir, lifecycle, runtime, windows, scheduler, log } = this.options;
    try {
      if (kind === 'tick') await windows.dropDeadWindows();
      const seen = new Set<string>();
      const report = await recoverInterrupted(
        store,
        runtimeDir,
        (ids) => lifecycle.requeueInterrupted(ids),
        (id) => runtime.owns(id),
        {
          windowId: this.options.windowId,
          isLiveWindow: (id, pid) => windows.isLive(id, pid),
          requeueUnrecorded:
            kind === 'holder'
              ? undefined
              : (id) => {
                  seen.add(id);
                  return this.unrecorded.has(id);
                },
        },
      );
      if (kind === 'tick') this.unrecorded = seen;
      const acted = report.requeued.length > 0 || report.killedOrphans.length > 0;
      if (kind === 'holder' || acted) this.reports.push(report);
      if (report.killedOrphans.length > 0) log(`stopped ${report.killedOrphans.length} orphaned agent process group(s)`);
      if (report.requeued.length > 0) {
        log(`recovered ${report.requeued.length} interrupted task(s)`);
        scheduler.wake();
      }
    } catch (e) {
      log(`recovery failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
