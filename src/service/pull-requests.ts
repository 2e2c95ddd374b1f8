// "Open pull request" and the card's following of it (docs/flows.md#pull-requests), in any window:
// the task's branch committed as Merge does, pushed alone (never forced, never the base branch,
// the token for that one git process), the pull request opened through the forge's API and
// recorded; then its state, checks and review looked at with conditional requests. The one writer
// of the pull requests table.
import { pushTaskBranch, type PushFailure } from '../agent/workplace/branch-push';
import { runGit, userConfigEnv } from '../agent/workplace/hardened-git';
import { commitWorktree, identityEnv } from '../agent/workplace/task-merge';
import { repositoryTop } from '../agent/workplace/task-worktree';
import { totalUsage } from '../core/usage';
import type { OffPeakTask } from '../core/types';
import type { TaskStore } from '../store';
import { branchStepsOf, bringHomeRefusal, openSteps, stepName, stepsCommitMessage } from './branch-steps';
import { ForgeError, type ForgeApiFactory, type ForgeTokenProvider, type ReviewFeedback } from './forge/forge-api';
import { forgeHosts, forgeRepoOf, type ForgeRepo } from './forge/forge-remote';
import { githubApi } from './forge/github-client';
import { PullRequestFollow } from './pull-request-follow';

export { PULL_REQUEST_LOOK_MS } from './pull-request-follow';
import { systemClock, type Clock } from '../core/clock';
import { pullRequestBody, reviewFollowUpPrompt } from './forge/pull-request-body';
import type { FollowUpInput } from './follow-ups';

export interface PullRequestSettings {
  /** `offPeak.pullRequest.remote`: the remote the branch goes to. */
  remote: string;
  /** `offPeak.pullRequest.draft`. */
  draft: boolean;
  /** `offPeak.pullRequest.githubEnterpriseHosts`. */
  githubEnterpriseHosts: readonly string[];
}

export const DEFAULT_PULL_REQUEST_SETTINGS: PullRequestSettings = { remote: 'origin', draft: true, githubEnterpriseHosts: [] };

export interface PullRequestsOptions {
  store: TaskStore;
  privateDirOf: (taskId: string) => string;
  settings?: () => PullRequestSettings;
  /** The user's forge token (none: not signed in; VS Code's authentication session in the extension). */
  token?: ForgeTokenProvider;
  api?: ForgeApiFactory;
  clock?: Clock;
  /** "Follow up…" of the service (docs/flows.md#follow-up). */
  followUp?: (ofTaskId: string, input: FollowUpInput) => Promise<OffPeakTask>;
  /** Work the service waits for (a look after an action). */
  track?: (work: Promise<unknown>) => void;
  log?: (line: string) => void;
}

/** What the user reads when a push is refused: what happened and what to do; nothing was lost. */
const PUSH_ADVICE: Record<PushFailure, (branch: string, where: string) => string> = {
  'non-fast-forward': (b, w) =>
    `${w} already has a ${b} with commits this task's branch does not have. Nothing was forced: delete that branch there (or bring its commits into the worktree), then try again.`,
  protected: (b, w) => `${w} refused ${b}: a protected branch rule. Nothing changed here; ask for the rule to allow it, then try again.`,
  permission: (_b, w) =>
    `${w} refused the push: your account may not push there. Nothing changed here; ask for write access, then try again.`,
  auth: (_b, w) => `${w} did not accept the sign-in (expired or revoked): sign in again and try again. Nothing changed here.`,
  unreachable: (_b, w) => `${w} cannot be reached: check the connection and try again. The branch and worktree are as they were.`,
  refused: (_b, w) => `The push to ${w} was refused. Nothing changed here.`,
};

export class PullRequests {
  private readonly opening = new Map<string, Promise<{ number: number; url: string }>>();
  /** Follow-ups whose automatic push was tried (once per window; the card's button retries). */
  private readonly autoPushTried = new Set<string>();
  /** The forge refused the last token: the next try asks VS Code for a new session. */
  private renew = false;

