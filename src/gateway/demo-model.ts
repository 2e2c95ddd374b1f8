// DEMO MODEL — a scripted stand-in for a model API, used only by `--demo` when no real upstream
// URL and key are configured. Every reply says plainly that it comes from a demo model, so nobody
// mistakes it for real model output. It speaks the Anthropic Messages format (JSON and SSE).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const DEMO_MODEL_NOTICE = '[Off-Peak demo model] This reply is scripted by the gateway\'s demo mode; no real model was called.';

function lastUserText(body: { messages?: { role?: string; content?: unknown }[] }): string {
  const last = body.messages?.[body.messages.length - 1];
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  if (Array.isArray(last.content)) {
    return last.content
      .map((b: { type?: string; text?: string; content?: unknown }) => (b.type === 'text' ? b.text : b.type === 'tool_result' ? '(tool result)' : ''))
      .join(' ');
  }
  return '';
}

function demoReply(body: { messages?: { role?: string; content?: unknown }[] }): string {
  const said = lastUserText(body).replace(/\s+/g, ' ').trim().slice(0, 200);
  return `${DEMO_MODEL_NOTICE} You said: "${said}". Configure --upstream-url and OFFPEAK_UPSTREAM_API_KEY to reach a real model.`;
}

let sequence = 0;
const id = (prefix: string) => `${prefix}_demo${Date.now().toString(36)}${(sequence++).toString(36)}`;

function sse(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string): void {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'HEAD' || req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(req.method === 'GET' ? 'Off-Peak demo model\n' : undefined);
    return;
  }
  let body: { model?: string; stream?: boolean; messages?: { role?: string; content?: unknown }[] } = {};
  try {
    body = raw ? JSON.parse(raw) : {};
  } catch {
    const json = JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'demo model: body is not JSON' } });
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(json);
    return;
  }
  if (req.method === 'POST' && path.endsWith('/v1/messages/count_tokens')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ input_tokens: Math.max(1, Math.ceil(raw.length / 4)) }));
    return;
  }
  if (!(req.method === 'POST' && path.endsWith('/v1/messages'))) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `demo model: no route ${req.method} ${path}` } }));
    return;
  }
  const text = demoReply(body);
  const model = body.model ?? 'offpeak-demo-model';
  const usage = { input_tokens: Math.ceil(raw.length / 4), output_tokens: Math.ceil(text.length / 4) };
  const message = { id: id('msg'), type: 'message', role: 'assistant', model, content: [] as unknown[], stop_reason: null as string | null, stop_sequence: null, usage };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json', 'x-offpeak-demo-model': '1' });
    res.end(JSON.stringify({ ...message, content: [{ type: 'text', text }], stop_reason: 'end_turn' }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-offpeak-demo-model': '1' });
  res.write(sse('message_start', { message: { ...message, usage: { ...usage, output_tokens: 1 } } }));
  res.write(sse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
  for (const piece of text.match(/.{1,60}/gs) ?? []) res.write(sse('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } }));
  res.write(sse('content_block_stop', { index: 0 }));
  res.write(sse('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }));
  res.end(sse('message_stop', {}));
}

/** Starts the demo model on a loopback port; the gateway forwards to it like to any upstream. */
export async function startDemoModel(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
