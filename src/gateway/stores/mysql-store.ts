// The shared ticket store: MySQL 8 / MariaDB 10.6+ through mysql2 (a pool, prepared statements).
// Several gateway instances use one database; each guarantee rests on the database, not on memory:
// - FIFO and capacity: one promoter at a time. A tick's transaction first locks the `promoter`
//   row with FOR UPDATE SKIP LOCKED (another instance promoting => this tick does nothing). The
//   lock is the lease and the transaction its fence: a promoter that stalls or dies cannot commit
//   anything after losing it, because its writes and its lock end together (rollback on a dropped
//   connection). Row locks on queued tickets alone (SKIP LOCKED on the queue) would let two
//   instances each count the free capacity and both fill it, and would promote out of order.
// - FIFO order is commit order: an insert first locks the `queue_tail` row until its COMMIT, so
//   sequence numbers are handed out one committed take at a time (AUTO_INCREMENT alone hands them
//   out at INSERT, and a later take could commit first and be promoted before an earlier one).
// - Retry-safe takes: a unique key on `live_key` (user + task while the ticket is live).
// - Quotas and live limits: a take locks its user's row first, so one user's takes run one at a
//   time across instances, each seeing the others' committed inserts (READ COMMITTED).
// - Long-polls: every writing transaction bumps `gateway_feed.seq` before COMMIT; each instance
//   polls that one row and wakes its waiters when another instance moved it (no lost wake-up: the
//   bump commits with the change it announces; its own bumps it knows from LAST_INSERT_ID).
// - Model-request slots: one row per request in flight, counted under the `model_slots` lock;
//   rows of an instance whose heartbeat stopped (SIGKILL) stop counting after INSTANCE_TTL_MS.
//   Heartbeats are in the database's clock, so instances on different hosts need not agree.
// The schema is in mysql-schema.ts, the rows' conversion in mysql-tickets.ts, the driver and the
// pool options in mysql-connection.ts.
import { randomBytes } from 'node:crypto';
import { AsyncLocalStorage } from 'node:async_hooks';
import type mysql from 'mysql2/promise';
import type { TicketState } from '../../protocol/gateway';
import { loadMysql2, mysqlConnectionOptions } from './mysql-connection';
import { appliedMysqlMigrations, migrateMysql } from './mysql-schema';
import { liveKey, TICKET_COLUMNS } from './mysql-tickets';
import { fromRow, ticketUpdate, type SqlTicketRow } from './sql-tickets';
import {
  newQueuedTicket,
  LiveTicketExists,
  type ModelSlots,
  type NewTicket,
  type TicketPatch,
  type GatewayTicketRow,
  type TicketStore,
} from './store';

/** An instance that has not beaten its heartbeat this long is dead: its model slots stop counting. */
export const INSTANCE_TTL_MS = 5000;
const HEARTBEAT_MS = 1000;
/** The database server's clock in ms. */
const DB_NOW_MS = 'CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)';
const TRANSACTION_ATTEMPTS = 5;

const LIVE_STATES: readonly TicketState[] = ['queued', 'ready', 'active'];

function errorCode(error: unknown): string | undefined {
  return (error as { code?: string } | null)?.code;
}

interface TransactionContext {
  connection: mysql.PoolConnection;
  /** Something was written: bump the change feed before COMMIT. */
  wrote: boolean;
  /** The feed value this transaction's bump set, once it did. */
  bumpedTo?: number;
}

export interface MysqlStoreOptions {
  /** mysql://user@host:port/database (a password in the URL is refused: use `password`). */
  url: string;
  password?: string | null;
  poolSize?: number;
  /** How often this instance polls the change feed for other instances' changes. */
  changePollMs?: number;
  /** Wall clock for the migration record. */
  now?: () => number;
}

export class MysqlTicketStore implements TicketStore {
  readonly instanceId = randomBytes(16).toString('hex');
  readonly modelSlots: ModelSlots;
  private readonly context = new AsyncLocalStorage<TransactionContext>();
  private readonly listeners = new Set<() => void>();
  private feedSeq = -1;
  private feedTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private polling = false;
  /** Feed values this instance's own commits set: its own changes were announced locally already. */
  private readonly ownBumps = new Set<number>();
  private closed = false;
  private readonly now: () => number;

  private constructor(
    private readonly pool: mysql.Pool,
    private readonly changePollMs: number,
    now: () => number,
  ) {
    this.now = now;
    this.modelSlots = { tryAcquire: (userId, ticketId, max, maxPerUser) => this.tryAcquireSlot(userId, ticketId, max, maxPerUser) };
  }

