/**
 * "Windows" as the scheduler sees them (docs/flows.md#dispatch):
 * each VS Code window registers the workspaces it has open and a host that can run a task.
 * A task goes to the window that has its workspace open, else to the lease holder's own window
 * The VS Code layer implements WindowHost over its IPC; tests use in-process hosts.
 */
import type { OffPeakTask } from '../core/types';
import type { DispatchResult, Dispatcher } from './scheduler';

export interface WindowHost {
  readonly windowId: string;
  /** workspace_key values of the folders open in this window. */
  workspaceKeys(): readonly string[];
  runTask(task: OffPeakTask): Promise<DispatchResult>;
}

export class WindowDispatcher implements Dispatcher {
  private readonly windows = new Map<string, WindowHost>();

  /**
   * `ownWindowId`: the window this scheduler runs in (the lease holder's).
   * `remoteHosts`: other windows (other processes), e.g. from the WindowRegistry.
   */
  constructor(
    private readonly ownWindowId: string,
    private readonly remoteHosts: () => readonly WindowHost[] = () => [],
  ) {}

  register(host: WindowHost): () => void {
    this.windows.set(host.windowId, host);
    return () => {
      if (this.windows.get(host.windowId) === host) this.windows.delete(host.windowId);
    };
  }

  /** Which window would run this task now (undefined: none available). */
  choose(task: Pick<OffPeakTask, 'workspaceKey'>): WindowHost | undefined {
    for (const host of this.windows.values()) {
      if (host.workspaceKeys().includes(task.workspaceKey)) return host;
    }
    for (const host of this.remoteHosts()) {
      if (host.workspaceKeys().includes(task.workspaceKey)) return host;
    }
    return this.windows.get(this.ownWindowId);
  }

  async dispatch(task: OffPeakTask): Promise<DispatchResult> {
    const host = this.choose(task);
    if (!host) return { status: 'failed', error: 'no window is available to run the task' };
    const result = await host.runTask(task);
    return result.status === 'started' ? { ...result, windowId: host.windowId } : result;
  }
}
