// The files of personal mode's local authority under globalStorage/personal/ (docs/architecture.md#personal-mode):
//   local-key        the machine-local key the windows show the authority (0600; not a model key)
//   authority.lock   who runs the authority now (store/db/file-lock.ts: O_EXCL, owner pid)
//   authority.json   where it listens: {address, presence, pid, startedAt} (0600; no secret in it)
//   authority.sock, presence.sock  its channels (personal/authority-channel.ts)
//   gateway.sqlite   the reference gateway's ticket store (sql.js file, written at each commit)
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as z from '../protocol/zod';
import { ensurePrivateDir } from '../files/private-files';
import { writeFileAtomic } from '../files/file-replace';

export interface AuthorityPaths {
  dir: string;
  key: string;
  lock: string;
  discovery: string;
  store: string;
}

export function authorityPaths(storageDir: string): AuthorityPaths {
  const dir = path.join(storageDir, 'personal');
  return {
    dir,
    key: path.join(dir, 'local-key'),
    lock: path.join(dir, 'authority.lock'),
    discovery: path.join(dir, 'authority.json'),
    store: path.join(dir, 'gateway.sqlite'),
  };
}

const KEY_PATTERN = /^opk-local-[0-9a-f]{64}$/;

/** The machine's local key: read, or made once (O_EXCL, so two windows starting at once agree). */
export function readOrCreateLocalKey(paths: AuthorityPaths): string {
  ensurePrivateDir(paths.dir);
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      const text = fs.readFileSync(paths.key, 'utf8').trim();
      if (KEY_PATTERN.test(text)) return text;
      // Being written by another window right now, or damaged: a damaged one is replaced.
      if (text !== '' || Date.now() - fs.statSync(paths.key).mtimeMs > 2000) fs.rmSync(paths.key, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const key = `opk-local-${randomBytes(32).toString('hex')}`;
    try {
      const fd = fs.openSync(paths.key, 'wx', 0o600);
      try {
        fs.writeSync(fd, key);
        fs.fdatasyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      return key;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  throw new Error(`cannot read or create the local authority key ${paths.key}`);
}

export const DiscoverySchema = z.object({
  // Version 1 named loopback ports: a window of this version never follows those.
  version: z.literal(2),
  /** The gateway's Unix domain socket / Windows named pipe. */
  address: z.string().check(z.minLength(1)),
  presence: z.string().check(z.minLength(1)),
  pid: z.number().check(z.int()),
  startedAt: z.number(),
});
export type Discovery = z.infer<typeof DiscoverySchema>;

export function readDiscovery(paths: AuthorityPaths): Discovery | undefined {
  try {
    const parsed = DiscoverySchema.safeParse(JSON.parse(fs.readFileSync(paths.discovery, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function writeDiscovery(paths: AuthorityPaths, discovery: Discovery, beforeRename: () => boolean): boolean {
  return writeFileAtomic(paths.discovery, Buffer.from(JSON.stringify(discovery)), { durable: false, beforeRename });
}