  /** Connects, migrates (once across instances starting together), registers this instance. */
  static async open(options: MysqlStoreOptions): Promise<MysqlTicketStore> {
    const pool = loadMysql2().createPool({
      ...mysqlConnectionOptions(options.url, options.password),
      connectionLimit: options.poolSize ?? 10,
      waitForConnections: true,
      supportBigNumbers: true,
      bigNumberStrings: false,
      charset: 'utf8mb4',
    });
    // Every session reads the latest committed rows: a take that waited for its user's lock must
    // see the take that held it (REPEATABLE READ would keep an older snapshot).
    pool.on('connection', (connection) => {
      connection.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
    });
    const store = new MysqlTicketStore(pool, options.changePollMs ?? 50, options.now ?? Date.now);
    try {
      await migrateMysql(pool, store.now);
      await store.heartbeat();
      const [rows] = await pool.execute<mysql.RowDataPacket[]>('SELECT seq FROM gateway_feed WHERE id = 1');
      store.feedSeq = Number(rows[0].seq);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw new Error(`cannot use the MySQL ticket database: ${(error as Error).message}`);
    }
    store.heartbeatTimer = setInterval(() => void store.heartbeat().catch(() => undefined), HEARTBEAT_MS);
    store.heartbeatTimer.unref();
    store.feedTimer = setInterval(() => void store.pollFeed(), store.changePollMs);
    store.feedTimer.unref();
    return store;
  }

  /** Schema versions applied (tests: several instances starting at once migrate once). */
  appliedMigrations(): Promise<{ version: number; appliedAt: number }[]> {
    return appliedMysqlMigrations(this.pool);
  }

  private async heartbeat(): Promise<void> {
    await this.pool.execute(
      `INSERT INTO gateway_instances (instance_id, heartbeat_at) VALUES (?, ${DB_NOW_MS}) ON DUPLICATE KEY UPDATE heartbeat_at = VALUES(heartbeat_at)`,
      [this.instanceId],
    );
    // Whoever beats also sweeps what dead instances left behind.
    await this.pool.execute(
      `DELETE s FROM model_slots s JOIN gateway_instances i ON i.instance_id = s.instance_id WHERE i.heartbeat_at < ${DB_NOW_MS} - ?`,
      [INSTANCE_TTL_MS],
    );
    await this.pool.execute(`DELETE FROM gateway_instances WHERE heartbeat_at < ${DB_NOW_MS} - ?`, [INSTANCE_TTL_MS]);
  }

  private async pollFeed(): Promise<void> {
    if (this.polling || this.closed || this.listeners.size === 0) return;
    this.polling = true;
    try {
      const [rows] = await this.pool.execute<mysql.RowDataPacket[]>('SELECT seq FROM gateway_feed WHERE id = 1');
      const seq = Number(rows[0].seq);
      // Every bump adds 1: the values in between are this instance's own changes or someone else's.
      let external = seq - this.feedSeq > 10_000;
      for (let value = this.feedSeq + 1; value <= seq && !external; value++) if (!this.ownBumps.delete(value)) external = true;
      if (seq - this.feedSeq > 10_000) this.ownBumps.clear();
      for (const value of this.ownBumps) if (value <= seq) this.ownBumps.delete(value);
      this.feedSeq = seq;
      if (external) for (const listener of [...this.listeners]) listener();
    } catch {
      // The next poll tries again; /healthz reports a database that stays away.
    } finally {
      this.polling = false;
    }
  }

  onExternalChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The transaction's connection, or the pool outside one. */
  private get db(): mysql.Pool | mysql.PoolConnection {
    return this.context.getStore()?.connection ?? this.pool;
  }

  private markWritten(): void {
    const ctx = this.context.getStore();
    if (ctx) ctx.wrote = true;
  }

