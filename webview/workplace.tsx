// Where a task works and what it changed (docs/flows.md#isolation, docs/flows.md#review): the
// card's branch / waiting / missing-worktree lines and its changed files with +/- line counts,
// each opening its own diff; "Review changes" on the card and the History row; the form's "Run on
// its own branch". Paths and titles are plain text.
import type { TaskCard } from '../src/protocol/webview';
import { useState } from 'preact/hooks';
import { ActionLabel } from './action-button';
import { formatTime } from './format';
import { PullRequestLine } from './pull-request-line';
import type { HostChannel } from './host-channel';

type Act = <T>(work: Promise<T>) => Promise<T | undefined>;

export function ReviewButton({ taskId, show, act, channel }: { taskId: string; show: boolean; act: Act; channel: HostChannel }) {
  if (!show) return null;
  const title = "Open the task's changes in the diff editor";
  return (
    <button
      type="button"
      class="action"
      data-testid="review-changes"
      title={title}
      aria-label={title}
      onClick={() => void act(channel.request('reviewChanges', { taskId }))}
    >
      <span class="codicon codicon-diff-multiple" aria-hidden="true" /> <ActionLabel label="Review changes" short="Review" />
    </button>
  );
}

const count = (n: number | null, sign: string) => (n === null ? '' : `${sign}${n}`);

/** A long list shows its first files and a button for the rest. */
const FIRST_FILES = 10;

/** The requests of the buttons that bring a task's branch home (or drop it). */
type BranchRequest = 'mergeChanges' | 'applyChanges' | 'openWorktree' | 'discardChanges' | 'openPullRequest' | 'followUpFromReview';

/** Each branch button's hover text: what it does, and whether it asks first. */
const BRANCH_TITLES: Record<BranchRequest, string> = {
  mergeChanges: "Merge the task's branch into the branch checked out in the folder (asks first)",
  applyChanges: "Write the task's changes into the folder as uncommitted changes (asks first)",
  openWorktree: "Open the task's worktree in a new window",
  discardChanges: "Remove the task's worktree and branch (asks first)",
  openPullRequest: "Push the task's branch (only it, never forced) and open a pull request against the branch it started from",
  followUpFromReview:
    "A follow-up that continues this task's session in its worktree, asked to address the pull request's review comments and failing checks",
};

