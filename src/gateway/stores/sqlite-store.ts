// The embedded default ticket store: one SQLite file via better-sqlite3 (v12; v13 crashes on
// Node 20) in WAL mode. The file is opened with an exclusive lock because the live index is
// cached in memory: a second gateway on the same file would see stale queues, so it must fail.
import type Database from 'better-sqlite3';
import type { TicketState } from '../../protocol/gateway';
import type { AccountLimitStore } from '../model/account-limit-store';
import { SqliteAccountLimitStore } from '../model/account-limit-sqlite';
import {
  IndexedTicketStore,
  newQueuedTicket,
  LiveTicketExists,
  LiveTicketIndex,
  type NewTicket,
  type TicketPatch,
  type GatewayTicketRow,
  type TicketStore,
} from './store';
import { fromRow, ticketUpdate, type SqlTicketRow } from './sql-tickets';

const SCHEMA_VERSION = 1;

/**
 * better-sqlite3 (native, kept out of dist/gateway.js) is loaded when a SQLite store opens, not with
 * the bundle: the demo gateway keeps tickets in memory and so runs where the module is not
 * installed, e.g. from the extension's .vsix.
 */
function loadBetterSqlite3(): typeof Database {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('better-sqlite3') as typeof Database;
}

export class SqliteTicketStore extends IndexedTicketStore implements TicketStore {
  private readonly db: Database.Database;
  private readonly statements: {
    insert: Database.Statement;
    get: Database.Statement<[string], SqlTicketRow>;
    takeTimes: Database.Statement<[string, number], { taken_at: number }>;
    taskSeen: Database.Statement<[string, string], { seen: number }>;
    counts: Database.Statement<[], { state: TicketState; n: number }>;
    prune: Database.Statement<[number, number]>;
  };
  private readonly updateStatements = new Map<string, Database.Statement>();

  /** `opened`: a database handle with better-sqlite3's API to use instead (personal mode's sql.js file). */
  constructor(
    readonly path: string,
    opened?: Database.Database,
  ) {
    super();
    try {
      this.db = opened ?? new (loadBetterSqlite3())(path, { timeout: 2000 });
    } catch (error) {
      throw new Error(`cannot open the ticket database ${path}: ${(error as Error).message}`);
    }
    try {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      this.db.pragma('foreign_keys = ON');
      this.db.pragma('locking_mode = EXCLUSIVE');
      this.migrate();
    } catch (error) {
      this.db.close();
      const message = (error as Error).message;
      if (/locked|busy/i.test(message)) throw new Error(`the ticket database ${path} is in use by another gateway process (${message})`);
      throw new Error(`cannot use the ticket database ${path}: ${message}`);
    }
    this.statements = {
      insert: this.db.prepare('INSERT INTO tickets (ticket_id, user_id, task_id, state, taken_at) VALUES (?, ?, ?, ?, ?)'),
      get: this.db.prepare('SELECT * FROM tickets WHERE ticket_id = ?'),
      takeTimes: this.db.prepare('SELECT taken_at FROM tickets WHERE user_id = ? AND taken_at >= ? ORDER BY taken_at'),
      taskSeen: this.db.prepare('SELECT 1 AS seen FROM tickets WHERE user_id = ? AND task_id = ? LIMIT 1'),
      counts: this.db.prepare('SELECT state, COUNT(*) AS n FROM tickets GROUP BY state'),
      prune: this.db.prepare(
        "DELETE FROM tickets WHERE state IN ('expired', 'settled') AND COALESCE(settled_at, expired_at) < ? AND taken_at < ?",
      ),
    };
    this.loadLiveIndex();
  }

  private loadLiveIndex(): void {
    this.index = new LiveTicketIndex();
    for (const row of this.db
      .prepare("SELECT * FROM tickets WHERE state IN ('queued', 'ready', 'active') ORDER BY seq")
      .all() as SqlTicketRow[]) {
      this.index.put(fromRow(row));
    }
  }

