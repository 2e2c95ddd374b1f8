// How the local ticket proxy streams an answer to the agent (src/agent/proxy/ticket-proxy.ts,
// `forwardAnswer`): backpressure reaches the model API, the agent hanging up ends the upstream
// request, and the usage of a long answer is read. The upstream here is a raw HTTP server in
// this process (a fixture standing in for the gateway) that writes a 64 MB event stream and
// records whether it is blocked on a full socket and whether its answer was closed early. The
// answer is far larger than what the sockets between the three can buffer (loopback buffers grow
// to several MB each), so a proxy that ignores backpressure lets the upstream write it all.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TicketProxy } from '../../src/agent/proxy/ticket-proxy';
import type { TicketProxyEvent } from '../../src/agent/proxy/ticket-proxy-types';

const TOTAL = 64 * 1024 * 1024;
const DELTA = `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x'.repeat(1000) } })}\n\n`;
const START = `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { model: 'claude-stream', usage: { input_tokens: 11, output_tokens: 1 } } })}\n\n`;
const END = `event: message_delta\ndata: ${JSON.stringify({ type: 'message_delta', usage: { output_tokens: 4321 } })}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`;

interface StreamingUpstream {
  url: string;
  written: () => number;
  blocked: () => boolean;
  closedEarly: Promise<void>;
  close: () => Promise<void>;
}

async function streamingUpstream(): Promise<StreamingUpstream> {
  let written = 0;
  let blocked = false;
  let closedEarly!: () => void;
  const closed = new Promise<void>((resolve) => (closedEarly = resolve));
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.on('close', () => {
      if (!res.writableFinished) closedEarly();
    });
    const pump = (): void => {
      while (written < TOTAL) {
        const chunk = written === 0 ? START : DELTA;
        written += chunk.length;
        if (!res.write(chunk)) {
          blocked = true;
          res.once('drain', () => {
            blocked = false;
            pump();
          });
          return;
        }
      }
      res.end(END);
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    written: () => written,
    blocked: () => blocked,
    closedEarly: closed,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(condition(), `timed out waiting for ${what}`);
}

describe('local ticket proxy: streaming an answer to the agent', () => {
  let upstream: StreamingUpstream;
  let proxy: TicketProxy;
  let events: TicketProxyEvent[];

  beforeEach(async () => {
    upstream = await streamingUpstream();
    events = [];
    proxy = await TicketProxy.start({ upstreamBaseUrl: upstream.url, apiKey: 'k', ticketId: 'T-1', onEvent: (e) => events.push(e) });
  });
  afterEach(async () => {
    await proxy.close();
    await upstream.close();
  });

  const request = (): Promise<http.IncomingMessage> =>
    new Promise((resolve, reject) => {
      const req = http.request(
        `${proxy.baseUrl}/v1/messages`,
        { method: 'POST', headers: { 'content-type': 'application/json' } },
        resolve,
      );
      req.on('error', reject);
      req.end('{"model":"m","max_tokens":1,"stream":true,"messages":[]}');
    });

  it('an agent that stops reading holds the model API back (nothing piles up in the proxy); when it reads again it gets every byte and the usage is read', async () => {
    const res = await request();
    res.pause();
    await until(() => upstream.blocked(), 'the upstream to block on a full socket');
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(upstream.blocked(), 'still blocked while the agent does not read');
    assert.ok(upstream.written() < TOTAL / 2, `the upstream wrote ${upstream.written()} of ${TOTAL} bytes while the agent read nothing`);
    let received = 0;
    res.on('data', (c: Buffer) => (received += c.length));
    res.resume();
    await new Promise((resolve) => res.on('end', resolve));
    assert.equal(received, upstream.written() + END.length);
    await until(() => events.some((e) => e.type === 'usage'), 'the usage event');
    const usage = events.find((e): e is Extract<TicketProxyEvent, { type: 'usage' }> => e.type === 'usage')!;
    assert.deepEqual(
      { model: usage.model, usage: usage.usage },
      { model: 'claude-stream', usage: { inputTokens: 11, outputTokens: 4321, cacheReadTokens: 0, cacheWriteTokens: 0 } },
    );
  });

  it('an agent that hangs up mid-answer ends the upstream request (the proxy keeps serving)', async () => {
    const res = await request();
    await new Promise((resolve) => res.once('data', resolve));
    res.destroy();
    await upstream.closedEarly;
    assert.ok(upstream.written() < TOTAL, 'the answer was cut, not streamed to its end');
  });
});