export function WorkplaceBlock({
  card,
  act,
  channel,
  onMessage,
}: {
  card: TaskCard;
  act: Act;
  channel: HostChannel;
  onMessage(message: string): void;
}) {
  const [allFiles, setAllFiles] = useState(false);
  const w = card.workplace;
  if (!w) return null;
  const shown = w.changes && !allFiles ? w.changes.slice(0, FIRST_FILES) : (w.changes ?? []);
  // Once merged or applied, Discard only removes the worktree and the branch: it says so.
  const home = w.mergedAt != null ? 'merged' : w.appliedAt != null ? 'applied' : null;
  // A branch button sends its request about this task; a report in the answer (Discard's) is shown.
  const branchButton = (request: BranchRequest, testid: string, icon: string, label: string, short?: string, title?: string) => (
    <button
      type="button"
      class="action"
      data-testid={testid}
      title={title ?? BRANCH_TITLES[request]}
      onClick={() =>
        void act(channel.request(request, { taskId: card.id })).then((r) => r && 'report' in r && r.report && onMessage(r.report))
      }
    >
      <span class={`codicon codicon-${icon}`} aria-hidden="true" /> <ActionLabel label={label} short={short} />
    </button>
  );
  return (
    <div class="workplace" data-testid="workplace">
      {w.waitingFor !== null && (
        <div class="waiting" data-testid="waiting-for-folder">
          Waiting for {w.waitingFor} to finish in this folder
        </div>
      )}
      {w.missing && (
        <div class="failure" data-testid="worktree-missing">
          Its worktree {w.worktreePath} was removed; the branch {w.branch} is kept in the repository.
        </div>
      )}
      {w.branch && !w.missing && (
        <div class="branch" data-testid="branch" title={w.worktreePath ?? undefined}>
          <span class="codicon codicon-git-branch" aria-hidden="true" /> {w.branch}
        </div>
      )}
      {w.note && (
        <div class="hint" data-testid="isolation-note">
          {w.note}
        </div>
      )}
      {w.mode === 'inPlace' && w.changes && w.changes.length > 0 && (
        <div class="hint" data-testid="in-place-changes">
          Ran in the folder itself: these are the folder's changes since the task first started, yours during the run included.
        </div>
      )}
      {w.discardedAt != null && (
        <div class="hint" data-testid="discarded">
          Changes discarded {formatTime(w.discardedAt)}.
        </div>
      )}
      {w.mergedAt != null && (
        <div class="hint" data-testid="merged">
          {w.mergedIn != null
            ? `Merged in #${w.mergedIn} on the forge ${formatTime(w.mergedAt)}.`
            : `Merged into the folder's branch ${formatTime(w.mergedAt)}.`}
        </div>
      )}
      {w.appliedAt != null && (
        <div class="hint" data-testid="applied">
          Applied to the folder as uncommitted changes {formatTime(w.appliedAt)}.
        </div>
      )}
      {w.removedAt != null && (
        <div class="hint" data-testid="worktree-removed">
          Worktree and branch removed {formatTime(w.removedAt)}.
        </div>
      )}
      {w.pullRequest && <PullRequestLine pr={w.pullRequest} />}
      {w.bringHomeWith != null && (
        <div class="hint" data-testid="bring-home-with">
          Its branch holds the later steps' work too: Merge, Apply or Discard it as one on "{w.bringHomeWith}", the last step.
        </div>
      )}
      {(w.canOpen || w.canDiscard || w.canMerge || w.canOpenPullRequest || w.canFollowUpFromReview) && (
        <div class="bring-home" role="group" aria-label="What to do with the task's branch">
          {w.canMerge && branchButton('mergeChanges', 'merge-changes', 'git-merge', 'Merge')}
          {w.canMerge && branchButton('applyChanges', 'apply-changes', 'git-pull-request-create', 'Apply')}
          {w.canOpenPullRequest && branchButton('openPullRequest', 'open-pull-request', 'git-pull-request', 'Open pull request', 'PR')}
          {w.canFollowUpFromReview &&
            branchButton('followUpFromReview', 'follow-up-from-review', 'comment-discussion', 'Follow up from review', 'Review')}
          {w.canOpen && branchButton('openWorktree', 'open-worktree', 'empty-window', 'Open worktree', 'Open')}
          {w.canDiscard &&
            (home
              ? branchButton(
                  'discardChanges',
                  'discard-changes',
                  'trash',
                  'Remove worktree',
                  'Remove',
                  `Remove worktree and branch — already ${home} (asks first)`,
                )
              : branchButton('discardChanges', 'discard-changes', 'discard', 'Discard'))}
        </div>
      )}
      {w.changes && w.changes.length > 0 && (
        <ul class="changed-files" role="list" data-testid="changed-files">
          {shown.map((c) => (
            <li key={c.path}>
              <button
                type="button"
                class="link"
                title={`Open the diff of ${c.path}`}
                disabled={!w.reviewable}
                onClick={() => void act(channel.request('reviewChanges', { taskId: card.id, path: c.path }))}
              >
                {c.path}
              </button>{' '}
              <span class={`change ${c.status}`}>{c.status}</span> <span class="added">{count(c.added, '+')}</span>{' '}
              <span class="removed">{count(c.removed, '−')}</span>
            </li>
          ))}
          {shown.length < w.changes.length && (
            <li>
              <button type="button" class="link" data-testid="all-changed-files" onClick={() => setAllFiles(true)}>
                Show all {w.changes.length} changed files
              </button>
            </li>
          )}
        </ul>
      )}
    </div>
  );
}

/** `cannot`: why this folder cannot have its own branch; the task runs in the folder itself. */
/** `continuing`: the task continues in the branch of the task it runs after, so it gets none of its own (docs/flows.md#schedules-and-chains). */
export function OwnBranchToggle({
  checked,
  cannot,
  continuing,
  onChange,
}: {
  checked: boolean;
  cannot?: string;
  continuing?: boolean;
  onChange(value: boolean): void;
}) {
  return (
    <label class="own-branch" data-testid="own-branch">
      <input
        type="checkbox"
        checked={checked && !continuing}
        disabled={cannot !== undefined || continuing}
        onChange={(e) => onChange((e.target as HTMLInputElement).checked)}
      />{' '}
      Run on its own branch
      {continuing ? (
        <span class="hint" data-testid="own-branch-continuing">
          {' '}
          No: it continues in the branch of the task it runs after.
        </span>
      ) : cannot === undefined ? (
        <span class="hint"> (a worktree on a new offpeak/… branch; your working copy is not touched)</span>
      ) : (
        <span class="hint" data-testid="no-own-branch">
          {' '}
          Not for this folder: {cannot}. The task runs in the folder itself.
        </span>
      )}
    </label>
  );
}
