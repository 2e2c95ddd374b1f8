// The webview's check of what the host posts (webview/host-channel.ts): parseHostMessage gives
// HostToWebviewSchema's verdict, result and first error, while checking a snapshot's card and
// History rows in one loop instead of through zod (the 1000-card panel's first render).
import assert from 'node:assert/strict';
import { HostToWebviewSchema } from '../../src/protocol/webview';
import { parseHostMessage } from '../../webview/host-channel';

const card = (id: string) => ({ id, title: `Task ${id}`, status: 'queued', phase: 'in_queue' });
const state = {
  version: 3,
  now: 1_000,
  tasks: [card('a'), card('b'), card('c')],
  history: [{ taskId: 'a', status: 'succeeded' }],
  availability: { kind: 'enabled', canCreate: true },
  hasApiKey: true,
  models: ['m'],
  workspaces: [{ name: 'w', path: '/w' }],
};

const messages: [string, unknown][] = [
  ['a snapshot', { type: 'state', state }],
  ['a snapshot with a key the schema strips', { type: 'state', state: { ...state, extra: 1 } }],
  ['no rows', { type: 'state', state: { ...state, tasks: [], history: [] } }],
  ['a card without its id', { type: 'state', state: { ...state, tasks: [...state.tasks, { title: 'x' }] } }],
  ['a card with a number id', { type: 'state', state: { ...state, tasks: [{ id: 3 }] } }],
  ['a null History row', { type: 'state', state: { ...state, history: [null] } }],
  ['tasks not an array', { type: 'state', state: { ...state, tasks: 'no' } }],
  ['a bad version with good rows', { type: 'state', state: { ...state, version: 'x' } }],
  ['a bad availability', { type: 'state', state: { ...state, availability: { kind: 'nope' } } }],
  ['no state', { type: 'state' }],
  ['a null state', { type: 'state', state: null }],
  ['a result', { type: 'result', requestId: 'r1', ok: true, result: 1 }],
  ['an error result', { type: 'result', requestId: 'r1', ok: false, error: 'no', code: 'x' }],
  ['focusForm', { type: 'focusForm' }],
  ['null', null],
  ['a number', 5],
  ['an unknown type', { type: 'other' }],
];

describe('panel: the webview checks what the host posts', () => {
  for (const [name, message] of messages) {
    it(`the same verdict as HostToWebviewSchema: ${name}`, () => {
      const expected = HostToWebviewSchema.safeParse(message);
      const got = parseHostMessage(message);
      assert.equal(got.success, expected.success);
      if (expected.success) assert.deepEqual(got.data, expected.data);
      else assert.deepEqual(got.error?.issues[0], expected.error.issues[0]);
    });
  }

  it('hands on the rows as they came (the cards compare them by content, not copies of copies)', () => {
    const got = parseHostMessage({ type: 'state', state });
    assert.ok(got.success && got.data.type === 'state');
    assert.ok(got.data.state.tasks.every((row, i) => row === state.tasks[i]));
    assert.equal(got.data.state.history[0], state.history[0]);
  });
});
