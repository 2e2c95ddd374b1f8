// What the create form and an expanded card say about a prompt (webview/format.ts).
import { unansweredQuestionText } from '../../src/panel/setup-line';
import assert from 'node:assert/strict';
import { PROMPT_MAX_CHARS } from '../../src/protocol/webview';
import { filesChangedText, foldPrompt, promptHint } from '../../webview/format';
import { permissionPickDetail } from '../../src/panel/create-task-command';

describe('prompt texts in the panel', () => {
  it('item 10: a counter appears near the length limit, and past it the form says how much too long', () => {
    assert.deepEqual(promptHint('Fix the flaky test'), { counter: undefined, blocks: false });
    const near = promptHint('x'.repeat(95_000));
    assert.equal(near.counter, '95,000 / 100,000 characters');
    assert.equal(near.blocks, false);
    const over = promptHint('x'.repeat(PROMPT_MAX_CHARS + 12));
    assert.equal(over.counter, '100,012 / 100,000 characters');
    assert.equal(over.hint, 'The instructions are 12 characters too long: shorten them to queue the task.');
    assert.equal(over.blocks, true);
  });

  it('item 10: instructions of only whitespace say why Queue is disabled; an empty form says nothing', () => {
    assert.deepEqual(promptHint(''), { counter: undefined, blocks: true });
    const blank = promptHint('  \n\t ');
    assert.equal(blank.hint, 'The instructions are only spaces or line breaks: write what the agent should do.');
    assert.equal(blank.blocks, true);
  });

  it('item 10: a long prompt folds after 20 lines with the count of the rest; a short one does not', () => {
    const long = Array.from({ length: 60 }, (_, i) => `line ${i + 1}`).join('\n');
    const folded = foldPrompt(long);
    assert.equal(folded.text.split('\n').length, 20);
    assert.equal(folded.text.split('\n').at(-1), 'line 20');
    assert.equal(folded.hiddenLines, 40);
    const short = 'one\ntwo\nthree';
    assert.deepEqual(foldPrompt(short), { text: short, hiddenLines: 0 });
  });
});

describe('the form says what an unanswered question does under the settings in force', () => {
  it('park: it waits without holding capacity after the park minutes; deny: it is denied after the timeout minutes (never "denied" while the policy parks)', () => {
    assert.equal(
      unansweredQuestionText('park', 15),
      'an ask nobody answers within 15 min parks the task: it waits for your answer without holding capacity',
    );
    assert.doesNotMatch(unansweredQuestionText('park', 15), /denied/);
    assert.equal(unansweredQuestionText('deny', 3), 'an ask nobody answers within 3 min is denied and the agent goes on without it');
  });

  it('item 8: "1 file changed", never "1 files changed"', () => {
    assert.equal(filesChangedText(1), '1 file changed');
    assert.equal(filesChangedText(0), '0 files changed');
    assert.equal(filesChangedText(14), '14 files changed');
  });

  it("item 8: the palette's permission step says what an unanswered question does under the settings (parks by default), never that it is denied while the policy parks", () => {
    assert.equal(
      permissionPickDetail('park', 10),
      'Unanswered questions park the task after 10 min: it waits for your answer without holding capacity.',
    );
    assert.equal(permissionPickDetail('deny', 3), 'Unanswered questions are denied after 3 min, and the agent goes on without them.');
  });
});
