/**
 * A task's pull request (off_peak_pull_requests, v22; docs/flows.md#pull-requests): where it is
 * (forge, API, owner, repository, number, link, branches) and what the forge last said of it
 * (state, checks, review), with the ETags of those answers, so the next look asks "changed since?"
 * and a 304 costs nothing. One row per task that opened one, removed with the task by a trigger.
 */
import { PULL_REQUESTS_TABLE } from '../migrations/tables';
import type { SqlRow } from '../db/sql';
import { StoreRepo } from './store-repo';
import { cellReader, oneOf } from './cells';

export type PullRequestState = 'draft' | 'open' | 'merged' | 'closed';
/** The forge's check runs on the head commit, summed up: any failing, else any pending, else passing. */
export type PullRequestChecks = 'none' | 'pending' | 'passing' | 'failing';
export type PullRequestReview = 'none' | 'approved' | 'changes_requested' | 'commented';
export type ForgeKind = 'github';

export interface TaskPullRequest {
  taskId: string;
  forge: ForgeKind;
  apiUrl: string;
  owner: string;
  repo: string;
  number: number;
  url: string;
  head: string;
  base: string;
  state: PullRequestState;
  checks: PullRequestChecks;
  review: PullRequestReview;
  /** The ETags of the forge's last answers, by what was asked (`pull`, `checks`, `reviews`). */
  etags: Record<string, string>;
  /** When the forge was last asked (null: not since it was opened). */
  checkedAt: number | null;
  /** The forge's rate limit holds the next look until then (v24; null: nothing holds it). */
  waitUntil: number | null;
  createdAt: number;
}

/** What the forge said on a look: only what changed is given. */
export type PullRequestLook = Partial<Pick<TaskPullRequest, 'state' | 'checks' | 'review' | 'etags'>>;

const STATES: readonly PullRequestState[] = ['draft', 'open', 'merged', 'closed'];
const CHECKS: readonly PullRequestChecks[] = ['none', 'pending', 'passing', 'failing'];
const REVIEWS: readonly PullRequestReview[] = ['none', 'approved', 'changes_requested', 'commented'];

const cells = cellReader({
  str: ['taskId', 'apiUrl', 'owner', 'repo', 'url', 'head', 'base'],
  num: ['number', 'createdAt'],
  numOrNull: ['checkedAt', 'waitUntil'],
});

function etagsOf(cell: unknown): Record<string, string> {
  if (typeof cell !== 'string') return {};
  try {
    const parsed: unknown = JSON.parse(cell);
    if (!parsed || typeof parsed !== 'object') return {};
    return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}

function toPullRequest(r: SqlRow): TaskPullRequest {
  return {
    ...cells(r),
    forge: 'github',
    state: oneOf(r.state, STATES, 'open'),
    checks: oneOf(r.checks, CHECKS, 'none'),
    review: oneOf(r.review, REVIEWS, 'none'),
    etags: etagsOf(r.etag),
  };
}

export class PullRequestRepo extends StoreRepo {
  get(taskId: string): TaskPullRequest | undefined {
    return this.recordOfTask(PULL_REQUESTS_TABLE, taskId, toPullRequest);
  }

  /** Every task's pull request, by task id (one read for a panel snapshot). */
  all(): Map<string, TaskPullRequest> {
    return this.recordsByTask(PULL_REQUESTS_TABLE, toPullRequest);
  }

  /** The pull request the user opened for the task (a second one replaces it: the first was closed). */
  record(pr: Omit<TaskPullRequest, 'checks' | 'review' | 'etags' | 'checkedAt' | 'waitUntil' | 'createdAt'>): void {
    this.db.run(
      `INSERT OR REPLACE INTO ${PULL_REQUESTS_TABLE} (task_id, forge, api_url, owner, repo, number, url, head, base, state, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [pr.taskId, pr.forge, pr.apiUrl, pr.owner, pr.repo, pr.number, pr.url, pr.head, pr.base, pr.state, this.now],
    );
  }

  /** The open pull request of a branch (any task's), to push a follow-up's commits to. */
  openOfBranch(apiUrl: string, owner: string, repo: string, head: string): TaskPullRequest | undefined {
    return [...this.all().values()].find(
      (p) => p.apiUrl === apiUrl && p.owner === owner && p.repo === repo && p.head === head && (p.state === 'open' || p.state === 'draft'),
    );
  }

  /** The pull request now follows another task of its branch (a follow-up whose commits went to it): one row, one look. */
  moveTo(fromTaskId: string, toTaskId: string): boolean {
    return this.db.run(`UPDATE ${PULL_REQUESTS_TABLE} SET task_id = ? WHERE task_id = ?`, [toTaskId, fromTaskId]) === 1;
  }

  /** A look at the forge: what it said (nothing, on a 304) and when it was asked. */
  recordLook(taskId: string, look: PullRequestLook): boolean {
    const current = this.get(taskId);
    if (!current) return false;
    const next = { ...current, ...look, etags: { ...current.etags, ...look.etags } };
    return (
      this.db.run(
        `UPDATE ${PULL_REQUESTS_TABLE} SET state = ?, checks = ?, review = ?, etag = ?, checked_at = ?, wait_until = NULL WHERE task_id = ?`,
        [next.state, next.checks, next.review, JSON.stringify(next.etags), this.now, taskId],
      ) === 1
    );
  }

  /** The forge's rate limit: no pull request on that API is looked at before `until` (its look is due again then). */
  recordWait(apiUrl: string, until: number): number {
    return this.db.run(`UPDATE ${PULL_REQUESTS_TABLE} SET wait_until = ? WHERE api_url = ? AND state IN ('draft', 'open')`, [
      until,
      apiUrl,
    ]);
  }
}
