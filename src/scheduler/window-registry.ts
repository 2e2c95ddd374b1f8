/**
 * Cross-window dispatch through the shared DB (seed 03/05: scheduler -> router -> the workspace's
 * host). Every VS Code window is its own process; they share nothing but tasks-index.sqlite. So:
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
import type { OffPeakTask } from '../core/types';
import type { SqlDb, TaskStore } from '../store';
import type { DispatchResult } from './scheduler';
import type { WindowHost } from './window-dispatcher';

export const WINDOWS_TABLE = 'off_peak_windows';
export const HANDOFF_TABLE = 'off_peak_dispatch_requests';

export function ensureWindowTables(db: SqlDb): void {
  db.exec(`CREATE TABLE IF NOT EXISTS ${WINDOWS_TABLE} (
    window_id TEXT PRIMARY KEY,
    workspace_keys TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    registered_at INTEGER NOT NULL
  )`);
  db.exec(`CREATE TABLE IF NOT EXISTS ${HANDOFF_TABLE} (
    task_id TEXT PRIMARY KEY,
    window_id TEXT NOT NULL,
    requested_at INTEGER NOT NULL,
    result TEXT
  )`);
}

function tablesExist(db: SqlDb): boolean {
  return db.get(`SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?`, [HANDOFF_TABLE]) !== undefined;
}

export interface WindowRegistryOptions {
  store: TaskStore;
  windowId: string;
  workspaceKeys: () => readonly string[];
  clock: Clock;
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
  private unsubscribe: (() => void) | undefined;
  private lastKeys = '';
  private pickingUp: Promise<void> | undefined;
  private pickUpAgain = false;
  private stopped = false;

  constructor(private readonly options: WindowRegistryOptions) {
    this.isAlive = options.isAlive ?? processIsAlive;
    this.handoffTimeoutMs = options.handoffTimeoutMs ?? 20_000;
    this.handoffPollMs = options.handoffPollMs ?? 150;
    this.log = options.log ?? (() => {});
  }

  async start(): Promise<void> {
    await this.register();
    const sub = this.options.store.onDidChange((change) => {
      if (change.origin === 'external') this.pickUp();
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
      .mutate((tx) => {
        ensureWindowTables(tx.db);
        tx.db.run(`DELETE FROM ${WINDOWS_TABLE} WHERE window_id = ?`, [this.options.windowId]);
      })
      .catch((e: unknown) => this.log(`window registry: could not unregister: ${String(e)}`));
  }

  /** Other live windows, as hosts the dispatcher can choose between. */
  remoteHosts(): WindowHost[] {
    const rows = this.options.store.read((tx) => {
      if (!tablesExist(tx.db)) return [];
      return tx.db.all(`SELECT window_id, workspace_keys, pid, host FROM ${WINDOWS_TABLE} WHERE window_id <> ?`, [this.options.windowId]);
    });
    const alive = rows.filter((row) => String(row.host) === os.hostname() && this.isAlive(Number(row.pid)));
    return alive.map((row) => {
      const windowId = String(row.window_id);
      let keys: string[] = [];
      try {
        keys = JSON.parse(String(row.workspace_keys)) as string[];
      } catch {
        keys = [];
      }
      return { windowId, workspaceKeys: () => keys, runTask: (task: OffPeakTask) => this.handOff(windowId, task) };
    });
  }

  private async register(): Promise<void> {
    if (this.stopped) return;
    const keys = JSON.stringify([...this.options.workspaceKeys()]);
    this.lastKeys = keys;
    try {
      await this.options.store.mutate((tx) => {
        ensureWindowTables(tx.db);
        tx.db.run(
          `INSERT INTO ${WINDOWS_TABLE} (window_id, workspace_keys, pid, host, registered_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT(window_id) DO UPDATE SET workspace_keys = excluded.workspace_keys, pid = excluded.pid, host = excluded.host`,
          [this.options.windowId, keys, process.pid, os.hostname(), tx.now],
        );
        // Registrations of windows whose process is gone (crashed without unregistering) are dropped.
        for (const row of tx.db.all(`SELECT window_id, pid, host FROM ${WINDOWS_TABLE} WHERE window_id <> ?`, [this.options.windowId])) {
          if (String(row.host) === os.hostname() && !this.isAlive(Number(row.pid))) tx.db.run(`DELETE FROM ${WINDOWS_TABLE} WHERE window_id = ?`, [row.window_id as string]);
        }
      });
    } catch (e) {
      this.log(`window registry: could not register this window: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Leader side: asks another window to run the task and waits for its answer. */
  private async handOff(windowId: string, task: OffPeakTask): Promise<DispatchResult> {
    const { store, clock } = this.options;
    await store.mutate((tx) => {
      ensureWindowTables(tx.db);
      tx.db.run(`INSERT OR REPLACE INTO ${HANDOFF_TABLE} (task_id, window_id, requested_at, result) VALUES (?, ?, ?, NULL)`, [task.id, windowId, tx.now]);
    });
    const deadline = clock.now() + this.handoffTimeoutMs;
    for (;;) {
      const answer = store.read((tx) => tx.db.get(`SELECT result FROM ${HANDOFF_TABLE} WHERE task_id = ? AND window_id = ?`, [task.id, windowId]));
      if (answer?.result) {
        await store.mutate((tx) => tx.db.run(`DELETE FROM ${HANDOFF_TABLE} WHERE task_id = ?`, [task.id]));
        try {
          return JSON.parse(String(answer.result)) as DispatchResult;
        } catch {
          return { status: 'failed', error: `window ${windowId} answered the hand-off unreadably` };
        }
      }
      if (clock.now() >= deadline || this.stopped) break;
      await new Promise((r) => setTimeout(r, this.handoffPollMs));
    }
    // No answer: withdraw the request (unless the window took it at the last moment).
    const withdrawn = await store.mutate((tx) => tx.db.run(`DELETE FROM ${HANDOFF_TABLE} WHERE task_id = ? AND window_id = ? AND result IS NULL`, [task.id, windowId]) === 1);
    if (!withdrawn) return this.handOffResultAfterRace(task.id);
    return { status: 'failed', error: `window ${windowId} did not take the task within ${Math.round(this.handoffTimeoutMs / 1000)} s` };
  }

  private async handOffResultAfterRace(taskId: string): Promise<DispatchResult> {
    const row = this.options.store.read((tx) => tx.db.get(`SELECT result FROM ${HANDOFF_TABLE} WHERE task_id = ?`, [taskId]));
    await this.options.store.mutate((tx) => tx.db.run(`DELETE FROM ${HANDOFF_TABLE} WHERE task_id = ?`, [taskId]));
    try {
      return row?.result ? (JSON.parse(String(row.result)) as DispatchResult) : { status: 'failed', error: 'hand-off lost' };
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
    const requests = store.read((tx) =>
      tablesExist(tx.db) ? tx.db.all(`SELECT task_id FROM ${HANDOFF_TABLE} WHERE window_id = ? AND result IS NULL`, [windowId]).map((r) => String(r.task_id)) : [],
    );
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
      await store.mutate((tx) => {
        ensureWindowTables(tx.db);
        tx.db.run(`UPDATE ${HANDOFF_TABLE} SET result = ? WHERE task_id = ? AND window_id = ?`, [JSON.stringify(result), taskId, windowId]);
      });
    }
  }
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
