/**
 * Tasks that share a session (a follow-up resumes its first task's session) or a worktree (a
 * follow-up works in its first task's worktree) move to and from the history archive together
 * (docs/flows.md#archive): deleting one of them removes the session transcript or the worktree
 * only when no other task of the same file names it, and that check sees one file.
 */
import { FOLLOW_UPS_TABLE, ISOLATION_TABLE, TASKS_TABLE, tableExists } from './schema';
import type { SqlDb } from './sql';

/** What each task shares with others: `s:<session id>` and `w:<worktree path>`, by task id. */
export function sharingKeys(db: SqlDb): Map<string, string[]> {
  const follow = tableExists(db, FOLLOW_UPS_TABLE);
  const isolation = tableExists(db, ISOLATION_TABLE);
  const rows = db.all(
    `SELECT t.off_peak_task_id AS id, t.session_id AS s1, ${follow ? 'f.session_id' : 'NULL'} AS s2, ${isolation ? 'i.worktree_path' : 'NULL'} AS w
     FROM ${TASKS_TABLE} t
     ${follow ? `LEFT JOIN ${FOLLOW_UPS_TABLE} f ON f.task_id = t.off_peak_task_id` : ''}
     ${isolation ? `LEFT JOIN ${ISOLATION_TABLE} i ON i.task_id = t.off_peak_task_id` : ''}`,
  );
  const keys = new Map<string, string[]>();
  for (const r of rows) {
    const list = [r.s1 ? `s:${String(r.s1)}` : '', r.s2 ? `s:${String(r.s2)}` : '', r.w ? `w:${String(r.w)}` : ''].filter((k) => k !== '');
    keys.set(String(r.id), [...new Set(list)]);
  }
  return keys;
}

/**
 * Of the tasks due to move (oldest first), those whose every sharer is due too, in batches that
 * keep a group whole: at most `limit`, unless one group is larger.
 */
export function wholeGroups(db: SqlDb, due: readonly string[], limit: number): string[] {
  const keys = sharingKeys(db);
  const dueSet = new Set(due);
  const holders = new Map<string, string[]>();
  for (const [id, list] of keys) for (const key of list) holders.set(key, [...(holders.get(key) ?? []), id]);
  const groupOf = (id: string) => new Set((keys.get(id) ?? []).flatMap((key) => holders.get(key) ?? []).concat(id));
  const out: string[] = [];
  const taken = new Set<string>();
  for (const id of due) {
    if (out.length >= limit) break;
    if (taken.has(id)) continue;
    const group = [...groupOf(id)];
    if (!group.every((member) => dueSet.has(member))) continue; // a sharer stays live: so does the group
    for (const member of group) {
      if (taken.has(member)) continue;
      taken.add(member);
      out.push(member);
    }
  }
  return out;
}

/** The archived tasks that share a session or worktree with `taskId` (itself included). */
export function groupIn(db: SqlDb, taskId: string): string[] {
  const keys = sharingKeys(db);
  const mine = new Set(keys.get(taskId) ?? []);
  if (!keys.has(taskId)) return [];
  return [...keys].filter(([id, list]) => id === taskId || list.some((k) => mine.has(k))).map(([id]) => id);
}
