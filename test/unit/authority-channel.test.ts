// Where personal mode's local authority listens on each platform (docs/architecture.md#personal-mode):
// fresh random names at each start, Unix domain sockets in the private personal/ folder, a private
// folder of $XDG_RUNTIME_DIR or the temp directory named after the key when that path is too long
// for the kernel (macOS: 104 bytes), named pipes on Windows. Real files; the platform is injected.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  checkChannelFolder,
  clearStaleSocket,
  isOwnChannel,
  newAuthorityChannels,
  type ChannelPlatform,
} from '../../src/personal/authority-channel';

const KEY = `opk-local-${'ab'.repeat(32)}`;

describe('the local authority channel on each platform', () => {
  let tmp: string;
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-channel-'))));
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const unix = (platform: NodeJS.Platform, runtimeDir?: string): ChannelPlatform => ({
    platform,
    tmpdir: tmp,
    runtimeDir,
    uid: process.getuid?.(),
  });
  const windows: ChannelPlatform = { platform: 'win32', tmpdir: '', uid: undefined };

  it('Linux and macOS: sockets inside personal/ with new random names at each start, recognised as ours; a path elsewhere is not', () => {
    const dir = path.join(tmp, 'personal');
    fs.mkdirSync(dir, { mode: 0o700 });
    for (const platform of ['linux', 'darwin'] as const) {
      const channels = newAuthorityChannels(dir, KEY, unix(platform));
      assert.equal(path.dirname(channels.api), dir);
      assert.equal(path.dirname(channels.presence), dir);
      assert.match(path.basename(channels.api), /^authority-[0-9a-f]{32}\.sock$/);
      const next = newAuthorityChannels(dir, KEY, unix(platform));
      assert.notEqual(next.api, channels.api, 'another start, another name');
      assert.equal(isOwnChannel(next.presence, dir, KEY, unix(platform)), true);
      assert.equal(isOwnChannel(path.join(tmp, path.basename(next.api)), dir, KEY, unix(platform)), false);
      assert.equal(isOwnChannel(path.join(dir, 'authority.sock'), dir, KEY, unix(platform)), false);
    }
  });

  it('Windows: named pipes with new random names at each start (nothing derived from the key), nothing on disk', () => {
    const personal = path.join(tmp, 'personal');
    const channels = newAuthorityChannels(personal, KEY, windows);
    assert.match(channels.api, /^\\\\\.\\pipe\\offpeak-[0-9a-f]{32}-authority$/);
    assert.match(channels.presence, /^\\\\\.\\pipe\\offpeak-[0-9a-f]{32}-presence$/);
    const next = newAuthorityChannels(personal, KEY, windows);
    assert.notEqual(next.api, channels.api, 'the next start of the same key has other names');
    assert.equal(isOwnChannel(next.api, personal, KEY, windows), true);
    assert.equal(isOwnChannel('\\\\.\\pipe\\something-else', personal, KEY, windows), false);
    assert.deepEqual(fs.readdirSync(tmp), []);
    checkChannelFolder(channels.api, windows); // a pipe has no folder to check
  });

  it('a personal/ path too long for a socket uses a private folder of the temp directory named after the key; one another user made is refused', () => {
    const long = path.join(tmp, 'x'.repeat(120), 'personal');
    const channels = newAuthorityChannels(long, KEY, unix('darwin'));
    const dir = path.dirname(channels.api);
    assert.equal(path.dirname(dir), tmp);
    assert.ok(Buffer.byteLength(channels.presence) <= 100);
    assert.equal(fs.statSync(dir).mode & 0o077, 0, 'private');
    assert.equal(path.dirname(newAuthorityChannels(long, KEY, unix('darwin')).api), dir, 'the same folder next time');
    fs.chmodSync(dir, 0o755);
    assert.throws(() => newAuthorityChannels(long, KEY, unix('darwin')), /is not a private folder of this user/);
    fs.chmodSync(dir, 0o700);
    assert.throws(
      () => newAuthorityChannels(long, KEY, { ...unix('darwin'), uid: (process.getuid?.() ?? 0) + 1 }),
      /is not a private folder of this user/,
    );
  });

  it('POSIX: the fallback folder goes in $XDG_RUNTIME_DIR when that is a private folder of this user, else in the temp directory; it is checked again before each use', () => {
    const long = path.join(tmp, 'x'.repeat(120), 'personal');
    const runtime = path.join(tmp, 'run');
    fs.mkdirSync(runtime, { mode: 0o700 });
    const channels = newAuthorityChannels(long, KEY, unix('linux', runtime));
    const dir = path.dirname(channels.api);
    assert.equal(path.dirname(dir), runtime);
    checkChannelFolder(channels.api, unix('linux', runtime));
    // Replaced meanwhile by a link to a folder of the same user's: refused at the next connect or listen.
    fs.renameSync(dir, `${dir}.moved`);
    fs.symlinkSync(`${dir}.moved`, dir);
    assert.throws(() => checkChannelFolder(channels.api, unix('linux', runtime)), /is not a private folder of this user/);
    fs.chmodSync(runtime, 0o755);
    assert.equal(
      path.dirname(path.dirname(newAuthorityChannels(long, KEY, unix('linux', runtime)).api)),
      tmp,
      'a runtime folder others can enter is not used',
    );
  });

  it('a stale socket is removed before listening; anything else at the path is refused', () => {
    const file = path.join(tmp, 'authority.sock');
    clearStaleSocket(file, unix('linux'));
    fs.writeFileSync(file, 'x');
    assert.throws(() => clearStaleSocket(file, unix('linux')), /exists and is not a socket/);
    assert.equal(fs.existsSync(file), true, 'left alone');
  });
});
