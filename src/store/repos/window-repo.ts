/**
 * Window registry and cross-window hand-off requests (off_peak_windows, off_peak_dispatch_requests).
 * A window's row is written only when its content changes, so an idle window never writes.
 */
import { invalidInput } from '../errors';
import { HANDOFF_TABLE, WINDOWS_TABLE } from '../migrations/tables';
import { StoreRepo } from './store-repo';

export interface WindowRecord {
  windowId: string;
  workspaceKeys: string[];
  pid: number;
  host: string;
  registeredAt: number;
}

function parseKeys(text: unknown): string[] {
  try {
    const parsed: unknown = JSON.parse(String(text));
    return Array.isArray(parsed) ? parsed.map(String) : [];
  } catch {
    return [];
  }
}

export class WindowRepo extends StoreRepo {
  get(windowId: string): WindowRecord | undefined {
    return this.list().find((w) => w.windowId === windowId);
  }

  list(): WindowRecord[] {
    return this.db.all(`SELECT * FROM ${WINDOWS_TABLE} ORDER BY window_id`).map((row) => ({
      windowId: String(row.window_id),
      workspaceKeys: parseKeys(row.workspace_keys),
      pid: Number(row.pid),
      host: String(row.host),
      registeredAt: Number(row.registered_at),
    }));
  }

  /** Inserts or updates a window's row; returns false (and writes nothing) when it is unchanged. */
  register(window: { windowId: string; workspaceKeys: readonly string[]; pid: number; host: string }): boolean {
    if (!window.windowId) throw invalidInput('window id must not be empty');
    const keys = JSON.stringify([...window.workspaceKeys]);
    const row = this.db.get(`SELECT workspace_keys, pid, host FROM ${WINDOWS_TABLE} WHERE window_id = ?`, [window.windowId]);
    if (row && String(row.workspace_keys) === keys && Number(row.pid) === window.pid && String(row.host) === window.host) return false;
    this.db.run(
      `INSERT INTO ${WINDOWS_TABLE} (window_id, workspace_keys, pid, host, registered_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(window_id) DO UPDATE SET workspace_keys = excluded.workspace_keys, pid = excluded.pid, host = excluded.host`,
      [window.windowId, keys, window.pid, window.host, this.now],
    );
    return true;
  }

  unregister(windowId: string): boolean {
    return this.db.run(`DELETE FROM ${WINDOWS_TABLE} WHERE window_id = ?`, [windowId]) === 1;
  }

  /** Leader side: asks `windowId` to run a task (replaces an earlier request for the task). */
  requestHandOff(taskId: string, windowId: string): void {
    this.db.run(`INSERT OR REPLACE INTO ${HANDOFF_TABLE} (task_id, window_id, requested_at, result) VALUES (?, ?, ?, NULL)`, [
      taskId,
      windowId,
      this.now,
    ]);
  }

  /** The answer written by the window, if any (raw JSON text). */
  handOffAnswer(taskId: string, windowId?: string): string | undefined {
    const row = windowId
      ? this.db.get(`SELECT result FROM ${HANDOFF_TABLE} WHERE task_id = ? AND window_id = ?`, [taskId, windowId])
      : this.db.get(`SELECT result FROM ${HANDOFF_TABLE} WHERE task_id = ?`, [taskId]);
    return row?.result === null || row?.result === undefined ? undefined : String(row.result);
  }

  /** Window side: the tasks handed to this window and not answered yet. */
  pendingHandOffs(windowId: string): string[] {
    return this.db
      .all(`SELECT task_id FROM ${HANDOFF_TABLE} WHERE window_id = ? AND result IS NULL ORDER BY requested_at, task_id`, [windowId])
      .map((r) => String(r.task_id));
  }

  answerHandOff(taskId: string, windowId: string, resultJson: string): boolean {
    return this.db.run(`UPDATE ${HANDOFF_TABLE} SET result = ? WHERE task_id = ? AND window_id = ?`, [resultJson, taskId, windowId]) === 1;
  }

  /** Removes a request; with `onlyUnanswered`, only if the window has not answered yet. */
  removeHandOff(taskId: string, options: { windowId?: string; onlyUnanswered?: boolean } = {}): boolean {
    let sql = `DELETE FROM ${HANDOFF_TABLE} WHERE task_id = ?`;
    const params: string[] = [taskId];
    if (options.windowId) {
      sql += ' AND window_id = ?';
      params.push(options.windowId);
    }
    if (options.onlyUnanswered) sql += ' AND result IS NULL';
    return this.db.run(sql, params) === 1;
  }
}
