// Where personal mode's local authority listens (docs/architecture.md#personal-mode): a channel
// only this user can open, so no credential (the local key, the Claude login, the model key) ever
// goes to a listener another local user could have bound, as a loopback port could be once the
// window that held it closed or crashed.
//   Unix (Linux, macOS): Unix domain sockets inside globalStorage/personal/ (0700: nobody else can
//   connect to them or make one there). A socket path longer than the kernel takes (104 bytes on
//   macOS) goes to a folder of the temp directory named after the local key (nobody else can
//   guess it) and checked to be this user's and private.
//   Windows: named pipes named after the local key (read from a 0600 file), which nobody else can
//   guess, so nobody else can serve one before us.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface ChannelPlatform {
  platform: NodeJS.Platform;
  tmpdir: string;
  /** This user's uid (Unix); undefined where there is none (Windows). */
  uid: number | undefined;
}

export function systemChannelPlatform(): ChannelPlatform {
  return { platform: process.platform, tmpdir: os.tmpdir(), uid: process.getuid?.() };
}

export interface AuthorityChannels {
  /** The gateway's HTTP API. */
  api: string;
  /** The runner's presence: followers keep a connection open to learn when it ends. */
  presence: string;
}

/** sun_path holds 104 bytes on macOS and 108 on Linux, the terminating NUL included. */
const SOCKET_PATH_MAX = 100;

/** The URL the windows use with the channel: its host resolves nowhere (RFC 2606), so a call that lost its socket path fails instead of going to a port. */
export const AUTHORITY_URL = 'http://offpeak-local-authority.invalid';

const keyDigest = (localKey: string) => createHash('sha256').update(`offpeak channel\0${localKey}`).digest('hex');

export function authorityChannels(
  personalDir: string,
  localKey: string,
  host: ChannelPlatform = systemChannelPlatform(),
): AuthorityChannels {
  if (host.platform === 'win32') {
    const base = `\\\\.\\pipe\\offpeak-${keyDigest(localKey).slice(0, 40)}`;
    return { api: `${base}-authority`, presence: `${base}-presence` };
  }
  const fits = Buffer.byteLength(path.join(personalDir, 'presence.sock')) <= SOCKET_PATH_MAX;
  const dir = fits ? personalDir : privateShortDir(host, localKey);
  return { api: path.join(dir, 'authority.sock'), presence: path.join(dir, 'presence.sock') };
}

/** Another address of the same kind beside `address`, when `address` cannot be listened on. */
export function movedChannel(address: string, host: ChannelPlatform = systemChannelPlatform()): string {
  const suffix = randomBytes(6).toString('hex');
  if (host.platform === 'win32') return `${address}-${suffix}`;
  return path.join(path.dirname(address), `${path.basename(address, '.sock')}-${suffix}.sock`);
}

/** True when `address` is one of this user's channels (beside `channels`), e.g. read back from authority.json. */
export function isOwnChannel(address: string, channels: AuthorityChannels, host: ChannelPlatform = systemChannelPlatform()): boolean {
  if (host.platform === 'win32') return address.startsWith(channels.api.slice(0, -'authority'.length));
  return path.dirname(address) === path.dirname(channels.api) && address.endsWith('.sock');
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

function privateShortDir(host: ChannelPlatform, localKey: string): string {
  const dir = path.join(host.tmpdir, `opk-${keyDigest(localKey).slice(0, 16)}`);
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const stat = fs.lstatSync(dir);
  if (!stat.isDirectory() || (host.uid !== undefined && stat.uid !== host.uid) || (stat.mode & 0o077) !== 0) {
    throw new Error(`${dir} is not a private folder of this user: the local authority's channel is not made there`);
  }
  return dir;
}
