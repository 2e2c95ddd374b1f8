import assert from 'node:assert/strict';
import fc from 'fast-check';
import { GatewayHttpError } from '../../src/gateway/http/errors';
import { duplicateTopLevelKey, refuseDuplicateKeys } from '../../src/gateway/http/json-keys';

/** JSON text of objects written as key/value pairs, so a key can appear twice (JSON.stringify cannot). */
type Json = string | number | null | Json[] | { pairs: [string, Json][] };

function write(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(write).join(',')}]`;
  if (value !== null && typeof value === 'object') return `{${value.pairs.map(([k, v]) => `${JSON.stringify(k)}:${write(v)}`).join(',')}}`;
  return JSON.stringify(value);
}

// Few distinct keys (so repeats are common), strings with colons, quotes and escapes in them.
const key = fc.constantFrom('model', 'a', 'mod\u0065l', 'x:y', '"', '\\', 'ticket_ids');
const text = fc.constantFrom('', ':', 'a:b', '"q":', '\\":', 'plain');
const { tree } = fc.letrec<{ tree: Json; pairs: { pairs: [string, Json][] } }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    fc.integer(),
    fc.constant(null),
    fc.array(tie('tree'), { maxLength: 3 }),
    tie('pairs'),
  ),
  pairs: fc.record({ pairs: fc.array(fc.tuple(key, tie('tree')), { maxLength: 4 }) }),
}));
const body = fc.record({ pairs: fc.array(fc.tuple(key, tree), { maxLength: 5 }) }).map(write);

function refused(json: string, parsed?: unknown): boolean {
  try {
    refuseDuplicateKeys(json, 'body', parsed);
    return false;
  } catch (error) {
    assert.ok(error instanceof GatewayHttpError && error.status === 400);
    return true;
  }
}

describe('gateway JSON keys: a top-level key named twice is refused', () => {
  it('with the parsed body given (the fast path that skips the tokenizer), refused exactly when the tokenizer finds a repeated top-level key', () => {
    fc.assert(
      fc.property(body, (json) => {
        const expected = duplicateTopLevelKey(json) !== undefined;
        assert.equal(refused(json, JSON.parse(json)), expected, json);
        assert.equal(refused(json), expected, json);
      }),
      { numRuns: 2000 },
    );
  });

  it('a repeat hidden behind a colon inside a string, or escaped, is still refused; nested repeats and distinct keys pass', () => {
    for (const json of ['{"a":"x:y","a":2}', '{"model":"m","mod\\u0065l":"n"}', '{"ticket_ids":["a"],"ticket_ids":["b"]}']) {
      assert.ok(refused(json, JSON.parse(json)), json);
    }
    for (const json of ['{"m":{"t":1,"t":2}}', '{"ticket_ids":["a:b","c"]}', '{"a":1,"b":{"a":2}}']) {
      assert.ok(!refused(json, JSON.parse(json)), json);
    }
  });
});
