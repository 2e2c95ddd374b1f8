// The account's usage-limit state (account-limit.ts) in the SQLite ticket file: one row, written
// at once (better-sqlite3 is synchronous), so a gateway restart finds the hold it recorded.
import type Database from 'better-sqlite3';
import type { AccountLimitState, AccountLimitStore } from './account-limit-store';

/** The one account of a gateway: its model upstream (docs/flows.md#usage-limits). */
const ACCOUNT = 'upstream';

interface Row {
  held_until: number | null;
  held_since: number | null;
  held_window: string | null;
  promote_after: number | null;
}

export class SqliteAccountLimitStore implements AccountLimitStore {
  private readonly get: Database.Statement<[string], Row>;
  private readonly put: Database.Statement;

  constructor(db: Database.Database) {
    // Its own table, created when first needed: a gateway without account limits never makes it.
    db.exec(`CREATE TABLE IF NOT EXISTS account_limits (
      account       TEXT PRIMARY KEY,
      held_until    INTEGER,
      held_since    INTEGER,
      held_window   TEXT,
      promote_after INTEGER
    )`);
    this.get = db.prepare('SELECT held_until, held_since, held_window, promote_after FROM account_limits WHERE account = ?');
    this.put = db.prepare(
      `INSERT INTO account_limits (account, held_until, held_since, held_window, promote_after) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (account) DO UPDATE SET held_until = excluded.held_until, held_since = excluded.held_since,
         held_window = excluded.held_window, promote_after = excluded.promote_after`,
    );
  }

  load(): AccountLimitState | null {
    const row = this.get.get(ACCOUNT);
    return row
      ? { heldUntil: row.held_until, heldSince: row.held_since, heldWindow: row.held_window, promoteAfter: row.promote_after }
      : null;
  }

  save(state: AccountLimitState): void {
    this.put.run(ACCOUNT, state.heldUntil, state.heldSince, state.heldWindow, state.promoteAfter);
  }
}
