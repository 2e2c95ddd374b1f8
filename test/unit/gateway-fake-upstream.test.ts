import assert from 'node:assert/strict';
import { FakeAnthropicUpstream, parseSse } from '../fixtures/fake-anthropic-upstream';

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('fake Anthropic upstream (test fixture)', () => {
  let upstream: FakeAnthropicUpstream;
  beforeEach(async () => {
    upstream = await FakeAnthropicUpstream.start();
  });
  afterEach(async () => {
    await upstream.close();
  });

  it('plays the script in order: tool_use as SSE, then text as JSON, and records bodies', async () => {
    upstream.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: 'ls' }, text: 'Running.' }, { kind: 'text', text: 'all done' });
    const first = await fetch(`${upstream.url}/v1/messages?beta=true`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(first.headers.get('content-type'), 'text/event-stream');
    const events = parseSse(await first.text());
    assert.deepEqual(events.map((e) => e.event).slice(0, 2), ['message_start', 'ping']);
    const toolStart = events.find(
      (e) => e.event === 'content_block_start' && (e.data as { content_block: { type: string } }).content_block.type === 'tool_use',
    );
    assert.ok(toolStart, 'a tool_use block is streamed');
    const json = events
      .filter((e) => e.event === 'content_block_delta' && (e.data as { delta: { type: string } }).delta.type === 'input_json_delta')
      .map((e) => (e.data as { delta: { partial_json: string } }).delta.partial_json)
      .join('');
    assert.deepEqual(JSON.parse(json), { command: 'ls' });
    assert.equal(
      (events.find((e) => e.event === 'message_delta')?.data as { delta: { stop_reason: string } }).delta.stop_reason,
      'tool_use',
    );

    const second = await post(`${upstream.url}/v1/messages`, {
      model: 'm',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'x' },
      ],
    });
    const message = (await second.json()) as { content: { text: string }[]; stop_reason: string };
    assert.equal(message.content[0].text, 'all done');
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(upstream.messageRequests().length, 2);
    assert.equal((upstream.messageRequests()[1].body as { messages: unknown[] }).messages.length, 2);
    assert.equal(upstream.messageRequests()[0].url, '/v1/messages?beta=true');
  });

  it('sends scripted errors with code and Retry-After, then falls back to the default reply', async () => {
    upstream.enqueue({ kind: 'error', status: 429, code: '3105', retryAfterSeconds: 7 });
    const limited = await post(`${upstream.url}/v1/messages`, { messages: [] });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '7');
    assert.equal(((await limited.json()) as { error: { code: string } }).error.code, '3105');
    const fallback = await post(`${upstream.url}/v1/messages`, { messages: [{ role: 'user', content: 'ping' }] });
    assert.match(((await fallback.json()) as { content: { text: string }[] }).content[0].text, /FAKE-REPLY\(messages_in_request=1/);
  });

  it('streams at least the requested bytes and records exactly what it sent', async () => {
    upstream.enqueue({ kind: 'large_stream', bytes: 2 * 1024 * 1024 });
    const res = await post(`${upstream.url}/v1/messages`, { stream: true, messages: [] });
    const received = Buffer.from(await res.arrayBuffer());
    assert.ok(received.length >= 2 * 1024 * 1024);
    assert.equal(Buffer.compare(received, upstream.messageRequests()[0].sentBody), 0);
    assert.equal(parseSse(received.toString()).at(-1)?.event, 'message_stop');
  });

  it('can break a stream with an SSE error event, as the real API does when overloaded', async () => {
    upstream.enqueue({ kind: 'stream_error', partialText: 'Half an ans' });
    const res = await post(`${upstream.url}/v1/messages`, { stream: true, messages: [] });
    assert.equal(res.status, 200);
    const events = parseSse(await res.text());
    assert.deepEqual(
      events.map((e) => e.event),
      ['message_start', 'ping', 'content_block_start', 'content_block_delta', 'error'],
    );
    assert.equal((events.at(-1)?.data as { error: { type: string } }).error.type, 'overloaded_error');
  });

  it('notices a client that hangs up on a hanging stream', async () => {
    upstream.enqueue({ kind: 'hang' });
    const controller = new AbortController();
    const res = await fetch(`${upstream.url}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ stream: true }),
      signal: controller.signal,
    });
    assert.equal(res.status, 200);
    controller.abort();
    await upstream.waitFor((requests) => requests[0]?.clientClosed === true);
    assert.equal(upstream.messageRequests()[0].completed, false);
  });

  it('can be scripted over HTTP from another process', async () => {
    const enqueue = await post(`${upstream.url}/__fake/enqueue`, [{ kind: 'text', text: 'remote' }]);
    assert.equal(enqueue.status, 200);
    const res = await post(`${upstream.url}/v1/messages`, { messages: [] });
    assert.equal(((await res.json()) as { content: { text: string }[] }).content[0].text, 'remote');
    const record = (await (await fetch(`${upstream.url}/__fake/requests`)).json()) as { replyKind: string }[];
    assert.equal(record.length, 1);
    assert.equal(record[0].replyKind, 'text');
  });
});
