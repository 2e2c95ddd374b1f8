/** Typed errors and notices of the store: callers can show them to the user as they are. */

export type StoreErrorCode =
  | 'LOCK_TIMEOUT' // another process held the file lock for too long
  | 'LOCK_LOST' // our lock was taken over (we looked stale) before we could persist; nothing was written
  | 'UNREADABLE' // the DB file exists but could not be read or moved aside
  | 'IO' // a system call kept failing (EBUSY, EIO, EMFILE, ENOSPC...) after retries; nothing was written
  | 'NEWER_SCHEMA' // written by a newer build
  | 'INVALID_INPUT' // a repository call got bad input; the transaction was rolled back
  | 'ASYNC_MUTATION' // a mutation function returned a promise; mutations must be synchronous
  | 'CLOSED'; // the store was closed

export class StoreError extends Error {
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StoreError';
  }
}

export function invalidInput(message: string): StoreError {
  return new StoreError('INVALID_INPUT', message);
}

/**
 * Something the user should hear about that did not stop the store, e.g. a corrupt file that was
 * moved aside. The extension turns these into notifications.
 */
export type StoreNotice =
  | {
      kind: 'corrupt-moved-aside';
      /** The DB path that was unreadable as SQLite. */
      file: string;
      /** Where its bytes are now kept (never deleted). */
      movedTo: string;
      reason: string;
      at: number;
      message: string;
    }
  | { kind: 'lock-compromised'; file: string; at: number; message: string }
  | { kind: 'stale-lock-broken'; file: string; previousOwner: string; at: number; message: string }
  | { kind: 'watch-failed'; file: string; at: number; message: string }
  /** A change could not be saved because the disk kept failing; the file was left as it was. */
  | { kind: 'io-error'; file: string; code: string; at: number; message: string };