  /** The card following the pull request (src/service/pull-request-follow.ts). */
  readonly follow: PullRequestFollow;
  readonly onDidMerge: PullRequestFollow['onDidMerge'];

  constructor(private readonly options: PullRequestsOptions) {
    this.follow = new PullRequestFollow({
      store: options.store,
      clock: options.clock ?? systemClock,
      hosts: () => this.settings.githubEnterpriseHosts,
      token: (host, o) => this.options.token?.(host, o) ?? Promise.resolve(undefined),
      api: (host, token) => (this.options.api ?? githubApi)(host, token),
      log: options.log,
    });
    this.onDidMerge = this.follow.onDidMerge;
  }

  private get settings(): PullRequestSettings {
    return this.options.settings?.() ?? DEFAULT_PULL_REQUEST_SETTINGS;
  }

  /**
   * "Follow up from review": the pull request's review comments (not outdated) and failing checks'
   * names as a follow-up's instructions; the follow-up resumes the task's session in its worktree.
   */
  async followUpFromReview(taskId: string): Promise<OffPeakTask> {
    const pr = this.options.store.read((tx) => tx.pullRequests.get(taskId));
    if (!pr || (pr.state !== 'open' && pr.state !== 'draft')) throw new Error('This task has no pull request open to follow up from.');
    const host = forgeHosts(this.settings.githubEnterpriseHosts).hosts.find((h) => h.apiUrl === pr.apiUrl);
    if (!host) throw new Error(`${pr.apiUrl} is no longer a listed GitHub host (offPeak.pullRequest.githubEnterpriseHosts).`);
    const token = await this.options.token?.(host, { interactive: true, renew: this.renew });
    this.renew = false;
    if (!token) throw new Error(`Sign in to ${host.host} to read the review (VS Code's accounts menu), then try again.`);
    const where = `${host.host} (${pr.owner}/${pr.repo})`;
    let feedback: ReviewFeedback;
    try {
      feedback = await (this.options.api ?? githubApi)(host, token).reviewFeedback(pr);
    } catch (e) {
      if (e instanceof ForgeError && e.kind === 'auth') this.renew = true;
      throw new Error(forgeAdvice(e, where, 'Nothing was created.'));
    }
    if (feedback.comments.length === 0 && feedback.failingChecks.length === 0)
      throw new Error(`Pull request #${pr.number} has no review comments and no failing checks to follow up on.`);
    if (!this.options.followUp) throw new Error('Follow-ups are not available here.');
    return this.options.followUp(taskId, {
      prompt: reviewFollowUpPrompt(pr.number, feedback),
      title: `Follow-up from review of #${pr.number}`,
    });
  }

  /**
   * The lease holder's tick: a follow-up that completed, of a task whose pull request is open,
   * pushes its commits to that pull request by itself (the row then moves to it: once). Without a
   * session (nothing interactive here) or when the push fails, the card's Open pull request stays.
   */
  async pushFinishedFollowUps(): Promise<void> {
    const { store } = this.options;
    const due = store.read((tx) => {
      const pulls = tx.pullRequests.all();
      return [...tx.followUps.all().values()].filter((link) => {
        const pr = pulls.get(link.followUpOf);
        return (pr?.state === 'open' || pr?.state === 'draft') && tx.tasks.get(link.taskId)?.status === 'completed';
      });
    });
    for (const link of due) {
      if (this.autoPushTried.has(link.taskId)) continue;
      this.autoPushTried.add(link.taskId);
      await this.open(link.taskId, { interactive: false }).catch((e) =>
        this.options.log?.(`follow-up ${link.taskId} not pushed to its pull request: ${e instanceof Error ? e.message : String(e)}`),
      );
    }
  }

