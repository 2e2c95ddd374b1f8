import assert from 'node:assert/strict';
import { UsageMeter } from '../../src/agent/proxy/usage-meter';
import { UsageRecorder } from '../../src/agent/proxy/usage-recorder';
import { ManualClock } from '../../src/core/clock';
import { ManualTimers } from '../../src/core/timers';
import type { SegmentUsage } from '../../src/core/types';
import { addAnswerUsage, totalUsage } from '../../src/core/usage';
import { sseEvent } from '../fixtures/fake-anthropic-upstream';

/** An Anthropic-style stream with known counts (the shape the real API sends). */
function stream(): string {
  return [
    sseEvent('message_start', {
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-test-1',
        content: [],
        usage: { input_tokens: 1500, output_tokens: 1, cache_read_input_tokens: 4000, cache_creation_input_tokens: 250 },
      },
    }),
    sseEvent('ping', {}),
    sseEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    sseEvent('content_block_delta', {
      index: 0,
      delta: { type: 'text_delta', text: 'a "usage": {"output_tokens": 999} lookalike in text ü€' },
    }),
    sseEvent('content_block_stop', { index: 0 }),
    sseEvent('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 321 } }),
    sseEvent('message_stop', {}),
  ].join('');
}

const EXPECTED = { model: 'claude-test-1', usage: { inputTokens: 1500, outputTokens: 321, cacheReadTokens: 4000, cacheWriteTokens: 250 } };

