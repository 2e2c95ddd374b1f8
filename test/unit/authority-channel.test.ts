// Where personal mode's local authority listens on each platform (docs/architecture.md#personal-mode):
// a Unix domain socket in the private personal/ folder, a private temp folder named after the key
// when that path is too long for the kernel (macOS: 104 bytes), a named pipe named after the key
// on Windows. Real files; the platform is injected.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  authorityChannels,
  clearStaleSocket,
  isOwnChannel,
  movedChannel,
  type ChannelPlatform,
} from '../../src/personal/authority-channel';

const KEY = `opk-local-${'ab'.repeat(32)}`;

describe('the local authority channel on each platform', () => {
  let tmp: string;
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-channel-'))));
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const unix = (platform: NodeJS.Platform): ChannelPlatform => ({ platform, tmpdir: tmp, uid: process.getuid?.() });

  it('item 1: Linux and macOS: sockets inside personal/; a new channel stays beside them and is recognised as ours, a path elsewhere is not', () => {
    const dir = path.join(tmp, 'personal');
    for (const platform of ['linux', 'darwin'] as const) {
      const channels = authorityChannels(dir, KEY, unix(platform));
      assert.deepEqual(channels, { api: path.join(dir, 'authority.sock'), presence: path.join(dir, 'presence.sock') });
      const moved = movedChannel(channels.api, unix(platform));
      assert.equal(path.dirname(moved), dir);
      assert.notEqual(moved, channels.api);
      assert.equal(isOwnChannel(moved, channels, unix(platform)), true);
      assert.equal(isOwnChannel(path.join(tmp, 'elsewhere.sock'), channels, unix(platform)), false);
    }
  });

  it('item 1: a personal/ path too long for a socket uses a private folder of the temp directory named after the key; one another user made is refused', () => {
    const long = path.join(tmp, 'x'.repeat(120), 'personal');
    const channels = authorityChannels(long, KEY, unix('darwin'));
    const dir = path.dirname(channels.api);
    assert.equal(path.dirname(dir), tmp);
    assert.ok(Buffer.byteLength(channels.presence) <= 100);
    assert.equal(fs.statSync(dir).mode & 0o077, 0, 'private');
    assert.equal(authorityChannels(long, KEY, unix('darwin')).api, channels.api, 'the same folder next time');
    fs.chmodSync(dir, 0o755);
    assert.throws(() => authorityChannels(long, KEY, unix('darwin')), /is not a private folder of this user/);
    fs.chmodSync(dir, 0o700);
    assert.throws(
      () => authorityChannels(long, KEY, { ...unix('darwin'), uid: (process.getuid?.() ?? 0) + 1 }),
      /is not a private folder of this user/,
    );
  });

  it('item 1: Windows: named pipes named after the local key (nobody else can guess them), nothing on disk', () => {
    const channels = authorityChannels(path.join(tmp, 'personal'), KEY, { platform: 'win32', tmpdir: tmp, uid: undefined });
    assert.match(channels.api, /^\\\\\.\\pipe\\offpeak-[0-9a-f]{40}-authority$/);
    assert.match(channels.presence, /^\\\\\.\\pipe\\offpeak-[0-9a-f]{40}-presence$/);
    assert.ok(!channels.api.includes(KEY.slice(10, 30)), 'the key itself is not in the name');
    const other = authorityChannels(path.join(tmp, 'personal'), `opk-local-${'cd'.repeat(32)}`, {
      platform: 'win32',
      tmpdir: tmp,
      uid: undefined,
    });
    assert.notEqual(other.api, channels.api);
    const moved = movedChannel(channels.api, { platform: 'win32', tmpdir: tmp, uid: undefined });
    assert.equal(isOwnChannel(moved, channels, { platform: 'win32', tmpdir: tmp, uid: undefined }), true);
    assert.equal(isOwnChannel(other.api, channels, { platform: 'win32', tmpdir: tmp, uid: undefined }), false);
    assert.deepEqual(fs.readdirSync(tmp), []);
  });

  it('item 1: a stale socket is removed before listening; anything else at the path is refused', () => {
    const file = path.join(tmp, 'authority.sock');
    clearStaleSocket(file, unix('linux'));
    fs.writeFileSync(file, 'x');
    assert.throws(() => clearStaleSocket(file, unix('linux')), /exists and is not a socket/);
    assert.equal(fs.existsSync(file), true, 'left alone');
  });
});
