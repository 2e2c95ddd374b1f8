/**
 * Tasks that share a session (a follow-up resumes its first task's session) or a worktree (a
 * follow-up works in its first task's worktree) move to and from the history archive together
 * (docs/flows.md#archive): deleting one of them removes the session transcript or the worktree
 * only when no other task of the same file names it, and that check sees one file.
 */
import { FOLLOW_UPS_TABLE, ISOLATION_TABLE, TASKS_TABLE } from '../migrations/tables';
import { tableExists, type SqlDb } from '../db/sql';

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

/** Of the tasks due to move (oldest first), the groups whose every member is due, in that order. */
export function wholeGroups(db: SqlDb, due: readonly string[]): string[][] {
  const keys = sharingKeys(db);
  const dueSet = new Set(due);
  const holders = new Map<string, string[]>();
  for (const [id, list] of keys) for (const key of list) holders.set(key, [...(holders.get(key) ?? []), id]);
  const groupOf = (id: string) => new Set((keys.get(id) ?? []).flatMap((key) => holders.get(key) ?? []).concat(id));
  const out: string[][] = [];
  const taken = new Set<string>();
  for (const id of due) {
    if (taken.has(id)) continue;
    const group = [...groupOf(id)];
    if (!group.every((member) => dueSet.has(member))) continue; // a sharer stays live: so does the group
    const fresh = group.filter((member) => !taken.has(member));
    for (const member of fresh) taken.add(member);
    out.push(fresh);
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

/** `?, ?` for a list (at least one placeholder: `IN (NULL)` matches nothing). */
const marks = (n: number) => (n === 0 ? 'NULL' : new Array(n).fill('?').join(', '));

/**
 * Of a planned batch, the tasks that may still move now: still finished, every ticket settled or
 * abandoned, and no task outside `planned` sharing their session or worktree (a follow-up made
 * while the run went on keeps its first task here).
 */
export function stillMovable(db: SqlDb, ids: readonly string[], planned: ReadonlySet<string>): string[] {
  if (ids.length === 0) return [];
  const follow = tableExists(db, FOLLOW_UPS_TABLE);
  const isolation = tableExists(db, ISOLATION_TABLE);
  const join = `${follow ? `LEFT JOIN ${FOLLOW_UPS_TABLE} f ON f.task_id = t.off_peak_task_id` : ''}
     ${isolation ? `LEFT JOIN ${ISOLATION_TABLE} i ON i.task_id = t.off_peak_task_id` : ''}`;
  const s2 = follow ? 'f.session_id' : 'NULL';
  const w = isolation ? 'i.worktree_path' : 'NULL';
  const rows = db.all(
    `SELECT t.off_peak_task_id AS id, t.session_id AS s1, ${s2} AS s2, ${w} AS w FROM ${TASKS_TABLE} t ${join}
     WHERE t.off_peak_task_id IN (${marks(ids.length)}) AND t.status IN ('completed', 'failed', 'cancelled')
       AND NOT EXISTS (SELECT 1 FROM off_peak_tickets k WHERE k.task_id = t.off_peak_task_id AND k.settle_state NOT IN ('settled', 'abandoned'))`,
    ids,
  );
  const sessions = [
    ...new Set(
      rows
        .flatMap((r) => [r.s1, r.s2])
        .filter((v) => v !== null && v !== undefined)
        .map(String),
    ),
  ];
  const worktrees = [
    ...new Set(
      rows
        .map((r) => r.w)
        .filter((v) => v !== null && v !== undefined)
        .map(String),
    ),
  ];
  const blocked = new Set<string>();
  for (const r of db.all(
    `SELECT t.off_peak_task_id AS id, t.session_id AS s1, ${s2} AS s2, ${w} AS w FROM ${TASKS_TABLE} t ${join}
     WHERE t.session_id IN (${marks(sessions.length)}) OR ${s2} IN (${marks(sessions.length)}) OR ${w} IN (${marks(worktrees.length)})`,
    [...sessions, ...sessions, ...worktrees],
  )) {
    if (planned.has(String(r.id))) continue;
    for (const key of [r.s1, r.s2]) if (key !== null && key !== undefined) blocked.add(`s:${String(key)}`);
    if (r.w !== null && r.w !== undefined) blocked.add(`w:${String(r.w)}`);
  }
  return rows
    .filter((r) => !(blocked.has(`s:${String(r.s1)}`) || blocked.has(`s:${String(r.s2)}`) || blocked.has(`w:${String(r.w)}`)))
    .map((r) => String(r.id));
}
