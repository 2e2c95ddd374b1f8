// The proof every connection to personal mode's local authority starts with
// (docs/security.md#windows-named-pipes): a server's answer cannot be replayed to a new client,
// nor relayed from another name, and a client without the key is never handed on. Real sockets
// (named pipes on Windows, Unix sockets elsewhere).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ChannelProofError, connectProven, proofGate } from '../../src/personal/channel-proof';

const KEY = `opk-local-${'ab'.repeat(32)}`;
const HELLO = Buffer.from('offpeak-proof-1\n');

describe('the proof of the local authority channel', function () {
  this.timeout(60_000);
  let tmp: string;
  const servers: net.Server[] = [];
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-proof-unit-'))));
  afterEach(async () => {
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const address = (name: string) =>
    process.platform === 'win32' ? `\\\\.\\pipe\\offpeak-test-${randomBytes(8).toString('hex')}-${name}` : path.join(tmp, `${name}.sock`);

  async function listen(at: string, onConnection: (socket: net.Socket) => void): Promise<net.Server> {
    const server = net.createServer((socket) => {
      socket.on('error', () => undefined);
      onConnection(socket);
    });
    await new Promise<void>((resolve) => server.listen(at, resolve));
    servers.push(server);
    return server;
  }

  /** The real authority's side: proven connections are counted. */
  async function authority(at: string, key = KEY): Promise<{ proven: net.Socket[] }> {
    const proven: net.Socket[] = [];
    const gate = proofGate({ key, address: at, deadlineMs: 500 });
    await listen(at, (socket) => gate(socket, (s) => proven.push(s)));
    return { proven };
  }

  it('a client and the server that both hold the key: the connection is handed on, HTTP-ready', async () => {
    const at = address('real');
    const server = await authority(at);
    const socket = await connectProven(at, KEY);
    for (let i = 0; i < 200 && server.proven.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(server.proven.length, 1);
    const echoed = new Promise<string>((resolve) => server.proven[0].once('data', (b: Buffer) => resolve(b.toString())));
    socket.write('GET / HTTP/1.1\r\n\r\n');
    assert.equal(await echoed, 'GET / HTTP/1.1\r\n\r\n', 'what follows the proof reaches the server untouched');
    socket.destroy();
  });

  it("a server that replays the real authority's earlier answer is refused, and gets nothing after the client's nonce", async () => {
    const at = address('replayed');
    await authority(at);
    // An earlier genuine exchange at this very name, as recorded.
    const raw = net.connect({ path: at });
    raw.write(Buffer.concat([HELLO, randomBytes(32)]));
    const recorded = await new Promise<Buffer>((resolve) => raw.once('data', resolve));
    raw.destroy();
    await new Promise((r) => servers.pop()!.close(r));
    const received: Buffer[] = [];
    await listen(at, (socket) => {
      socket.on('data', (b: Buffer) => received.push(b));
      socket.once('data', () => socket.write(recorded));
    });
    await assert.rejects(
      connectProven(at, KEY),
      (e: Error) => e instanceof ChannelProofError && /does not hold the local key/.test(e.message),
    );
    assert.equal(Buffer.concat(received).length, HELLO.length + 32, 'only the hello and a nonce');
  });

  it("a server that relays another name's authority is refused: the proof names the address the client dialled", async () => {
    const realAt = address('real');
    await authority(realAt);
    const relayAt = address('relay');
    await listen(relayAt, (socket) => {
      const upstream = net.connect({ path: realAt });
      upstream.on('error', () => socket.destroy());
      socket.pipe(upstream).pipe(socket);
    });
    await assert.rejects(connectProven(relayAt, KEY), ChannelProofError);
  });

  it('a client without the key is never handed on, and is closed', async () => {
    const at = address('guarded');
    const server = await authority(at);
    await assert.rejects(connectProven(at, `opk-local-${'cd'.repeat(32)}`), ChannelProofError);
    // One that passes the server's check blindly and answers with a made-up proof.
    const raw = net.connect({ path: at });
    raw.on('error', () => undefined);
    raw.write(Buffer.concat([HELLO, randomBytes(32)]));
    await new Promise((resolve) => raw.once('data', resolve));
    raw.write(randomBytes(32));
    await new Promise((resolve) => raw.once('close', resolve));
    assert.equal(server.proven.length, 0);
  });
});
