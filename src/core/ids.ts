// globalThis.crypto exists in Node >= 19 and in browsers, so this module stays usable by the webview too.

/** A random, stable logical task id; also sent to the gateway as `task_id` for every ticket. */
export function newTaskId(): string {
  return globalThis.crypto.randomUUID();
}

/** A random opaque token (lock owners, lease holders, window ids). */
export function newToken(): string {
  return globalThis.crypto.randomUUID();
}
