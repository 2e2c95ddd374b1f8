// The card's pull request line (docs/flows.md#pull-requests): its number as a link, its state,
// the forge's checks and the review, as the forge last said. The link is the forge's own URL.
import { clockTime } from '../src/core/clock';
import type { PullRequestView } from '../src/protocol/webview';

const STATES: Record<PullRequestView['state'], string> = { draft: 'Draft', open: 'Open', merged: 'Merged', closed: 'Closed unmerged' };
const CHECKS: Record<PullRequestView['checks'], string> = {
  none: '',
  pending: 'checks pending',
  passing: 'checks passing',
  failing: 'checks failing',
};
const REVIEWS: Record<PullRequestView['review'], string> = {
  none: '',
  approved: 'approved',
  changes_requested: 'changes requested',
  commented: 'commented',
};

/** "Open · checks failing · changes requested"; closed unmerged says its branch stays (nothing was removed). */
export function pullRequestWords(pr: PullRequestView): string {
  if (pr.state === 'closed') return `${STATES.closed} · the branch is kept`;
  // The forge's rate limit holds the next look: what the card shows may be older than it looks.
  const waiting = pr.waitUntil ? `rate limit: the next look after ${clockTime(pr.waitUntil)}` : '';
  return [STATES[pr.state], CHECKS[pr.checks], REVIEWS[pr.review], waiting].filter(Boolean).join(' · ');
}

export function PullRequestLine({ pr }: { pr: PullRequestView }) {
  return (
    <div class="pull-request" data-testid="pull-request" data-state={pr.state} data-checks={pr.checks}>
      <span class="codicon codicon-git-pull-request" aria-hidden="true" />{' '}
      <a href={pr.url} data-testid="pull-request-link">
        #{pr.number}
      </a>{' '}
      <span data-testid="pull-request-state">{pullRequestWords(pr)}</span>
    </div>
  );
}
