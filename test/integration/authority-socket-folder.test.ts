// The folder of personal mode's Unix sockets when personal/ is too deep for a socket path (issue
// 38 item 5; docs/security.md#windows-named-pipes, its last paragraph): a folder outside personal/ is checked to be this
// user's and private before each connect, not once. POSIX file modes (Windows uses named pipes:
// test/unit/authority-channel.test.ts); real sockets and files.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemClock } from '../../src/core/clock';
import { GatewayClient } from '../../src/gateway-client/client';
import { authorityPaths } from '../../src/personal/authority-files';
import { LocalAuthority } from '../../src/personal/local-authority';

describe('the socket folder of the local authority outside personal/', function () {
  this.timeout(60_000);
  let tmp: string;
  const closing: (() => Promise<unknown>)[] = [];
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-socket-folder-'))));
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('item 5: POSIX: a socket folder opened to others after the authority started is refused at the next connect, and used again once private', async () => {
    const storageDir = path.join(tmp, 'x'.repeat(120));
    const authority = await LocalAuthority.start({
      storageDir,
      settings: () => ({ hours: 'always', modelBaseUrl: 'http://127.0.0.1:9' }),
      modelApiKey: async () => undefined,
      durable: false,
    });
    closing.push(() => authority.dispose());
    const dir = path.dirname(authority.socketPath);
    closing.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    assert.notEqual(dir, authorityPaths(storageDir).dir, 'personal/ is too deep for a socket path');
    const client = new GatewayClient({
      baseUrl: authority.url,
      channel: authority.connect,
      apiKey: () => authority.key,
      clock: systemClock,
    });
    assert.deepEqual((await client.availability()).offPeakWindow, { open: true });
    fs.chmodSync(dir, 0o755);
    await assert.rejects(client.availability(), /not a private folder of this user/);
    fs.chmodSync(dir, 0o700);
    assert.deepEqual((await client.availability()).offPeakWindow, { open: true });
  });
});
