// The two queues never mix (docs/architecture.md#personal-mode): personal mode keeps its tasks in
// a task database of its own (globalStorage/personal/tasks/), team mode in globalStorage itself,
// so a task stays with the authority that gave it its ticket. The engine of one mode never opens
// the other's database; this reads it (never writes) to tell the user what waits there.
import fs from 'node:fs';
import path from 'node:path';
import { TERMINAL_STATUSES } from '../core/types';
import { TASKS_TABLE } from '../store/migrations/tables';
import { loadSqlJs } from '../store/db/sqljs';
import type { OffPeakMode } from './personal-config';

/** Where personal mode's engine keeps its task database, sessions and logs. */
export function personalTasksDir(storageDir: string): string {
  return path.join(storageDir, 'personal', 'tasks');
}

/** How many unfinished tasks the task database in `dir` holds (0 when there is none or it cannot be read). */
export async function unfinishedTasksIn(dir: string, wasmPath?: string): Promise<number> {
  let bytes: Uint8Array;
  try {
    bytes = fs.readFileSync(path.join(dir, 'tasks-index.sqlite'));
  } catch {
    return 0;
  }
  try {
    const SQL = await loadSqlJs(wasmPath);
    const db = new SQL.Database(bytes);
    try {
      const placeholders = TERMINAL_STATUSES.map(() => '?').join(',');
      const rows = db.exec(`SELECT COUNT(*) FROM ${TASKS_TABLE} WHERE status NOT IN (${placeholders})`, [...TERMINAL_STATUSES]);
      return Number(rows[0]?.values[0]?.[0] ?? 0);
    } finally {
      db.close();
    }
  } catch {
    return 0;
  }
}

/** The panel's line about the other mode's unfinished tasks, or undefined when there are none. */
export async function otherQueueNotice(storageDir: string, mode: OffPeakMode, wasmPath?: string): Promise<string | undefined> {
  const otherDir = mode === 'personal' ? storageDir : personalTasksDir(storageDir);
  const count = await unfinishedTasksIn(otherDir, wasmPath);
  if (count === 0) return undefined;
  const [tasks, wait, they] = count === 1 ? ['1 unfinished task', 'waits', 'it is'] : [`${count} unfinished tasks`, 'wait', 'they are'];
  return mode === 'personal'
    ? `${tasks} of your team's gateway ${wait} there, untouched: ${they} not run or synced in personal mode and ${count === 1 ? 'goes' : 'go'} on when you set "Off-Peak: Mode" back to gateway.`
    : `${tasks} of personal mode ${wait} on this machine, untouched: ${they} not sent to the gateway and ${count === 1 ? 'goes' : 'go'} on when you set "Off-Peak: Mode" back to personal.`;
}
