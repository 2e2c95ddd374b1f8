// The History filter box's values as the webview sends them (docs/flows.md#archive).
import assert from 'node:assert/strict';
import { HistoryFilterSchema } from '../../src/protocol/webview';
import { matchesHistoryFilter, type HistoryRow } from '../../src/core/history';
import { activeFilter, dayBound } from '../../webview/history-filter';

describe('History filter box', () => {
  it('a date field is a whole local day: from its first to its last millisecond; anything else is no bound', () => {
    assert.equal(dayBound('2026-03-05', false), new Date(2026, 2, 5, 0, 0, 0, 0).getTime());
    assert.equal(dayBound('2026-03-05', true), new Date(2026, 2, 5, 23, 59, 59, 999).getTime());
    assert.equal(dayBound('', false), undefined);
    assert.equal(dayBound('05/03/2026', true), undefined);
  });

  it('sends only what was asked: blank text and no status are no filter at all, and what it sends the host accepts', () => {
    assert.equal(activeFilter({ text: '   ', status: undefined }), undefined);
    const asked = activeFilter({ text: '  parser ', status: 'failure', from: 10 });
    assert.deepEqual(asked, { text: 'parser', status: 'failure', from: 10 });
    assert.equal(HistoryFilterSchema.safeParse(asked).success, true);
    assert.equal(HistoryFilterSchema.safeParse({ text: 'x'.repeat(201) }).success, false, 'a text over 200 characters is refused');
  });

  it('a live row matches by text in the title or prompt (any case), status and the day range, all together', () => {
    const row: HistoryRow = { taskId: 't', title: 'Fix Parser', prompt: 'Split the LEXER', triggeredAt: 1000, status: 'failure', durationMs: 5, sessionId: null, failureReason: null };
    assert.equal(matchesHistoryFilter(row, { text: 'parser' }), true);
    assert.equal(matchesHistoryFilter(row, { text: 'lexer' }), true);
    assert.equal(matchesHistoryFilter(row, { text: 'docs' }), false);
    assert.equal(matchesHistoryFilter(row, { text: 'parser', status: 'succeeded' }), false);
    assert.equal(matchesHistoryFilter(row, { from: 1000, to: 1000 }), true);
    assert.equal(matchesHistoryFilter(row, { from: 1001 }), false);
  });
});
