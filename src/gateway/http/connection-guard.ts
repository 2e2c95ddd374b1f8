// Connections that have not shown a valid key yet are counted per client address: one address may
// hold at most `maxPerAddress` of them, so sockets that connect and never finish their headers
// (or never authenticate) cannot fill the server-wide connection cap. A connection stops counting
// once a request on it carried a valid API key or the operations token. Sockets that never finish
// their headers are closed by node's headersTimeout (set on the server next to this guard).
import type { Socket } from 'node:net';

export class ConnectionGuard {
  private readonly pendingByAddress = new Map<string, number>();
  /** Each counted socket and the address it was counted under. */
  private readonly pending = new Map<Socket, string>();

  constructor(private readonly maxPerAddress: number) {}

  /** On a new connection: false (and the socket is destroyed) when its address has no room left. */
  admit(socket: Socket): boolean {
    const address = socket.remoteAddress ?? '';
    const held = this.pendingByAddress.get(address) ?? 0;
    if (held >= this.maxPerAddress) {
      socket.destroy();
      return false;
    }
    this.pendingByAddress.set(address, held + 1);
    this.pending.set(socket, address);
    socket.once('close', () => this.release(socket));
    return true;
  }

  /** A request on this socket showed a valid key: the connection no longer counts against its address. */
  authenticated(socket: Socket): void {
    this.release(socket);
  }

  /** Connections of `address` not authenticated yet (tests, metrics). */
  pendingFor(address: string): number {
    return this.pendingByAddress.get(address) ?? 0;
  }

  private release(socket: Socket): void {
    const address = this.pending.get(socket);
    if (address === undefined) return;
    this.pending.delete(socket);
    const held = (this.pendingByAddress.get(address) ?? 1) - 1;
    if (held <= 0) this.pendingByAddress.delete(address);
    else this.pendingByAddress.set(address, held);
  }
}