describe('usage meter (tokens read from a copy of a model answer)', () => {
  it('reads a streamed answer fed in one piece', () => {
    const meter = UsageMeter.forContentType('text/event-stream; charset=utf-8')!;
    meter.feed(Buffer.from(stream()));
    assert.deepEqual(meter.finish(), EXPECTED);
  });

  it('reads a streamed answer cut at every possible byte (multi-byte characters split too)', () => {
    const bytes = Buffer.from(stream());
    for (const size of [1, 2, 3, 7, 64]) {
      const meter = UsageMeter.forContentType('text/event-stream')!;
      for (let i = 0; i < bytes.length; i += size) meter.feed(bytes.subarray(i, i + size));
      assert.deepEqual(meter.finish(), EXPECTED, `chunks of ${size} bytes`);
    }
  });

  it('reads a streamed answer split in two at every byte (inside "message_delta", its usage JSON, the blank lines)', () => {
    const bytes = Buffer.from(stream());
    const delta = bytes.indexOf('event: message_delta');
    assert.ok(delta > 0);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const meter = UsageMeter.forContentType('text/event-stream')!;
      meter.feed(bytes.subarray(0, cut));
      meter.feed(bytes.subarray(cut));
      assert.deepEqual(meter.finish(), EXPECTED, `cut at byte ${cut} (message_delta starts at ${delta})`);
    }
  });

  it('reads usage between large text deltas fed in uneven chunks, and not from text that looks like an event', () => {
    const text = 'x'.repeat(3000) + '\nevent: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":999}}\n\n';
    const big = [
      sseEvent('message_start', { message: { model: 'claude-test-1', usage: { input_tokens: 7, output_tokens: 1 } } }),
      ...Array.from({ length: 40 }, () => sseEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })),
      sseEvent('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 40 } }),
      sseEvent('message_stop', {}),
    ].join('');
    // Longer than the tail the meter keeps: its last bytes begin inside an event.
    for (const lineEnd of ['\n', '\r\n', '\r']) {
      const bytes = Buffer.from(big.replace(/\n/g, lineEnd));
      for (const size of [5, 79, 80, 81, 1000, 4096, 65536]) {
        const meter = UsageMeter.forContentType('text/event-stream')!;
        for (let i = 0; i < bytes.length; i += size) meter.feed(bytes.subarray(i, i + size));
        assert.deepEqual(
          meter.finish(),
          { model: 'claude-test-1', usage: { inputTokens: 7, outputTokens: 40, cacheReadTokens: 0, cacheWriteTokens: 0 } },
          `chunks of ${size} bytes, line ends ${JSON.stringify(lineEnd)}`,
        );
      }
    }
  });

  it('reads the usage when tiny, mid-size and large chunks alternate (copied, kept and emptying the tail in turn)', () => {
    const text = 'y'.repeat(700);
    const big = [
      sseEvent('message_start', { message: { model: 'claude-test-1', usage: { input_tokens: 3, output_tokens: 1 } } }),
      ...Array.from({ length: 60 }, () => sseEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })),
      sseEvent('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 60 } }),
      sseEvent('message_stop', {}),
    ].join('');
    const bytes = Buffer.from(big);
    const usage = { model: 'claude-test-1', usage: { inputTokens: 3, outputTokens: 60, cacheReadTokens: 0, cacheWriteTokens: 0 } };
    for (const sizes of [
      [1, 300, 5000, 3, 63, 64, 65, 2047, 2048, 2049],
      [2049, 1, 1, 1, 200],
      [9000, 7, 120],
      [64, 63],
    ]) {
      const meter = UsageMeter.forContentType('text/event-stream')!;
      for (let i = 0, k = 0; i < bytes.length; i += sizes[k++ % sizes.length]) meter.feed(bytes.subarray(i, i + sizes[k % sizes.length]));
      assert.deepEqual(meter.finish(), usage, `chunk sizes ${sizes.join(',')}`);
    }
    // The usage events themselves in tiny and mid-size pieces by turns: their bytes stay in order.
    const delta = bytes.indexOf('event: message_delta');
    for (const [tiny, mid] of [
      [1, 100],
      [5, 64],
      [63, 70],
    ]) {
      const meter = UsageMeter.forContentType('text/event-stream')!;
      meter.feed(bytes.subarray(0, delta - 250));
      for (let i = delta - 250, k = 0; i < bytes.length; k++) {
        const size = k % 2 === 0 ? tiny : mid;
        meter.feed(bytes.subarray(i, i + size));
        i += size;
      }
      assert.deepEqual(meter.finish(), usage, `the last events in pieces of ${tiny} and ${mid} bytes`);
    }
  });

  it('reads CR-only line ends, a data line before its event line, and a usage event larger than a chunk', () => {
    const padding = 'p'.repeat(200_000);
    const body = [
      `event: message_start\rdata: ${JSON.stringify({ type: 'message_start', message: { model: 'claude-test-3', note: padding, usage: { input_tokens: 5 } } })}\r\r`,
      `data: ${JSON.stringify({ type: 'message_delta', usage: { output_tokens: 9 } })}\nevent: message_delta\n\n`,
    ].join('');
    const bytes = Buffer.from(body);
    for (const size of [1000, 16384]) {
      const meter = UsageMeter.forContentType('text/event-stream')!;
      for (let i = 0; i < bytes.length; i += size) meter.feed(bytes.subarray(i, i + size));
      assert.deepEqual(
        meter.finish(),
        { model: 'claude-test-3', usage: { inputTokens: 5, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 0 } },
        `chunks of ${size} bytes`,
      );
    }
  });

  it('an event named otherwise is not read for usage, even when its data says message_delta (LF and CRLF, split anywhere)', () => {
    const other = 'event: content_block_delta\ndata: {"type":"message_delta","usage":{"output_tokens":5000}}\n\n';
    for (const text of [stream() + other, (stream() + other).replace(/\n/g, '\r\n')]) {
      const bytes = Buffer.from(text);
      for (let cut = 0; cut <= bytes.length; cut++) {
        const meter = UsageMeter.forContentType('text/event-stream')!;
        meter.feed(bytes.subarray(0, cut));
        meter.feed(bytes.subarray(cut));
        assert.deepEqual(meter.finish(), EXPECTED, `cut at byte ${cut}${text.includes('\r') ? ' (CRLF)' : ''}`);
      }
    }
  });

  it('later message_delta counts replace earlier ones (they are cumulative), input included when reported', () => {
    const meter = UsageMeter.forContentType('text/event-stream')!;
    meter.feed(Buffer.from(stream().replace(sseEvent('message_stop', {}), '')));
    meter.feed(
      Buffer.from(
        sseEvent('message_delta', { delta: {}, usage: { output_tokens: 400, input_tokens: 1600 } }) + sseEvent('message_stop', {}),
      ),
    );
    assert.deepEqual(meter.finish(), {
      model: 'claude-test-1',
      usage: { inputTokens: 1600, outputTokens: 400, cacheReadTokens: 4000, cacheWriteTokens: 250 },
    });
  });

  it('reads events without `event:` lines and CRLF line ends', () => {
    const noNames = stream()
      .split('\n')
      .filter((line) => !line.startsWith('event:'))
      .join('\r\n');
    const meter = UsageMeter.forContentType('text/event-stream')!;
    meter.feed(Buffer.from(noNames));
    assert.deepEqual(meter.finish(), EXPECTED);
  });

  it('a stream cut after message_start still counts its input side', () => {
    const meter = UsageMeter.forContentType('text/event-stream')!;
    meter.feed(Buffer.from(stream().slice(0, stream().indexOf('event: ping'))));
    assert.deepEqual(meter.finish(), {
      model: 'claude-test-1',
      usage: { inputTokens: 1500, outputTokens: 1, cacheReadTokens: 4000, cacheWriteTokens: 250 },
    });
  });

  it('reads a JSON answer whole, in pieces', () => {
    const json = Buffer.from(
      JSON.stringify({
        id: 'm',
        type: 'message',
        model: 'claude-test-2',
        content: [],
        usage: { input_tokens: 10, output_tokens: 20, cache_read_input_tokens: 30, cache_creation_input_tokens: 40 },
      }),
    );
    const meter = UsageMeter.forContentType('application/json')!;
    meter.feed(json.subarray(0, 17));
    meter.feed(json.subarray(17));
    assert.deepEqual(meter.finish(), {
      model: 'claude-test-2',
      usage: { inputTokens: 10, outputTokens: 20, cacheReadTokens: 30, cacheWriteTokens: 40 },
    });
  });

  it('item 4: reads an OpenAI Responses stream (Codex): the model of response.created, the usage of response.completed, cached input apart, after a long output too', () => {
    const usage = {
      input_tokens: 900,
      input_tokens_details: { cached_tokens: 700 },
      output_tokens: 42,
      output_tokens_details: { reasoning_tokens: 10 },
      total_tokens: 942,
    };
    const long = 'x "usage":{"input_tokens":1} lookalike '.repeat(400);
    const events = (text: string) =>
      [
        sseEvent('response.created', { type: 'response.created', response: { id: 'resp_1', model: 'gpt-test-codex', output: [] } }),
        sseEvent('response.output_text.delta', { type: 'response.output_text.delta', delta: text }),
        sseEvent('response.completed', {
          type: 'response.completed',
          response: {
            id: 'resp_1',
            model: 'gpt-test-codex',
            output: [{ type: 'message', content: [{ type: 'output_text', text }] }],
            usage,
          },
        }),
      ].join('');
    const expected = { model: 'gpt-test-codex', usage: { inputTokens: 200, outputTokens: 42, cacheReadTokens: 700, cacheWriteTokens: 0 } };
    for (const text of ['short', long]) {
      const bytes = Buffer.from(events(text));
      for (const size of [bytes.length, 64, 5]) {
        const meter = UsageMeter.forContentType('text/event-stream')!;
        for (let i = 0; i < bytes.length; i += size) meter.feed(bytes.subarray(i, i + size));
        assert.deepEqual(meter.finish(), expected, `${text.length} chars of text, chunks of ${size} bytes`);
      }
    }
    const json = UsageMeter.forContentType('application/json')!;
    json.feed(Buffer.from(JSON.stringify({ id: 'resp_2', object: 'response', model: 'gpt-test-codex', output: [], usage })));
    assert.deepEqual(json.finish(), expected);
  });

  it('gives no usage (and throws nothing) for answers that report none or are not what they claim', () => {
    const cases: [string, string][] = [
      ['text/event-stream', sseEvent('ping', {})],
      ['text/event-stream', 'event: message_start\ndata: {not json\n\n'],
      ['application/json', '{"type":"message","content":[]}'],
      ['application/json', '<html>oops</html>'],
      ['application/json', JSON.stringify({ usage: { input_tokens: -5, output_tokens: 'many' } })],
    ];
    for (const [type, body] of cases) {
      const meter = UsageMeter.forContentType(type)!;
      meter.feed(Buffer.from(body));
      assert.equal(meter.finish(), null, body);
    }
    assert.equal(UsageMeter.forContentType('text/plain'), null);
    assert.equal(UsageMeter.forContentType(undefined), null);
  });

  it('sums answers into a segment and segments into a task, models in the order first seen', () => {
    const one = { inputTokens: 1, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 4 };
    let segment = addAnswerUsage(null, 'model-a', one);
    segment = addAnswerUsage(segment, 'model-b', one);
    segment = addAnswerUsage(segment, 'model-a', one);
    assert.deepEqual(segment, {
      model: 'model-a, model-b',
      inputTokens: 3,
      outputTokens: 6,
      cacheReadTokens: 9,
      cacheWriteTokens: 12,
      requests: 3,
    });
    const other = addAnswerUsage(null, null, { inputTokens: 10, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
    assert.deepEqual(totalUsage([{ usage: segment }, { usage: null }, { usage: other }]), {
      model: 'model-a, model-b',
      inputTokens: 13,
      outputTokens: 6,
      cacheReadTokens: 9,
      cacheWriteTokens: 12,
      requests: 4,
    });
    assert.equal(totalUsage([{ usage: null }]), null);
  });
});

