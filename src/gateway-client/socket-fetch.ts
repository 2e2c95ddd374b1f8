/**
 * `fetch` over a channel of its own: personal mode's windows reach the local authority through a
 * Unix domain socket or a Windows named pipe whose every connection first proved it leads to the
 * authority (personal/channel-proof.ts), never a loopback port another local user could have
 * bound (docs/architecture.md#personal-mode). Only what `Transport` uses: method, headers, body,
 * abort signal; the URL gives the path (its host is a name that resolves nowhere).
 */
import http from 'node:http';
import { Readable } from 'node:stream';
import { ChannelAgent, type ChannelConnect } from '../core/channel-agent';

export type { ChannelConnect } from '../core/channel-agent';

const NULL_BODY = new Set([101, 204, 205, 304]);

export function socketFetch(connect: ChannelConnect): (input: Request | URL | string, init?: RequestInit) => Promise<Response> {
  // A connection per call (no keep-alive): one that outlived a take-over would only fail.
  const agent = new ChannelAgent(connect);
  return async (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const url = new URL(request.url);
    const headers: Record<string, string> = { ...Object.fromEntries(request.headers), host: 'localhost' };
    if (body) headers['content-length'] = String(body.length);
    return new Promise<Response>((resolve, reject) => {
      const req = http.request(
        {
          agent,
          method: request.method,
          path: url.pathname + url.search,
          headers,
          signal: init?.signal ?? request.signal,
        },
        (res) => {
          const answerHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) answerHeaders.append(name, v);
          }
          const status = res.statusCode ?? 502;
          const stream = NULL_BODY.has(status) || request.method === 'HEAD' ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
          if (stream === null) res.resume();
          resolve(new Response(stream, { status, statusText: res.statusMessage, headers: answerHeaders }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
}
