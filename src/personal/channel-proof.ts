// The proof each connection to personal mode's local authority starts with
// (docs/security.md#windows-named-pipes): before a client sends anything secret (the local key,
// the agent's Claude login), the server proves it holds the local key, and before the server
// hands the connection to its gateway the client proves the same. On Windows every local user can
// list \\.\pipe\ and create a pipe whose name is free (a hand-over or a crash frees one); on Unix
// the 0700 folder already keeps others out, and the same code runs so there is one path.
//   client -> server  HELLO, client nonce (32 bytes, fresh)
//   server -> client  server nonce (32 bytes, fresh), HMAC-SHA256(key, "server", address, nonces)
//   client -> server  HMAC-SHA256(key, "client", address, nonces)
//   server -> client  0x01; from here on the connection is plain HTTP
// The nonces make every proof single-use (neither side can replay one it saw), and the address
// binds it to the name the client dialled, so a server at an old name cannot relay the proof of
// the real one. A connection that does not prove itself within the deadline is closed; at most
// `maxPending` wait at once (the oldest is closed first), and none of them reach the gateway's
// connection limits.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import net from 'node:net';

const HELLO = Buffer.from('offpeak-proof-1\n');
const NONCE_BYTES = 32;
const MAC_BYTES = 32;
const PROVEN = 0x01;

/** The server at an address did not prove it holds the local key (or broke the exchange). */
export class ChannelProofError extends Error {
  readonly code = 'EPROOF';
}

function proofOf(key: string, side: 'server' | 'client', address: string, clientNonce: Buffer, serverNonce: Buffer): Buffer {
  return createHmac('sha256', key).update(`offpeak channel proof\0${side}\0${address}\0`).update(clientNonce).update(serverNonce).digest();
}

/** Reads the exchange's fixed-size messages; anything beyond what is expected is a protocol error. */
class Exchange {
  private buffered = Buffer.alloc(0);
  private wanted: { bytes: number; resolve: (b: Buffer) => void } | undefined;
  private readonly onData = (chunk: Buffer) => {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    this.deliver();
  };

  constructor(
    private readonly socket: net.Socket,
    private readonly fail: (error: Error) => void,
  ) {
    socket.on('data', this.onData);
  }

  read(bytes: number): Promise<Buffer> {
    return new Promise((resolve) => {
      this.wanted = { bytes, resolve };
      this.deliver();
    });
  }

  /** Stops reading: the socket is handed on with nothing read ahead. */
  detach(): void {
    this.socket.off('data', this.onData);
  }

  private deliver(): void {
    const wanted = this.wanted;
    if (!wanted || this.buffered.length < wanted.bytes) return;
    if (this.buffered.length > wanted.bytes) return this.fail(new ChannelProofError('more was sent than the proof expects'));
    this.wanted = undefined;
    const message = this.buffered;
    this.buffered = Buffer.alloc(0);
    wanted.resolve(message);
  }
}

/**
 * Connects to `address` and resolves once the server there proved it holds `key`; nothing but a
 * fresh nonce was sent to it before. Rejects with ChannelProofError when it does not, or with the
 * connection's own error (ENOENT, ECONNREFUSED, …) when nothing answers.
 */
export function connectProven(address: string, key: string, timeoutMs = 10_000): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ path: address });
    let settled = false;
    const finish = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      exchange.detach();
      socket.off('error', finish);
      socket.off('close', closed);
      if (error) {
        socket.destroy();
        reject(error);
      } else resolve(socket);
    };
    const closed = () => finish(Object.assign(new Error(`${address} closed the connection before proving itself`), { code: 'ECONNRESET' }));
    const exchange = new Exchange(socket, finish);
    const timer = setTimeout(() => finish(new ChannelProofError(`${address} did not prove itself within ${timeoutMs} ms`)), timeoutMs);
    socket.on('error', finish);
    socket.on('close', closed);
    socket.once('connect', () => {
      const clientNonce = randomBytes(NONCE_BYTES);
      socket.write(Buffer.concat([HELLO, clientNonce]));
      void (async () => {
        const answer = await exchange.read(NONCE_BYTES + MAC_BYTES);
        const serverNonce = answer.subarray(0, NONCE_BYTES);
        if (!timingSafeEqual(answer.subarray(NONCE_BYTES), proofOf(key, 'server', address, clientNonce, serverNonce)))
          return finish(new ChannelProofError(`the server at ${address} does not hold the local key`));
        socket.write(proofOf(key, 'client', address, clientNonce, serverNonce));
        const done = await exchange.read(1);
        finish(done[0] === PROVEN ? undefined : new ChannelProofError(`the server at ${address} refused this window's proof`));
      })();
    });
  });
}

export interface ProofGateOptions {
  key: string;
  /** The address the server listens on: what the client dialled. */
  address: string;
  /** A connection not proven by then is closed. Default 3 s. */
  deadlineMs?: number;
  /** Connections waiting to prove themselves at once; a new one beyond closes the oldest. Default 256. */
  maxPending?: number;
}

/** The server's side: call it with each new connection; `onProven` gets it once it proved itself (else it is closed). */
export function proofGate(options: ProofGateOptions): (socket: net.Socket, onProven: (socket: net.Socket) => void) => void {
  const pending = new Set<net.Socket>();
  const deadlineMs = options.deadlineMs ?? 3_000;
  const maxPending = options.maxPending ?? 256;
  return (socket, onProven) => {
    socket.on('error', () => undefined); // a failed proof's socket may still report its reset
    if (pending.size >= maxPending) pending.values().next().value?.destroy();
    pending.add(socket);
    let settled = false;
    const finish = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      pending.delete(socket);
      clearTimeout(timer);
      exchange.detach();
      socket.off('error', finish);
      socket.off('close', closed);
      if (error) socket.destroy();
      else onProven(socket);
    };
    const closed = () => finish(new Error('closed'));
    const exchange = new Exchange(socket, finish);
    // Checked after the loop's next poll, so a loop that was busy reads what arrived meanwhile first.
    const timer = setTimeout(() => setImmediate(() => finish(new ChannelProofError('not proven in time'))), deadlineMs);
    socket.on('error', finish);
    socket.on('close', closed);
    void (async () => {
      const hello = await exchange.read(HELLO.length + NONCE_BYTES);
      if (!hello.subarray(0, HELLO.length).equals(HELLO)) return finish(new ChannelProofError('not a proof'));
      const clientNonce = hello.subarray(HELLO.length);
      const serverNonce = randomBytes(NONCE_BYTES);
      socket.write(Buffer.concat([serverNonce, proofOf(options.key, 'server', options.address, clientNonce, serverNonce)]));
      const proof = await exchange.read(MAC_BYTES);
      if (!timingSafeEqual(proof, proofOf(options.key, 'client', options.address, clientNonce, serverNonce)))
        return finish(new ChannelProofError('the client does not hold the local key'));
      socket.write(Buffer.from([PROVEN]));
      finish(undefined);
    })();
  };
}
