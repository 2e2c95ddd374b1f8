// What the gateway remembers about the account's usage limits, and the memory keeper of it
// (the SQLite one is account-limit-sqlite.ts). Its own file so that the ticket stores, which hold
// it, and the limits' rules in account-limit.ts, which use a ticket store, do not import each other.

/** What the gateway remembers about the account's limits (one row). */
export interface AccountLimitState {
  /** Model requests are held (3105) and nothing is promoted until this epoch ms; null: not held. */
  heldUntil: number | null;
  /** When the current hold began. */
  heldSince: number | null;
  /** Which window the hold is for: `five_hour`, `seven_day`, `unified` or `retry_after`. */
  heldWindow: string | null;
  /** Headroom (stopAtUtilization): nothing is promoted until this epoch ms; requests still go. */
  promoteAfter: number | null;
}

/** Where the state is kept: the ticket store's file (SQLite), or memory. */
export interface AccountLimitStore {
  load(): AccountLimitState | null;
  save(state: AccountLimitState): void;
}

export class MemoryAccountLimitStore implements AccountLimitStore {
  private state: AccountLimitState | null = null;
  load(): AccountLimitState | null {
    return this.state && { ...this.state };
  }
  save(state: AccountLimitState): void {
    this.state = { ...state };
  }
}
