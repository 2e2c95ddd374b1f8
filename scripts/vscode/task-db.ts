// Reading the extension's task DB as it is on disk, for the panel tours (scripts/vscode/tour.ts)
// and the start check (scripts/start-check.ts).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import initSqlJs, { type SqlJsStatic } from 'sql.js';
import { taskLogsDir } from '../../src/agent/runtime/segment-logs';
import { personalTasksDir } from '../../src/personal/other-queue';

export interface TaskRow {
  id: string;
  title: string;
  prompt: string;
  status: string;
  session_id: string | null;
  server_ticket_id: string | null;
  failure_reason: string | null;
  history_deleted_at: number | null;
}

export interface TicketRow {
  ticket_id: string;
  ordinal: number;
  end_reason: string | null;
}

/** Reads the extension's task DB file as it is on disk (the store persists every change). */
export class TaskDb {
  private constructor(
    private readonly sql: SqlJsStatic,
    private readonly userData: string,
    private readonly personal: boolean,
  ) {}

  /** `personal`: personal mode's own task database (docs/architecture.md#personal-mode). */
  static async open(userData: string, options: { personal?: boolean } = {}): Promise<TaskDb> {
    return new TaskDb(await initSqlJs(), userData, options.personal ?? false);
  }

  /** The extension's globalStorage: the DB, its lease file and the agents' runtime dir. */
  get storageDir(): string {
    return path.join(this.userData, 'User', 'globalStorage', 'offpeak.off-peak-tasks');
  }

  /** The folder of the task database and its lease file. */
  private get dbDir(): string {
    return this.personal ? personalTasksDir(this.storageDir) : this.storageDir;
  }

  private file(): string {
    return path.join(this.dbDir, 'tasks-index.sqlite');
  }

  private rows<T>(sql: string, params: (string | number)[] = []): T[] {
    const file = this.file();
    if (!existsSync(file)) return [];
    const db = new this.sql.Database(readFileSync(file));
    try {
      const stmt = db.prepare(sql);
      stmt.bind(params);
      const rows: T[] = [];
      while (stmt.step()) rows.push(stmt.getAsObject() as T);
      stmt.free();
      return rows;
    } finally {
      db.close();
    }
  }

  tasks(): TaskRow[] {
    return this.rows<TaskRow>(
      'SELECT off_peak_task_id AS id, title, prompt, status, session_id, server_ticket_id, failure_reason, history_deleted_at FROM off_peak_tasks',
    );
  }

  byPrompt(prefix: string): TaskRow | undefined {
    return this.tasks().find((t) => t.prompt.startsWith(prefix));
  }

  tickets(taskId: string): TicketRow[] {
    return this.rows<TicketRow>('SELECT ticket_id, ordinal, end_reason FROM off_peak_tickets WHERE task_id = ? ORDER BY ordinal', [taskId]);
  }

  ticketsOf(taskId: string): string[] {
    return this.tickets(taskId).map((t) => t.ticket_id);
  }

  /** The agent a task runs with (recorded when its first segment starts). */
  agentOf(taskId: string): string | undefined {
    return this.rows<{ agent: string }>('SELECT agent FROM off_peak_task_runtime WHERE task_id = ?', [taskId])[0]?.agent;
  }

  /** The windows registered on this DB (one row per window's extension host). */
  windows(): { window_id: string; pid: number; workspace_keys: string }[] {
    return this.rows('SELECT window_id, pid, workspace_keys FROM off_peak_windows');
  }

  /** The task's segment dirs in the order they ran (segment-<ordinal>-<startedAt>). */
  segmentDirs(taskId: string): string[] {
    const dir = taskLogsDir(path.join(this.storageDir, 'runtime'), taskId);
    if (!existsSync(dir)) return [];
    // Only the segments' folders: the task's folder also holds its files-changed snapshot.
    return readdirSync(dir)
      .filter((name) => /^segment-\d+-\d+$/.test(name))
      .sort()
      .map((segment) => path.join(dir, segment));
  }

  /**
   * The agent processes of a task's segments that are running (each segment's agent.pid exists
   * while its agent runs): the agent's pid and the pid of the extension host that started it.
   */
  runningAgents(taskId: string): { pid: number; hostPid: number; sessionId: string }[] {
    return this.segmentDirs(taskId).flatMap((dir) => {
      try {
        return [JSON.parse(readFileSync(path.join(dir, 'agent.pid'), 'utf8')) as { pid: number; hostPid: number; sessionId: string }];
      } catch {
        return []; // no pid file: that segment's agent is not running (or just exited)
      }
    });
  }

  /** What the task's agents printed so far, all segments (each segment's agent.log). */
  agentOutput(taskId: string): string {
    return this.segmentDirs(taskId)
      .map((dir) => path.join(dir, 'agent.log'))
      .filter((file) => existsSync(file))
      .map((file) => readFileSync(file, 'utf8'))
      .join('');
  }

  /** The leader lease file beside the DB (`{holder, token, acquiredAt, ttlMs, pid, host}`). */
  lease(): { holder: string; pid?: number } | undefined {
    const file = path.join(this.dbDir, 'tasks-index.lease');
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { holder: string; pid?: number }) : undefined;
  }
}