  /** "Open pull request": the new pull request's number and link; an error says what to do, nothing lost. */
  open(taskId: string, how: { interactive: boolean } = { interactive: true }): Promise<{ number: number; url: string }> {
    // One at a time per task: a click while the lease holder pushes a follow-up joins that push.
    const running = this.opening.get(taskId);
    if (running) return running;
    const p = this.openOnce(taskId, how).finally(() => this.opening.delete(taskId));
    this.opening.set(taskId, p);
    return p;
  }

  private async openOnce(taskId: string, how: { interactive: boolean }): Promise<{ number: number; url: string }> {
    const { store } = this.options;
    const task = store.read((tx) => tx.tasks.get(taskId));
    if (!task) throw new Error('This task no longer exists.');
    const isolation = store.read((tx) => tx.isolation.get(taskId));
    if (!isolation?.worktreePath || !isolation.branch || !isolation.baseCommit || isolation.missingAt !== null)
      throw new Error('This task has no branch of its own to open a pull request for.');
    if (isolation.broughtHome) throw new Error(`This task's work was already ${isolation.broughtHome.kind}.`);
    if (!['completed', 'failed', 'cancelled'].includes(task.status)) throw new Error('Open a pull request once the task has finished.');
    const existing = store.read((tx) => tx.pullRequests.get(taskId));
    if (existing && (existing.state === 'open' || existing.state === 'draft'))
      throw new Error(`This task already has pull request #${existing.number}: ${existing.url}`);
    const group = store.read((tx) => branchStepsOf(tx, taskId))!;
    const refusal = bringHomeRefusal(group, taskId);
    if (refusal) throw new Error(`No pull request: ${refusal}`);
    const steps = openSteps(group);

    const repoTop = await repositoryTop(task.workspacePath);
    if (!repoTop) throw new Error(`${task.workspacePath} is not a git repository any more.`);
    const forge = await this.forgeOf(repoTop);
    const base = await this.baseBranch(repoTop, isolation.baseCommit, isolation.branch);
    const token = await this.options.token?.(forge.host, { interactive: how.interactive, renew: how.interactive && this.renew });
    if (how.interactive) this.renew = false;
    if (!token) throw new Error(`Sign in to ${forge.host.host} to open a pull request (VS Code's accounts menu), then try again.`);

    await commitWorktree(
      {
        worktreePath: isolation.worktreePath,
        branch: isolation.branch,
        baseCommit: isolation.baseCommit,
        message: stepsCommitMessage(steps),
        privateDir: this.options.privateDirOf(taskId),
      },
      await identityEnv(repoTop),
    );
    const where = `${forge.host.host} (${forge.owner}/${forge.repo})`;
    const pushed = await pushTaskBranch({
      repoPath: isolation.worktreePath,
      branch: isolation.branch,
      baseBranch: base,
      url: forge.pushUrl,
      username: 'x-access-token',
      token,
      privateDir: this.options.privateDirOf(taskId),
    });
    if (pushed.kind === 'failed') {
      if (pushed.failure === 'auth') this.renew = true;
      const advice = PUSH_ADVICE[pushed.failure](isolation.branch, where);
      throw new Error(pushed.detail ? `${advice} (git: ${pushed.detail})` : advice);
    }

    // A follow-up of a task whose pull request is open: its commits went to that one (docs/flows.md#pull-requests).
    const ofBranch = store.read((tx) => tx.pullRequests.openOfBranch(forge.host.apiUrl, forge.owner, forge.repo, isolation.branch!));
    if (ofBranch && ofBranch.taskId !== taskId) {
      await store.mutate((tx) => tx.pullRequests.moveTo(ofBranch.taskId, taskId));
      this.options.track?.(this.follow.look(taskId));
      return { number: ofBranch.number, url: ofBranch.url };
    }
    const checks = store.read((tx) => steps.map((s) => tx.checks.get(s.task.id)));
    const check = [...checks].reverse().find((c) => c?.state === 'failed') ?? checks[checks.length - 1];
    const usage = totalUsage(store.read((tx) => steps.flatMap((s) => tx.tickets.forTask(s.task.id))));
    const api = (this.options.api ?? githubApi)(forge.host, token);
    let created: { number: number; url: string; state: 'draft' | 'open' };
    try {
      created = await api.createPullRequest({
        owner: forge.owner,
        repo: forge.repo,
        title: titleOf(task, steps.length > 1 ? steps.map((s) => s.task) : []),
        body: pullRequestBody({
          title: task.title,
          prompt: task.prompt,
          check,
          usage,
          changes: isolation.changes,
          steps: steps.length > 1 ? steps.map((s) => stepName(s.task)) : undefined,
        }),
        head: isolation.branch,
        base,
        draft: this.settings.draft,
      });
    } catch (e) {
      if (e instanceof ForgeError && e.kind === 'auth') this.renew = true;
      throw new Error(forgeAdvice(e, where, `The branch ${isolation.branch} was pushed; try again to open the pull request.`));
    }
    await store.mutate((tx) =>
      tx.pullRequests.record({
        taskId,
        forge: forge.host.kind,
        apiUrl: forge.host.apiUrl,
        owner: forge.owner,
        repo: forge.repo,
        number: created.number,
        url: created.url,
        head: isolation.branch!,
        base,
        state: created.state,
      }),
    );
    // At once after the action: its checks and review as the forge has them now.
    this.options.track?.(this.follow.look(taskId));
    return { number: created.number, url: created.url };
  }

