/**
 * What the service asks of a forge's REST API (docs/flows.md#pull-requests), whichever forge it is,
 * and how a call fails: one typed `ForgeError` the card words (docs/flows.md#pull-requests).
 */
import type { PullRequestLook, TaskPullRequest } from '../../store';
import type { ForgeHost } from './forge-remote';

export interface NewPullRequest {
  owner: string;
  repo: string;
  title: string;
  body: string;
  head: string;
  base: string;
  draft: boolean;
}

/** What reviewers and checks said of a pull request: the comments on its lines (not outdated) and the failing check runs' names. */
export interface ReviewFeedback {
  comments: { path: string; line: number | null; author: string; body: string }[];
  failingChecks: string[];
}

export interface ForgeApi {
  createPullRequest(input: NewPullRequest): Promise<{ number: number; url: string; state: 'draft' | 'open' }>;
  /** The pull request's state, checks and review, asked with the ETags of the last answers (a 304 changes nothing). */
  lookAt(pr: TaskPullRequest): Promise<PullRequestLook>;
  /** The review comments and failing checks a follow-up from review addresses. */
  reviewFeedback(pr: TaskPullRequest): Promise<ReviewFeedback>;
}

export type ForgeApiFactory = (host: ForgeHost, token: string) => ForgeApi;

/**
 * The user's token for a forge host (VS Code's authentication session; src/vscode/forge-auth.ts).
 * `interactive`: the user asked for this action, so signing in may be asked for; undefined: no session.
 */
export type ForgeTokenProvider = (host: ForgeHost, options: { interactive: boolean; renew?: boolean }) => Promise<string | undefined>;

/**
 * `auth`: the token was refused (an expired or revoked session); `rate`: a rate limit, until
 * `resetAt`; `offline`: the forge could not be reached; `refused`: it answered no (permissions,
 * a pull request that exists, a branch it does not know).
 */
export type ForgeErrorKind = 'auth' | 'rate' | 'offline' | 'refused';

export class ForgeError extends Error {
  constructor(
    readonly kind: ForgeErrorKind,
    message: string,
    readonly resetAt?: number,
  ) {
    super(message);
    this.name = 'ForgeError';
  }
}
