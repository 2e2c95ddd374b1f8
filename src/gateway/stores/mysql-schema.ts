// The MySQL ticket store's schema: numbered migrations, applied in order, each once, under a named
// lock, so several gateway instances starting together migrate once.
import type mysql from 'mysql2/promise';

/** Numbered schema migrations; applied in order, each once, under a named lock. */
export const MIGRATIONS: readonly { version: number; statements: readonly string[] }[] = [
  {
    version: 1,
    statements: [
      `CREATE TABLE IF NOT EXISTS tickets (
        seq            BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
        ticket_id      VARCHAR(64) NOT NULL,
        user_id        VARCHAR(200) NOT NULL,
        task_id        VARCHAR(200) NOT NULL,
        live_key       CHAR(64) NULL,
        state          VARCHAR(8) NOT NULL,
        taken_at       BIGINT NOT NULL,
        ready_at       BIGINT NULL,
        ready_deadline BIGINT NULL,
        active_at      BIGINT NULL,
        active_until   BIGINT NULL,
        expired_at     BIGINT NULL,
        expired_from   VARCHAR(8) NULL,
        settled_at     BIGINT NULL,
        settle_reason  VARCHAR(32) NULL,
        settled_from   VARCHAR(8) NULL,
        UNIQUE KEY tickets_id (ticket_id),
        UNIQUE KEY tickets_live_task (live_key),
        KEY tickets_state_seq (state, seq),
        KEY tickets_user_taken (user_id, taken_at),
        KEY tickets_user_state (user_id, state)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
      `CREATE TABLE IF NOT EXISTS gateway_users (user_id VARCHAR(200) NOT NULL PRIMARY KEY) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
      `CREATE TABLE IF NOT EXISTS gateway_locks (name VARCHAR(32) NOT NULL PRIMARY KEY) ENGINE=InnoDB`,
      `INSERT IGNORE INTO gateway_locks (name) VALUES ('promoter'), ('queue_tail'), ('model_slots')`,
      `CREATE TABLE IF NOT EXISTS gateway_feed (id TINYINT NOT NULL PRIMARY KEY, seq BIGINT NOT NULL) ENGINE=InnoDB`,
      `INSERT IGNORE INTO gateway_feed (id, seq) VALUES (1, 0)`,
      `CREATE TABLE IF NOT EXISTS gateway_instances (
        instance_id  CHAR(32) NOT NULL PRIMARY KEY,
        heartbeat_at BIGINT NOT NULL
      ) ENGINE=InnoDB`,
      `CREATE TABLE IF NOT EXISTS model_slots (
        slot_id     BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
        instance_id CHAR(32) NOT NULL,
        user_id     VARCHAR(200) NOT NULL,
        ticket_id   VARCHAR(64) NOT NULL,
        KEY model_slots_instance (instance_id),
        KEY model_slots_user (user_id)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    ],
  },
];

const MIGRATION_LOCK = 'offpeak_gateway_migrate';
const MIGRATION_LOCK_WAIT_S = 60;

/** Applies the migrations this database lacks; refuses a schema newer than this gateway knows. */
export async function migrateMysql(pool: mysql.Pool, now: () => number): Promise<void> {
  const connection = await pool.getConnection();
  try {
    const [locked] = await connection.query<mysql.RowDataPacket[]>('SELECT GET_LOCK(?, ?) AS got', [MIGRATION_LOCK, MIGRATION_LOCK_WAIT_S]);
    if (Number(locked[0].got) !== 1) throw new Error(`another gateway held the migration lock for ${MIGRATION_LOCK_WAIT_S} s`);
    try {
      await connection.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INT NOT NULL PRIMARY KEY, applied_at BIGINT NOT NULL) ENGINE=InnoDB',
      );
      const [done] = await connection.query<mysql.RowDataPacket[]>('SELECT version FROM schema_migrations');
      const applied = new Set(done.map((r) => Number(r.version)));
      const newest = Math.max(0, ...applied);
      const known = MIGRATIONS[MIGRATIONS.length - 1].version;
      if (newest > known) throw new Error(`schema version ${newest} is newer than this gateway understands (${known})`);
      for (const migration of MIGRATIONS) {
        if (applied.has(migration.version)) continue;
        // DDL commits implicitly in MySQL, so each statement is written to be re-runnable.
        for (const statement of migration.statements) await connection.query(statement);
        await connection.query('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)', [migration.version, now()]);
      }
    } finally {
      await connection.query('SELECT RELEASE_LOCK(?)', [MIGRATION_LOCK]);
    }
  } finally {
    connection.release();
  }
}

/** Schema versions applied (tests: several instances starting at once migrate once). */
export async function appliedMysqlMigrations(pool: mysql.Pool): Promise<{ version: number; appliedAt: number }[]> {
  const [rows] = await pool.query<mysql.RowDataPacket[]>('SELECT version, applied_at FROM schema_migrations ORDER BY version');
  return rows.map((r) => ({ version: Number(r.version), appliedAt: Number(r.applied_at) }));
}