describe('usage recorder (answers summed into ledger writes)', () => {
  const one = { inputTokens: 100, outputTokens: 10, cacheReadTokens: 5, cacheWriteTokens: 1 };

  it('writes at most once per interval while segments run, and everything at a flush; a failed write is kept for the next', async () => {
    const clock = new ManualClock(0);
    const timers = new ManualTimers(clock);
    const written: [string, SegmentUsage][] = [];
    let failNext = false;
    const recorder = new UsageRecorder(
      async (ticketId, usage) => {
        if (failNext) {
          failNext = false;
          throw new Error('store busy');
        }
        written.push([ticketId, usage]);
      },
      timers,
      () => undefined,
      30_000,
    );
    recorder.add('T1', 'model-a', one);
    recorder.add('T1', 'model-a', one);
    recorder.add('T2', null, one);
    assert.equal(timers.pending, 1, 'one timer for the interval, however many answers');
    assert.deepEqual(written, []);
    await timers.advanceTo(30_000, () => recorder.flush());
    assert.deepEqual(written, [
      ['T1', { model: 'model-a', inputTokens: 200, outputTokens: 20, cacheReadTokens: 10, cacheWriteTokens: 2, requests: 2 }],
      ['T2', { model: '', inputTokens: 100, outputTokens: 10, cacheReadTokens: 5, cacheWriteTokens: 1, requests: 1 }],
    ]);

    written.length = 0;
    recorder.add('T1', 'model-b', one);
    failNext = true;
    await recorder.flush();
    assert.deepEqual(written, [], 'the write failed');
    recorder.add('T1', 'model-b', one);
    await recorder.flush();
    assert.deepEqual(
      written,
      [['T1', { model: 'model-b', inputTokens: 200, outputTokens: 20, cacheReadTokens: 10, cacheWriteTokens: 2, requests: 2 }]],
      'nothing lost',
    );
    assert.equal(timers.pending, 0, 'a flush clears the interval timer');
  });
});
