// The scripted fake Responses API upstream (a TEST FIXTURE) streams the events Codex reads and
// records what it was sent; the Codex tests rely on both.
import assert from 'node:assert/strict';
import { parseSse } from '../fixtures/fake-anthropic-upstream';
import { FakeResponsesUpstream } from '../fixtures/fake-responses-upstream';

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('fake Responses API upstream (test fixture)', () => {
  let upstream: FakeResponsesUpstream;
  beforeEach(async () => {
    upstream = await FakeResponsesUpstream.start();
  });
  afterEach(async () => {
    await upstream.close();
  });

  it('streams a scripted function call, then text, each ending in response.completed with its usage, and records both requests', async () => {
    upstream.enqueue(
      { kind: 'function_call', name: 'exec_command', arguments: { cmd: 'ls' }, callId: 'call_1' },
      { kind: 'text', text: 'all done', usage: { input_tokens: 40, cached_tokens: 30, output_tokens: 3 } },
    );
    const first = await post(
      `${upstream.url}/v1/responses`,
      { model: 'gpt-x', stream: true, input: [{ role: 'user', content: 'hi' }] },
      { 'thread-id': 't1' },
    );
    assert.equal(first.headers.get('content-type'), 'text/event-stream');
    const events = parseSse(await first.text());
    assert.deepEqual(
      events.map((e) => e.event),
      ['response.created', 'response.output_item.added', 'response.output_item.done', 'response.completed'],
    );
    const call = (events[2].data as { item: { type: string; name: string; arguments: string; call_id: string } }).item;
    assert.deepEqual(
      [call.type, call.name, JSON.parse(call.arguments), call.call_id],
      ['function_call', 'exec_command', { cmd: 'ls' }, 'call_1'],
    );

    const second = parseSse(await (await post(`${upstream.url}/v1/responses`, { model: 'gpt-x', stream: true, input: [] })).text());
    const text = second
      .filter((e) => e.event === 'response.output_text.delta')
      .map((e) => (e.data as { delta: string }).delta)
      .join('');
    assert.equal(text, 'all done');
    const usage = (second.at(-1)!.data as { response: { usage: Record<string, unknown> } }).response.usage;
    assert.deepEqual(usage, {
      input_tokens: 40,
      input_tokens_details: { cached_tokens: 30 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 43,
    });
    const recorded = upstream.responseRequests();
    assert.equal(recorded.length, 2);
    assert.equal(recorded[0].headers['thread-id'], 't1');
    assert.deepEqual(recorded[0].body?.input, [{ role: 'user', content: 'hi' }]);
  });

  it('answers a scripted 429 as a usage limit with when it resets, in the body and the x-codex-primary-* headers', async () => {
    upstream.enqueue({ kind: 'error', status: 429, resetsInSeconds: 90 });
    const before = Math.floor(Date.now() / 1000);
    const res = await post(`${upstream.url}/v1/responses`, { stream: true });
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('x-codex-primary-used-percent'), '100');
    assert.equal(res.headers.get('x-codex-primary-reset-after-seconds'), '90');
    assert.ok(Number(res.headers.get('x-codex-primary-reset-at')) >= before + 90);
    const body = (await res.json()) as { error: { type: string; resets_in_seconds: number } };
    assert.deepEqual([body.error.type, body.error.resets_in_seconds], ['usage_limit_reached', 90]);
  });
});
