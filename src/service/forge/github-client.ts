/**
 * GitHub's REST API through Octokit (docs/flows.md#pull-requests): open a pull request, and look
 * at one with conditional requests (If-None-Match with the last answer's ETag; GitHub answers 304
 * and does not count it against the rate limit). Every failure becomes a `ForgeError`. Octokit is
 * loaded on the first call: a window that never opens a pull request never loads it.
 */
import type { Octokit } from '@octokit/rest';
import { plainNotificationText } from '../../core/untrusted-text';
import type { PullRequestChecks, PullRequestLook, PullRequestReview, PullRequestState, TaskPullRequest } from '../../store';
import { ForgeError, type ForgeApi, type NewPullRequest, type ReviewFeedback } from './forge-api';
import type { ForgeHost } from './forge-remote';

const REQUEST_TIMEOUT_MS = 30_000;
const quiet = () => {};
const SILENT = { debug: quiet, info: quiet, warn: quiet, error: quiet };

interface OctokitFailure {
  status?: number;
  message?: string;
  response?: { headers?: Record<string, string | number | undefined> };
}

/** A failed call as the card words it. */
export function forgeErrorOf(e: unknown, host: ForgeHost): ForgeError {
  const f = (e ?? {}) as OctokitFailure;
  const said = plainNotificationText(String(f.message ?? e), 200);
  const headers = f.response?.headers ?? {};
  if (
    (f.status === 403 || f.status === 429) &&
    (String(headers['x-ratelimit-remaining']) === '0' || headers['retry-after'] !== undefined)
  ) {
    const reset = Number(headers['x-ratelimit-reset']);
    const resetAt = Number.isFinite(reset) && reset > 0 ? reset * 1000 : Date.now() + Number(headers['retry-after'] ?? 60) * 1000;
    return new ForgeError('rate', `${host.host} is rate-limiting requests until ${new Date(resetAt).toISOString()}.`, resetAt);
  }
  if (f.status === 401) return new ForgeError('auth', `${host.host} did not accept the sign-in (expired or revoked).`);
  if (typeof f.status !== 'number' || f.status >= 500) return new ForgeError('offline', `${host.host} cannot be reached (${said}).`);
  return new ForgeError('refused', `${host.host} refused: ${said}`);
}

const FAILED = ['failure', 'timed_out', 'cancelled', 'action_required'];

const summarizeChecks = (runs: readonly { status: string; conclusion: string | null }[]): PullRequestChecks => {
  if (runs.length === 0) return 'none';
  if (runs.some((r) => r.status === 'completed' && FAILED.includes(r.conclusion ?? ''))) return 'failing';
  if (runs.some((r) => r.status !== 'completed')) return 'pending';
  return 'passing';
};

/** The latest review that decides, per reviewer: changes requested beats approved; comments alone are "commented". */
const summarizeReviews = (reviews: readonly { state: string; user?: { login?: string } | null }[]): PullRequestReview => {
  const last = new Map<string, string>();
  for (const r of reviews) if (r.state !== 'PENDING') last.set(r.user?.login ?? '', r.state);
  const states = [...last.values()];
  if (states.includes('CHANGES_REQUESTED')) return 'changes_requested';
  if (states.includes('APPROVED')) return 'approved';
  return states.length > 0 ? 'commented' : 'none';
};

export function githubApi(host: ForgeHost, token: string): ForgeApi {
  let client: Promise<Octokit> | undefined;
  const octokitOf = () =>
    (client ??= import('@octokit/rest').then(
      ({ Octokit: OctokitClass }) =>
        new OctokitClass({
          auth: token,
          baseUrl: host.apiUrl,
          userAgent: 'off-peak-tasks',
          request: { timeout: REQUEST_TIMEOUT_MS },
          // Octokit's own log would print every 304 of a look to the console; failures reach the card as ForgeErrors.
          log: SILENT,
        }),
    ));
  /** A GET with the ETag of the last answer: its data and new ETag, or null when nothing changed (304). */
  async function conditional<T>(
    etag: string | undefined,
    call: (headers: Record<string, string>) => Promise<{ data: T; headers: { etag?: string } }>,
  ) {
    try {
      const answer = await call(etag ? { 'if-none-match': etag } : {});
      return { data: answer.data, etag: answer.headers.etag };
    } catch (e) {
      if ((e as OctokitFailure).status === 304) return null;
      throw forgeErrorOf(e, host);
    }
  }
  return {
    async createPullRequest(input: NewPullRequest) {
      const octokit = await octokitOf();
      try {
        const { data } = await octokit.rest.pulls.create({ ...input });
        return { number: data.number, url: data.html_url, state: data.draft ? 'draft' : 'open' };
      } catch (e) {
        throw forgeErrorOf(e, host);
      }
    },
    async lookAt(pr: TaskPullRequest): Promise<PullRequestLook> {
      const octokit = await octokitOf();
      const look: PullRequestLook = { etags: {} };
      const repo = { owner: pr.owner, repo: pr.repo };
      const pull = await conditional(pr.etags.pull, (headers) => octokit.rest.pulls.get({ ...repo, pull_number: pr.number, headers }));
      let headSha = pr.etags.head;
      if (pull) {
        const state: PullRequestState = pull.data.merged
          ? 'merged'
          : pull.data.state === 'closed'
            ? 'closed'
            : pull.data.draft
              ? 'draft'
              : 'open';
        look.state = state;
        headSha = pull.data.head.sha;
        look.etags = { ...look.etags, ...(pull.etag ? { pull: pull.etag } : {}), head: headSha };
      }
      if (headSha) {
        // A new head commit has runs of its own: the old commit's ETag does not apply.
        const checksEtag = pull && headSha !== pr.etags.head ? undefined : pr.etags.checks;
        const runs = await conditional(checksEtag, (headers) =>
          octokit.rest.checks.listForRef({ ...repo, ref: headSha!, per_page: 100, headers }),
        );
        if (runs) {
          look.checks = summarizeChecks(runs.data.check_runs);
          if (runs.etag) look.etags = { ...look.etags, checks: runs.etag };
        }
      }
      const reviews = await conditional(pr.etags.reviews, (headers) =>
        octokit.rest.pulls.listReviews({ ...repo, pull_number: pr.number, per_page: 100, headers }),
      );
      if (reviews) {
        look.review = summarizeReviews(reviews.data);
        if (reviews.etag) look.etags = { ...look.etags, reviews: reviews.etag };
      }
      return look;
    },
    async reviewFeedback(pr: TaskPullRequest): Promise<ReviewFeedback> {
      const octokit = await octokitOf();
      const repo = { owner: pr.owner, repo: pr.repo };
      try {
        const { data: pull } = await octokit.rest.pulls.get({ ...repo, pull_number: pr.number });
        const { data: comments } = await octokit.rest.pulls.listReviewComments({ ...repo, pull_number: pr.number, per_page: 100 });
        const { data: runs } = await octokit.rest.checks.listForRef({ ...repo, ref: pull.head.sha, per_page: 100 });
        return {
          // GitHub marks a comment whose line changed since as outdated (position null): already addressed or moot.
          comments: comments
            .filter((c) => c.position !== null)
            .map((c) => ({ path: c.path, line: c.line ?? c.original_line ?? null, author: c.user?.login ?? '', body: c.body })),
          failingChecks: runs.check_runs.filter((r) => r.status === 'completed' && FAILED.includes(r.conclusion ?? '')).map((r) => r.name),
        };
      } catch (e) {
        throw forgeErrorOf(e, host);
      }
    },
  };
}
