/**
 * The change counters (v3+): one counter per topic in `off_peak_change_counters`, bumped by triggers
 * in the file itself, so a window that reloads another window's write knows what changed.
 */
import type { SqlValue } from 'sql.js';
import { tableExists, type SqlDb } from '../db/sql';
import {
  ASKS_TABLE,
  CHANGES_TABLE,
  CHECKS_TABLE,
  PULL_REQUESTS_TABLE,
  DISPATCH_TABLE,
  FOLLOW_UPS_TABLE,
  HANDOFF_TABLE,
  ISOLATION_TABLE,
  NOTIFY_OUTBOX_TABLE,
  OUTCOMES_TABLE,
  QUESTIONS_TABLE,
  RUNTIME_TABLE,
  SCHEDULE_RUNS_TABLE,
  SCHEDULES_TABLE,
  TASKS_TABLE,
  TICKETS_TABLE,
  WINDOWS_TABLE,
} from './tables';

/** What a change event names: each topic is one or more tables, counted by triggers (v3+). */
export type StoreTopic = 'tasks' | 'tickets' | 'windows' | 'dispatch' | 'runtime' | 'outcomes' | 'asks' | 'questions' | 'notify';
export const TOPIC_TABLES: Readonly<Record<StoreTopic, readonly string[]>> = {
  tasks: [TASKS_TABLE, FOLLOW_UPS_TABLE, ISOLATION_TABLE, CHECKS_TABLE, SCHEDULES_TABLE, SCHEDULE_RUNS_TABLE, PULL_REQUESTS_TABLE],
  tickets: [TICKETS_TABLE],
  windows: [WINDOWS_TABLE],
  dispatch: [HANDOFF_TABLE, DISPATCH_TABLE],
  runtime: [RUNTIME_TABLE],
  outcomes: [OUTCOMES_TABLE],
  asks: [ASKS_TABLE],
  questions: [QUESTIONS_TABLE],
  notify: [NOTIFY_OUTBOX_TABLE],
};
export const STORE_TOPICS = Object.keys(TOPIC_TABLES) as StoreTopic[];

/**
 * One counter bump per statement kind and table: a reload compares counters to say what changed.
 * Only tables that exist get triggers: a step calls this once it has created its tables.
 */
export function changeTriggersSql(db: SqlDb): string {
  const parts: string[] = [];
  for (const topic of STORE_TOPICS) {
    parts.push(`INSERT OR IGNORE INTO ${CHANGES_TABLE} (topic, counter) VALUES ('${topic}', 0);`);
    for (const table of TOPIC_TABLES[topic]) {
      if (!tableExists(db, table)) continue;
      for (const op of ['INSERT', 'UPDATE', 'DELETE']) {
        parts.push(`CREATE TRIGGER IF NOT EXISTS ${table}_${op.toLowerCase()}_counts AFTER ${op} ON ${table}
          BEGIN UPDATE ${CHANGES_TABLE} SET counter = counter + 1 WHERE topic = '${topic}'; END;`);
      }
    }
  }
  return parts.join('\n');
}

/** The change counters of a DB (all zero before v3). */
export function zeroCounters(): Record<StoreTopic, number> {
  return Object.fromEntries(STORE_TOPICS.map((t) => [t, 0])) as Record<StoreTopic, number>;
}

export function changeCounters(db: SqlDb): Record<StoreTopic, number> {
  const counters = zeroCounters();
  let rows: SqlValue[][];
  try {
    // Run on every write: one statement prepared once (a missing table is the rare case).
    rows = db.cachedAll(`SELECT topic, counter FROM ${CHANGES_TABLE}`);
  } catch (err) {
    if (!tableExists(db, CHANGES_TABLE)) return counters;
    throw err;
  }
  for (const [topic, counter] of rows) {
    if (String(topic) in counters) counters[topic as StoreTopic] = Number(counter);
  }
  return counters;
}

/** Topics whose counter differs between two readings. */
export function changedTopics(before: Record<StoreTopic, number>, after: Record<StoreTopic, number>): Set<StoreTopic> {
  return new Set(STORE_TOPICS.filter((t) => before[t] !== after[t]));
}
