// The card's pull request line (docs/flows.md#pull-requests): its words for each state the forge reports.
import assert from 'node:assert/strict';
import { pullRequestWords } from '../../webview/pull-request-line';

describe('the card’s pull request line', () => {
  const pr = { number: 7, url: 'https://github.com/team/app/pull/7', checks: 'none', review: 'none' } as const;
  it('item 3: draft, open with checks and review, merged', () => {
    assert.equal(pullRequestWords({ ...pr, state: 'draft', checks: 'pending' }), 'Draft · checks pending');
    assert.equal(
      pullRequestWords({ ...pr, state: 'open', checks: 'failing', review: 'changes_requested' }),
      'Open · checks failing · changes requested',
    );
    assert.equal(pullRequestWords({ ...pr, state: 'merged', checks: 'passing', review: 'approved' }), 'Merged · checks passing · approved');
  });
  it('item 3: closed unmerged says the branch is kept', () => {
    assert.equal(pullRequestWords({ ...pr, state: 'closed' }), 'Closed unmerged · the branch is kept');
  });
});
