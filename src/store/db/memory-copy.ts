/**
 * A window's in-memory sql.js copy of the DB file: the transactions run on it, and it keeps the
 * bytes it was last loaded from or saved as, to go back to when a persist fails (memory never
 * holds a change the file does not). Reading and writing the file is task-store.ts's business.
 */
import type { Database, SqlJsStatic } from 'sql.js';
import { DispatchRepo } from '../repos/dispatch-repo';
import { FollowUpRepo } from '../repos/follow-up-repo';
import { IsolationRepo } from '../repos/isolation-repo';
import { PullRequestRepo } from '../repos/pull-request-repo';
import { CheckRepo } from '../repos/check-repo';
import { AskRepo } from '../questions/ask-repo';
import { ArchiveRepo } from '../archive/archive-repo';
import { ScheduleRepo } from '../repos/schedule-repo';
import { QuestionRepo } from '../questions/question-repo';
import { NotifyRepo } from '../repos/notify-repo';
import { OutcomeRepo } from '../repos/outcome-repo';
import { RuntimeRepo } from '../repos/runtime-repo';
import { SqlDb } from './sql';
import type { StoreTx } from '../store-types';
import { TaskRepo } from '../repos/task-repo';
import { TicketRepo } from '../repos/ticket-repo';
import { WindowRepo } from '../repos/window-repo';

const PRAGMAS = 'PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY;';

export class MemoryCopy {
  private current: SqlDb;
  /** The bytes this copy was last loaded from or saved as: restored when a persist fails. */
  lastGoodBytes: Uint8Array | undefined;

  constructor(private readonly SQL: SqlJsStatic) {
    this.current = new SqlDb(new SQL.Database());
    this.current.exec(PRAGMAS);
  }

  get db(): SqlDb {
    return this.current;
  }

  /** Makes `next` (a parsed file) or, without it, an empty database the copy. */
  replace(next: Database = new this.SQL.Database()): void {
    const old = this.current;
    this.current = new SqlDb(next);
    this.current.exec(PRAGMAS);
    try {
      old.raw.close();
    } catch {
      // already closed
    }
  }

  /** Back to the last version read from or written to the file (a persist failed). No I/O. */
  restoreLastGood(): void {
    this.replace(this.lastGoodBytes ? this.openBytes(this.lastGoodBytes) : undefined);
  }

  /**
   * Parses bytes read whole from the file and runs SQLite's integrity check (at open and on
   * every reload alike: a file damaged beyond page 1 is caught, not loaded). Throws if the bytes
   * are not a sound database; that, and only that, is corruption.
   */
  parse(bytes: Uint8Array): Database {
    const db = this.openBytes(bytes);
    try {
      const result = db.exec('PRAGMA quick_check');
      const verdict = String(result[0]?.values[0]?.[0] ?? '');
      if (verdict !== 'ok') throw new Error(`integrity check failed: ${verdict}`);
      return db;
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /**
   * Runs fn in BEGIN..COMMIT; returns whether it wrote anything, and when it did, runs
   * `whenChanged` just before COMMIT (it reads the committed state). Rolls back and rethrows on
   * error. Every read is inside the transaction: a read outside starts a transaction of its own,
   * and each of those checks the in-memory file system for a journal file (a costly failed lookup
   * in sql.js), which was a fifth of a write's cost above the export and the fsyncs.
   */
  transaction(fn: () => void, whenChanged?: () => void): boolean {
    this.current.exec('BEGIN IMMEDIATE');
    try {
      const before = this.current.writeStamp();
      fn();
      const changed = this.current.writeStamp() !== before;
      if (changed) whenChanged?.();
      this.current.exec('COMMIT');
      return changed;
    } catch (err) {
      try {
        this.current.exec('ROLLBACK');
      } catch {
        // SQLite may have rolled back already
      }
      throw err;
    }
  }

  /** The repositories bound to the copy as it is now, with `now` as their time. */
  tx(now: number): StoreTx {
    const db = this.current;
    return {
      now,
      tasks: new TaskRepo(db, now),
      tickets: new TicketRepo(db, now),
      windows: new WindowRepo(db, now),
      dispatch: new DispatchRepo(db, now),
      runtime: new RuntimeRepo(db, now),
      outcomes: new OutcomeRepo(db, now),
      asks: new AskRepo(db, now),
      questions: new QuestionRepo(db, now),
      followUps: new FollowUpRepo(db, now),
      isolation: new IsolationRepo(db, now),
      notify: new NotifyRepo(db, now),
      checks: new CheckRepo(db, now),
      archive: new ArchiveRepo(db),
      schedules: new ScheduleRepo(db, now),
      pullRequests: new PullRequestRepo(db, now),
    };
  }

  /** The whole database as file bytes (outside any transaction). */
  export(): Uint8Array {
    // sql.js >= 1.17 exports through SQLite's backup API: the database stays open, its pragmas stay set.
    return this.current.raw.export();
  }

  close(): void {
    this.current.raw.close();
  }

  /**
   * A database on a private copy of `bytes`. sql.js keeps a Node Buffer it is given as its file
   * (Buffer.slice shares memory), so later transactions would rewrite `bytes` in place: the last
   * good version we may have to go back to.
   */
  private openBytes(bytes: Uint8Array): Database {
    return new this.SQL.Database(Uint8Array.prototype.slice.call(bytes));
  }
}
