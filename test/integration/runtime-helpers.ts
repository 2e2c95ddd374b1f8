// Shared helpers for the runtime/agent integration tests (not a test file itself).
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(__filename);

/** `--import <tsx>` as an absolute URL, so child processes run TS whatever their cwd is. */
export const TSX_IMPORT = pathToFileURL(require.resolve('tsx')).href;

/** argv prefix that runs a TypeScript entry with tsx from any cwd. */
export function tsNodeArgv(entry: string): string[] {
  return ['--import', TSX_IMPORT, path.resolve(entry)];
}

export async function waitUntil(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