  private async rows(sql: string, params: (string | number | null)[]): Promise<GatewayTicketRow[]> {
    const [rows] = await this.db.execute<mysql.RowDataPacket[]>(sql, params);
    return (rows as SqlTicketRow<number | string>[]).map(fromRow);
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.context.getStore()) return fn();
    for (let attempt = 1; ; attempt++) {
      const connection = await this.pool.getConnection();
      const ctx: TransactionContext = { connection, wrote: false };
      try {
        await connection.query('START TRANSACTION');
        const result = await this.context.run(ctx, fn);
        // Announce the change in the same commit, last, so the feed row is locked only briefly.
        if (ctx.wrote) {
          const [bump] = await connection.execute<mysql.ResultSetHeader>(
            'UPDATE gateway_feed SET seq = LAST_INSERT_ID(seq + 1) WHERE id = 1',
          );
          ctx.bumpedTo = Number(bump.insertId);
          this.ownBumps.add(ctx.bumpedTo);
        }
        await connection.query('COMMIT');
        return result;
      } catch (error) {
        // Forget the bump while this transaction still holds the feed row: once it rolls back,
        // another instance's commit may set the same value.
        if (ctx.bumpedTo !== undefined) this.ownBumps.delete(ctx.bumpedTo);
        await connection.query('ROLLBACK').catch(() => undefined);
        // Deadlocks and lock-wait timeouts are the database choosing a victim: run it again.
        const retry =
          (errorCode(error) === 'ER_LOCK_DEADLOCK' || errorCode(error) === 'ER_LOCK_WAIT_TIMEOUT') && attempt < TRANSACTION_ATTEMPTS;
        if (!retry) throw error;
      } finally {
        connection.release();
      }
    }
  }

  /** Runs a write as its own transaction when called outside one (so it bumps the feed too). */
  private write<T>(fn: () => Promise<T>): Promise<T> {
    return this.context.getStore() ? fn() : this.transaction(fn);
  }

  async lockUser(userId: string): Promise<void> {
    // ON DUPLICATE KEY UPDATE locks the row exclusively whether it is new or not (INSERT IGNORE
    // then FOR UPDATE would share-lock a duplicate first and deadlock on the upgrade).
    await this.db.execute('INSERT INTO gateway_users (user_id) VALUES (?) ON DUPLICATE KEY UPDATE user_id = user_id', [userId]);
  }

  async lockPromoter(): Promise<boolean> {
    const [rows] = await this.db.execute<mysql.RowDataPacket[]>(
      "SELECT name FROM gateway_locks WHERE name = 'promoter' FOR UPDATE SKIP LOCKED",
    );
    return rows.length === 1;
  }

  insert(ticket: NewTicket): Promise<GatewayTicketRow> {
    return this.write(async () => {
      await this.db.execute("SELECT name FROM gateway_locks WHERE name = 'queue_tail' FOR UPDATE");
      try {
        const [result] = await this.db.execute<mysql.ResultSetHeader>(
          'INSERT INTO tickets (ticket_id, user_id, task_id, live_key, state, taken_at) VALUES (?, ?, ?, ?, ?, ?)',
          [ticket.ticketId, ticket.userId, ticket.taskId, liveKey(ticket.userId, ticket.taskId), 'queued', ticket.takenAt],
        );
        this.markWritten();
        return newQueuedTicket(ticket, Number(result.insertId));
      } catch (error) {
        if (errorCode(error) === 'ER_DUP_ENTRY' && /tickets_live_task/.test((error as Error).message))
          throw new LiveTicketExists(ticket.taskId);
        throw error;
      }
    });
  }

  async get(ticketId: string): Promise<GatewayTicketRow | undefined> {
    return (await this.rows(`SELECT ${TICKET_COLUMNS} FROM tickets WHERE ticket_id = ?`, [ticketId]))[0];
  }

  update(ticketId: string, fromStates: readonly TicketState[], patch: TicketPatch): Promise<GatewayTicketRow | undefined> {
    return this.write(async () => {
      // A ticket leaving the live states frees its (user, task) for a new take.
      const leavesLive = patch.state !== undefined && !LIVE_STATES.includes(patch.state);
      const { sql, params } = ticketUpdate(ticketId, fromStates, patch, leavesLive ? ['live_key = NULL'] : []);
      const [result] = await this.db.execute<mysql.ResultSetHeader>(sql, params);
      if (result.affectedRows !== 1) return undefined;
      this.markWritten();
      return this.get(ticketId);
    });
  }

  async liveForTask(userId: string, taskId: string): Promise<GatewayTicketRow | undefined> {
    return (await this.rows(`SELECT ${TICKET_COLUMNS} FROM tickets WHERE live_key = ?`, [liveKey(userId, taskId)]))[0];
  }

  liveForUser(userId: string): Promise<GatewayTicketRow[]> {
    return this.rows(`SELECT ${TICKET_COLUMNS} FROM tickets WHERE user_id = ? AND state IN ('queued', 'ready', 'active') ORDER BY seq`, [
      userId,
    ]);
  }

  queued(limit: number): Promise<GatewayTicketRow[]> {
    // Inside the promoter's transaction the read locks the rows it will promote.
    const lock = this.context.getStore() ? ' FOR UPDATE' : '';
    return this.rows(
      `SELECT ${TICKET_COLUMNS} FROM tickets WHERE state = 'queued' ORDER BY seq LIMIT ${Math.max(0, Math.floor(limit))}${lock}`,
      [],
    );
  }

  async queuePosition(ticket: GatewayTicketRow): Promise<number> {
    const [rows] = await this.db.execute<mysql.RowDataPacket[]>("SELECT COUNT(*) AS n FROM tickets WHERE state = 'queued' AND seq <= ?", [
      ticket.seq,
    ]);
    return Number(rows[0].n);
  }

  holdingCapacity(): Promise<GatewayTicketRow[]> {
    return this.rows(`SELECT ${TICKET_COLUMNS} FROM tickets WHERE state IN ('ready', 'active') ORDER BY seq`, []);
  }

  async countByState(): Promise<Record<TicketState, number>> {
    const counts: Record<TicketState, number> = { queued: 0, ready: 0, active: 0, expired: 0, settled: 0 };
    const [rows] = await this.db.execute<mysql.RowDataPacket[]>('SELECT state, COUNT(*) AS n FROM tickets GROUP BY state');
    for (const row of rows) counts[row.state as TicketState] = Number(row.n);
    return counts;
  }

  async hasTicketForTask(userId: string, taskId: string): Promise<boolean> {
    // One user's rows through the (user_id, ...) keys; no index of its own (only asked while the rollout is off).
    const [rows] = await this.db.execute<mysql.RowDataPacket[]>('SELECT 1 FROM tickets WHERE user_id = ? AND task_id = ? LIMIT 1', [
      userId,
      taskId,
    ]);
    return rows.length > 0;
  }

  async takeTimesSince(userId: string, since: number): Promise<number[]> {
    const [rows] = await this.db.execute<mysql.RowDataPacket[]>(
      'SELECT taken_at FROM tickets WHERE user_id = ? AND taken_at >= ? ORDER BY taken_at',
      [userId, since],
    );
    return rows.map((r) => Number(r.taken_at));
  }

  pruneFinished(endedBefore: number, takenBefore: number): Promise<number> {
    return this.write(async () => {
      const [result] = await this.db.execute<mysql.ResultSetHeader>(
        "DELETE FROM tickets WHERE state IN ('expired', 'settled') AND COALESCE(settled_at, expired_at) < ? AND taken_at < ?",
        [endedBefore, takenBefore],
      );
      return result.affectedRows;
    });
  }

  private async tryAcquireSlot(
    userId: string,
    ticketId: string,
    max: number,
    maxPerUser: number,
  ): Promise<(() => Promise<void>) | 'total' | 'user'> {
    const slotId = await this.transaction(async () => {
      const db = this.db;
      // The lock row makes count-then-insert one step across instances.
      await db.execute("SELECT name FROM gateway_locks WHERE name = 'model_slots' FOR UPDATE");
      const [rows] = await db.execute<mysql.RowDataPacket[]>(
        `SELECT COUNT(*) AS n, COALESCE(SUM(s.user_id = ?), 0) AS mine FROM model_slots s JOIN gateway_instances i ON i.instance_id = s.instance_id WHERE i.heartbeat_at >= ${DB_NOW_MS} - ?`,
        [userId, INSTANCE_TTL_MS],
      );
      if (Number(rows[0].n) >= max) return 'total' as const;
      if (Number(rows[0].mine) >= maxPerUser) return 'user' as const;
      const [result] = await db.execute<mysql.ResultSetHeader>(
        'INSERT INTO model_slots (instance_id, user_id, ticket_id) VALUES (?, ?, ?)',
        [this.instanceId, userId, ticketId],
      );
      return Number(result.insertId);
    });
    if (typeof slotId === 'string') return slotId;
    return async () => {
      await this.pool.execute('DELETE FROM model_slots WHERE slot_id = ?', [slotId]);
    };
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.feedTimer);
    clearInterval(this.heartbeatTimer);
    // A clean stop frees this instance's slots at once (a SIGKILLed one waits for INSTANCE_TTL_MS).
    await this.pool.execute('DELETE FROM model_slots WHERE instance_id = ?', [this.instanceId]).catch(() => undefined);
    await this.pool.execute('DELETE FROM gateway_instances WHERE instance_id = ?', [this.instanceId]).catch(() => undefined);
    await this.pool.end();
  }
}
