// Connections from a channel of their own for node's HTTP client (docs/architecture.md#personal-mode):
// personal mode's gateway calls and ticket proxies reach the local authority over connections
// that proved they lead to it (personal/channel-proof.ts), dialled at its current name each time.
import http from 'node:http';
import type { Socket } from 'node:net';

/** Opens one connection to the channel, ready for HTTP (proven; the authority's address as known now). */
export type ChannelConnect = () => Promise<Socket>;

/** An HTTP agent whose every connection comes from `connect` (the ticket proxy keeps them alive; a closed one is dialled again). */
export class ChannelAgent extends http.Agent {
  constructor(
    private readonly connectChannel: ChannelConnect,
    options?: http.AgentOptions,
  ) {
    super(options);
  }

  // node's Agent takes the connection from the callback when this returns none.
  override createConnection(_options: http.ClientRequestArgs, callback?: (error: Error | null, socket: Socket) => void): undefined {
    this.connectChannel().then(
      (socket) => callback?.(null, socket),
      (error: Error) => callback?.(error, undefined as unknown as Socket),
    );
    return undefined;
  }
}
