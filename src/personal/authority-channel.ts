// Where personal mode's local authority listens (docs/architecture.md#personal-mode): a channel
// whose name changes with each start of the authority (random, published only in authority.json,
// 0600 in the 0700 personal/ folder), and every connection to it starts with the proof of
// personal/channel-proof.ts, so no credential (the local key, the Claude login, the model key)
// goes to a listener another local user could have bound.
//   Unix (Linux, macOS): Unix domain sockets inside globalStorage/personal/ (0700: nobody else can
//   connect to them or make one there). A socket path longer than the kernel takes (104 bytes on
//   macOS) goes to a private folder of $XDG_RUNTIME_DIR, else of the temp directory, named after
//   the local key; that folder is checked to be this user's and private before each listen and
//   each connect.
//   Windows: named pipes, `\\.\pipe\offpeak-<random>-authority` / `-presence`. Every local user
//   can list the pipes and create one whose name is free: the random name keeps a stale name from
//   being known in advance, and the proof keeps whoever serves one from getting anything.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface ChannelPlatform {
  platform: NodeJS.Platform;
  tmpdir: string;
  /** $XDG_RUNTIME_DIR (Linux: a 0700 folder of this user's), when set. */
  runtimeDir?: string;
  /** This user's uid (Unix); undefined where there is none (Windows). */
  uid: number | undefined;
}

export function systemChannelPlatform(): ChannelPlatform {
  return { platform: process.platform, tmpdir: os.tmpdir(), runtimeDir: process.env.XDG_RUNTIME_DIR, uid: process.getuid?.() };
}

export interface AuthorityChannels {
  /** The gateway's HTTP API. */
  api: string;
  /** The runner's presence: followers keep a connection open to learn when it ends. */
  presence: string;
}

/** sun_path holds 104 bytes on macOS and 108 on Linux, the terminating NUL included. */
const SOCKET_PATH_MAX = 100;
const RANDOM_HEX = 32;
const PIPE_PATTERN = /^\\\\\.\\pipe\\offpeak-[0-9a-f]{32}-(authority|presence)$/;
const SOCKET_PATTERN = /^(authority|presence)-[0-9a-f]{32}\.sock$/;

/** The URL the windows use with the channel: its host resolves nowhere (RFC 2606), so a call that lost its channel fails instead of going to a port. */
export const AUTHORITY_URL = 'http://offpeak-local-authority.invalid';

const keyDigest = (localKey: string) => createHash('sha256').update(`offpeak channel\0${localKey}`).digest('hex');

/** The channels of one start of the authority: fresh random names, in this user's socket folder on Unix. */
export function newAuthorityChannels(
  personalDir: string,
  localKey: string,
  host: ChannelPlatform = systemChannelPlatform(),
): AuthorityChannels {
  const id = randomBytes(RANDOM_HEX / 2).toString('hex');
  if (host.platform === 'win32') return { api: `\\\\.\\pipe\\offpeak-${id}-authority`, presence: `\\\\.\\pipe\\offpeak-${id}-presence` };
  const dir = socketFolder(personalDir, localKey, host);
  ensurePrivateSocketFolder(dir, personalDir, host);
  return { api: path.join(dir, `authority-${id}.sock`), presence: path.join(dir, `presence-${id}.sock`) };
}

/** The folder of this user's sockets: personal/ itself, or the private fallback when its paths are too long. */
export function socketFolder(personalDir: string, localKey: string, host: ChannelPlatform = systemChannelPlatform()): string {
  const longest = path.join(personalDir, `presence-${'0'.repeat(RANDOM_HEX)}.sock`);
  if (Buffer.byteLength(longest) <= SOCKET_PATH_MAX) return personalDir;
  const name = `opk-${keyDigest(localKey).slice(0, 16)}`;
  const runtime = host.runtimeDir;
  if (runtime && path.isAbsolute(runtime) && Buffer.byteLength(path.join(runtime, name, path.basename(longest))) <= SOCKET_PATH_MAX) {
    if (isPrivateFolder(runtime, host)) return path.join(runtime, name);
  }
  return path.join(host.tmpdir, name);
}

/** True when `address` is one of this user's channels, e.g. read back from authority.json. */
export function isOwnChannel(
  address: string,
  personalDir: string,
  localKey: string,
  host: ChannelPlatform = systemChannelPlatform(),
): boolean {
  if (host.platform === 'win32') return PIPE_PATTERN.test(address);
  return path.dirname(address) === socketFolder(personalDir, localKey, host) && SOCKET_PATTERN.test(path.basename(address));
}

/**
 * Before each connect and each listen (Unix): the channel's folder is a folder (not a link) of
 * this user's that nobody else can enter, so nobody else can have put a socket there since the
 * last look. Throws saying why; nothing on Windows (a pipe has no folder).
 */
export function checkChannelFolder(address: string, host: ChannelPlatform = systemChannelPlatform()): void {
  if (host.platform === 'win32') return;
  const dir = path.dirname(address);
  if (!isPrivateFolder(dir, host))
    throw new Error(`${dir} is not a private folder of this user: the local authority's channel is not used there`);
}

/**
 * Makes `address` free to listen on: a socket left by a runner that crashed is removed (Unix; only
 * this user can have made it, in a private folder). Anything else there is refused.
 */
export function clearStaleSocket(address: string, host: ChannelPlatform = systemChannelPlatform()): void {
  if (host.platform === 'win32') return; // a pipe goes with the process that served it
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(address);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (!stat.isSocket()) throw new Error(`${address} exists and is not a socket`);
  fs.rmSync(address, { force: true });
}

/** Sockets of earlier starts in the folder of `channels` (runners that crashed left them): removed by the next runner. */
export function removeOldSockets(channels: AuthorityChannels, host: ChannelPlatform = systemChannelPlatform()): void {
  if (host.platform === 'win32') return;
  const dir = path.dirname(channels.api);
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name);
    if (!SOCKET_PATTERN.test(name) || file === channels.api || file === channels.presence) continue;
    try {
      clearStaleSocket(file, host);
    } catch {
      // not a socket: left alone
    }
  }
}

function isPrivateFolder(dir: string, host: ChannelPlatform): boolean {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(dir);
  } catch {
    return false;
  }
  return stat.isDirectory() && (host.uid === undefined || stat.uid === host.uid) && (stat.mode & 0o077) === 0;
}

function ensurePrivateSocketFolder(dir: string, personalDir: string, host: ChannelPlatform): void {
  if (dir !== personalDir) {
    try {
      fs.mkdirSync(dir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  checkChannelFolder(path.join(dir, 'x'), host);
}
