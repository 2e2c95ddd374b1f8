// `offPeak.setApiKey <key>` and `offPeak.setModelApiKey <key>`: what they do to the stored key. The slot is an in-memory stand-in for
// VS Code's SecretStorage; the confirm function stands in for the modal and records each question.
import assert from 'node:assert/strict';
import {
  REPLACE_KEY_CONFIRMATION,
  REPLACE_MODEL_KEY_CONFIRMATION,
  setApiKeyFromArgument,
  setModelApiKeyCommand,
  type ApiKeySlot,
} from '../../src/panel/api-key-command';
import type { Confirmation } from '../../src/panel/confirmations';

function slot(initial?: string): ApiKeySlot & { value: string | undefined } {
  const s = {
    value: initial,
    get: async () => s.value,
    set: async (key: string) => void (s.value = key),
  };
  return s;
}

function answering(...answers: boolean[]) {
  const asked: Confirmation[] = [];
  return {
    asked,
    confirm: async (q: Confirmation) => {
      asked.push(q);
      const answer = answers.shift();
      assert.ok(answer !== undefined, `an unexpected question: ${q.message}`);
      return answer;
    },
  };
}

describe('offPeak.setApiKey with a key argument', () => {
  it('item 10: replacing a stored key asks first; declined, the stored key stays', async () => {
    const keys = slot('opk-mine');
    const modal = answering(false, true);
    assert.equal(await setApiKeyFromArgument(keys, 'opk-someone-else', modal.confirm), false);
    assert.equal(keys.value, 'opk-mine');
    assert.deepEqual(modal.asked, [REPLACE_KEY_CONFIRMATION]);
    assert.equal(await setApiKeyFromArgument(keys, 'opk-someone-else', modal.confirm), true);
    assert.equal(keys.value, 'opk-someone-else');
  });

  it('item 10: with no key stored, or the same key, it stores without asking; a malformed key is refused and changes nothing', async () => {
    const keys = slot();
    const modal = answering();
    assert.equal(await setApiKeyFromArgument(keys, '  opk-first  ', modal.confirm), true);
    assert.equal(keys.value, 'opk-first');
    assert.equal(await setApiKeyFromArgument(keys, 'opk-first', modal.confirm), true);
    await assert.rejects(setApiKeyFromArgument(keys, 'two words', modal.confirm), /without spaces/);
    await assert.rejects(setApiKeyFromArgument(keys, '   ', modal.confirm), /non-empty/);
    assert.equal(keys.value, 'opk-first');
    assert.equal(modal.asked.length, 0);
  });
});

describe('offPeak.setModelApiKey with a key argument', () => {
  const modelSlot = (initial?: string) =>
    Object.assign(slot(initial), { prompt: async () => assert.fail('no password box for a key argument') });

  it('item 5: replacing a different stored model API key asks first (as the gateway key does); declined, the stored key stays', async () => {
    const keys = modelSlot('sk-ant-mine');
    const modal = answering(false, true);
    assert.equal(await setModelApiKeyCommand(keys, 'sk-ant-someone-else', modal.confirm), false);
    assert.equal(keys.value, 'sk-ant-mine');
    assert.deepEqual(modal.asked, [REPLACE_MODEL_KEY_CONFIRMATION]);
    assert.match(REPLACE_MODEL_KEY_CONFIRMATION.message, /model API key/);
    assert.equal(await setModelApiKeyCommand(keys, 'sk-ant-someone-else', modal.confirm), true);
    assert.equal(keys.value, 'sk-ant-someone-else');
  });

  it('item 5: with no model key stored, or the same key, it stores without asking; without an argument the password box asks', async () => {
    const keys = modelSlot();
    const modal = answering();
    assert.equal(await setModelApiKeyCommand(keys, 'sk-ant-first', modal.confirm), true);
    assert.equal(await setModelApiKeyCommand(keys, 'sk-ant-first', modal.confirm), true);
    assert.equal(keys.value, 'sk-ant-first');
    assert.equal(modal.asked.length, 0);
    let prompted = 0;
    assert.equal(await setModelApiKeyCommand({ ...keys, prompt: async () => (prompted++, true) }, undefined, modal.confirm), true);
    assert.equal(prompted, 1);
  });
});