  /** The remote's forge repository, or why a pull request cannot go there. */
  private async forgeOf(repoTop: string): Promise<ForgeRepo> {
    const remote = this.settings.remote || 'origin';
    const url = (await runGit(['config', '--get', `remote.${remote}.url`], { cwd: repoTop, gitEnv: userConfigEnv() }))?.trim();
    if (!url)
      throw new Error(
        `This repository has no remote "${remote}": add one (git remote add ${remote} <url>) or name another in the setting offPeak.pullRequest.remote, then try again.`,
      );
    const found = forgeRepoOf(url, forgeHosts(this.settings.githubEnterpriseHosts).hosts);
    if ('refusal' in found) throw new Error(found.refusal);
    return found;
  }

  /** The branch the task started from: the folder's checked-out branch, which must hold the task's base commit. */
  private async baseBranch(repoTop: string, baseCommit: string, taskBranch: string): Promise<string> {
    const base = (await runGit(['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd: repoTop }))?.trim();
    if (!base || base === taskBranch)
      throw new Error(
        'The folder has no branch checked out (a detached HEAD): check out the branch the task started from, then try again.',
      );
    if ((await runGit(['merge-base', '--is-ancestor', baseCommit, base], { cwd: repoTop })) === null)
      throw new Error(
        `The folder's branch ${base} does not hold the commit the task started from: check out the branch it started from, then try again.`,
      );
    return base;
  }
}

/** The task's title; a chain's names every step. */
function titleOf(task: OffPeakTask, steps: readonly OffPeakTask[]): string {
  const title = steps.length > 1 ? steps.map((s) => stepName(s)).join(' → ') : stepName(task);
  return title.length > 200 ? `${title.slice(0, 199)}…` : title;
}

/** A forge's failure as the user reads it: what happened, what to do. */
export function forgeAdvice(e: unknown, where: string, state: string): string {
  if (!(e instanceof ForgeError)) return `${e instanceof Error ? e.message : String(e)} ${state}`;
  switch (e.kind) {
    case 'auth':
      return `${where} did not accept the sign-in (expired or revoked): sign in again and try again. ${state}`;
    case 'rate':
      return `${e.message} Try again after that. ${state}`;
    case 'offline':
      return `${e.message} Check the connection and try again. ${state}`;
    default:
      return `${e.message} ${state}`;
  }
}