  private migrate(): void {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) throw new Error(`schema version ${version} is newer than this gateway understands (${SCHEMA_VERSION})`);
    if (version < 1) {
      this.db.exec(`
        CREATE TABLE IF NOT EXISTS tickets (
          seq            INTEGER PRIMARY KEY AUTOINCREMENT,
          ticket_id      TEXT NOT NULL UNIQUE,
          user_id        TEXT NOT NULL,
          task_id        TEXT NOT NULL,
          state          TEXT NOT NULL CHECK (state IN ('queued','ready','active','expired','settled')),
          taken_at       INTEGER NOT NULL,
          ready_at       INTEGER,
          ready_deadline INTEGER,
          active_at      INTEGER,
          active_until   INTEGER,
          expired_at     INTEGER,
          expired_from   TEXT,
          settled_at     INTEGER,
          settle_reason  TEXT,
          settled_from   TEXT
        );
        CREATE INDEX IF NOT EXISTS tickets_live ON tickets (state, seq);
        CREATE INDEX IF NOT EXISTS tickets_user_taken ON tickets (user_id, taken_at);
        CREATE INDEX IF NOT EXISTS tickets_user_task ON tickets (user_id, task_id);
        PRAGMA user_version = ${SCHEMA_VERSION};
      `);
    }
  }

  insert(ticket: NewTicket): Promise<GatewayTicketRow> {
    if (this.index.liveForTask(ticket.userId, ticket.taskId)) return Promise.reject(new LiveTicketExists(ticket.taskId));
    const result = this.statements.insert.run(ticket.ticketId, ticket.userId, ticket.taskId, 'queued', ticket.takenAt);
    const record = newQueuedTicket(ticket, Number(result.lastInsertRowid));
    this.index.put(record);
    return Promise.resolve(record);
  }

  get(ticketId: string): Promise<GatewayTicketRow | undefined> {
    return Promise.resolve(this.getNow(ticketId));
  }

  getMany(ticketIds: readonly string[]): Promise<(GatewayTicketRow | undefined)[]> {
    return Promise.resolve(ticketIds.map((id) => this.getNow(id)));
  }

  private getNow(ticketId: string): GatewayTicketRow | undefined {
    const live = this.index.get(ticketId);
    if (live) return live;
    const row = this.statements.get.get(ticketId);
    return row ? fromRow(row) : undefined;
  }

  update(ticketId: string, fromStates: readonly TicketState[], patch: TicketPatch): Promise<GatewayTicketRow | undefined> {
    return Promise.resolve(this.updateNow(ticketId, fromStates, patch));
  }

  private updateNow(ticketId: string, fromStates: readonly TicketState[], patch: TicketPatch): GatewayTicketRow | undefined {
    const current = this.getNow(ticketId);
    if (!current || !fromStates.includes(current.state)) return undefined;
    const { sql, params } = ticketUpdate(ticketId, fromStates, patch);
    let statement = this.updateStatements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.updateStatements.set(sql, statement);
    }
    const changed = statement.run(...params).changes;
    if (changed !== 1) return undefined;
    const next = { ...current, ...patch };
    this.index.put(next);
    return next;
  }

  countByState(): Promise<Record<TicketState, number>> {
    const counts: Record<TicketState, number> = { queued: 0, ready: 0, active: 0, expired: 0, settled: 0 };
    for (const row of this.statements.counts.all()) counts[row.state] = row.n;
    return Promise.resolve(counts);
  }

  hasTicketForTask(userId: string, taskId: string): Promise<boolean> {
    return Promise.resolve(this.statements.taskSeen.get(userId, taskId) !== undefined);
  }

  takeTimesSince(userId: string, since: number): Promise<number[]> {
    return Promise.resolve(this.statements.takeTimes.all(userId, since).map((r) => r.taken_at));
  }

  pruneFinished(endedBefore: number, takenBefore: number): Promise<number> {
    return Promise.resolve(this.statements.prune.run(endedBefore, takenBefore).changes);
  }

  protected async atomically<T>(fn: () => Promise<T>): Promise<T> {
    // The mutex of `transaction` keeps every other write out until COMMIT or ROLLBACK.
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = await fn();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      // The rows rolled back; the cached index may have moved ahead of them.
      this.loadLiveIndex();
      throw error;
    }
  }

  ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
    return Promise.resolve();
  }

  /** The account's usage-limit hold, in this file (account-limit-sqlite.ts). */
  accountLimitStore(): AccountLimitStore {
    return new SqliteAccountLimitStore(this.db);
  }

  close(): Promise<void> {
    if (this.db.open) this.db.close();
    return Promise.resolve();
  }
}
