// The store's row reader (src/store/repos/cells.ts): one spec names a record's fields by the reader
// of their cells, and the compiled mapping reads each column the field's snake_case name.
import assert from 'node:assert/strict';
import { cellReader, columnOf } from '../../src/store/repos/cells';

describe('store: the row reader', () => {
  it('reads each field from its snake_case column with its kind of reader, NULL kept or defaulted by kind', () => {
    const read = cellReader({
      str: ['taskId', 'title'],
      strOrNull: ['lastError'],
      num: ['queuedAt'],
      numOrNull: ['endedAt'],
      bool: ['claimRunning', 'schedulable'],
    });
    assert.deepEqual(
      read({ task_id: 't1', title: null, last_error: null, queued_at: '42', ended_at: null, claim_running: 1, schedulable: 0 }),
      { taskId: 't1', title: '', lastError: null, queuedAt: 42, endedAt: null, claimRunning: true, schedulable: false },
    );
  });

  it('a column prefix reads `usage_input_tokens` into inputTokens', () => {
    const read = cellReader({ num: ['inputTokens'] }, { prefix: 'usage_' });
    assert.deepEqual(read({ usage_input_tokens: 7, input_tokens: 1 }), { inputTokens: 7 });
  });

  it('a renamed field reads its own column: id from off_peak_task_id', () => {
    const read = cellReader({ str: ['id'] }, { renamed: { id: 'off_peak_task_id' } });
    assert.deepEqual(read({ off_peak_task_id: 'x', id: 'wrong' }), { id: 'x' });
  });

  it('a field name is quoted, never code: a name with quotes and brackets is only a key', () => {
    const odd = 'a"]); throw new Error("ran"); (["';
    const read = cellReader({ str: [odd] });
    assert.deepEqual(read({ [columnOf(odd)]: 'v' }), { [odd]: 'v' });
  });
});
