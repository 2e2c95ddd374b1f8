// The card follows its pull request (docs/flows.md#pull-requests): the lease holder looks at each
// open pull request at most once per PULL_REQUEST_LOOK_MS (and at once after an action), asking
// with the ETags of the last answers so an unchanged one costs a 304 and no rate limit. Merged on
// the forge ends the task's branch as Merge does (worktree and branch removed, "Merged in #N",
// told once); closed unmerged keeps both.
import { removeTaskWorktree } from '../agent/workplace/task-worktree';
import type { Clock } from '../core/clock';
import { Emitter, type Event } from '../core/event';
import type { PullRequestLook, StoreTx, TaskPullRequest, TaskStore } from '../store';
import { branchStepsOf, openSteps } from './branch-steps';
import { ForgeError, type ForgeApiFactory, type ForgeTokenProvider } from './forge/forge-api';
import { forgeHosts, type ForgeHost } from './forge/forge-remote';
import { githubApi } from './forge/github-client';

/** How often the lease holder looks at an open pull request: a few minutes, as the forge's own pages refresh. */
export const PULL_REQUEST_LOOK_MS = 3 * 60_000;

/** A look that found the pull request merged: recorded, the steps' work merged, the result new to the user again. */
export function recordMergedOnForge(tx: StoreTx, stepIds: readonly string[], look: PullRequestLook): void {
  for (const id of stepIds) {
    tx.pullRequests.recordLook(id, look);
    tx.isolation.recordBroughtHome(id, 'merged');
  }
  tx.outcomes.markUnseen(stepIds);
}

export interface PullRequestFollowOptions {
  store: TaskStore;
  clock: Clock;
  hosts: () => readonly string[];
  token?: ForgeTokenProvider;
  api?: ForgeApiFactory;
  log?: (line: string) => void;
}

export class PullRequestFollow {
  private readonly merged = new Emitter<{ taskId: string; number: number }>();
  /** Fires in the window that recorded a merge on the forge (the lease holder): tell the user once. */
  readonly onDidMerge: Event<{ taskId: string; number: number }> = this.merged.event;
  private readonly inFlight = new Map<string, Promise<void>>();
  /** When each task's pull request was last tried, answered or not: a forge that fails is tried again at the next interval. */
  private readonly triedAt = new Map<string, number>();

  constructor(private readonly options: PullRequestFollowOptions) {}

  /** The lease holder's tick: every open pull request not looked at for PULL_REQUEST_LOOK_MS. */
  async lookDue(): Promise<void> {
    const now = this.options.clock.now();
    const due = this.options.store.read((tx) =>
      [...tx.pullRequests.all().values()].filter((pr) => {
        const last = Math.max(pr.checkedAt ?? -Infinity, this.triedAt.get(pr.taskId) ?? -Infinity);
        return (pr.state === 'draft' || pr.state === 'open') && now - last >= PULL_REQUEST_LOOK_MS;
      }),
    );
    for (const pr of due) await this.look(pr.taskId);
  }

  /** Looks at one task's pull request now (after an action); one look per task at a time. Never throws. */
  look(taskId: string): Promise<void> {
    const running = this.inFlight.get(taskId);
    if (running) return running;
    const p = this.lookOnce(taskId)
      .catch((e) => this.options.log?.(`pull request of ${taskId}: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => this.inFlight.delete(taskId));
    this.inFlight.set(taskId, p);
    return p;
  }

  private async lookOnce(taskId: string): Promise<void> {
    const { store } = this.options;
    const pr = store.read((tx) => tx.pullRequests.get(taskId));
    if (!pr || pr.state === 'merged') return;
    // The forge's rate limit: not before its reset (another pull request's look may have met it).
    if (pr.waitUntil !== null && pr.waitUntil > this.options.clock.now()) return;
    this.triedAt.set(taskId, this.options.clock.now());
    const host = this.hostOf(pr);
    if (!host) return;
    // Not interactive: a look never asks the user to sign in; without a session it waits.
    const token = await this.options.token?.(host, { interactive: false });
    if (!token) return;
    let look: PullRequestLook;
    try {
      look = await (this.options.api ?? githubApi)(host, token).lookAt(pr);
    } catch (e) {
      if (e instanceof ForgeError && e.kind === 'rate' && e.resetAt !== undefined) {
        const until = e.resetAt;
        await store.mutate((tx) => tx.pullRequests.recordWait(pr.apiUrl, until));
      }
      throw e;
    }
    if (look.state === 'merged') return this.mergedOnForge(pr, look);
    await store.mutate((tx) => tx.pullRequests.recordLook(taskId, look));
  }

  /** The pull request's host, only while the settings still list it: no token goes to a host no longer trusted. */
  private hostOf(pr: TaskPullRequest): ForgeHost | undefined {
    return forgeHosts(this.options.hosts()).hosts.find((h) => h.apiUrl === pr.apiUrl);
  }

  /** Merged on the forge: as Merge, then Discard's removal (the branch's commits are on the forge). */
  private async mergedOnForge(pr: TaskPullRequest, look: PullRequestLook): Promise<void> {
    const { store } = this.options;
    const group = store.read((tx) => branchStepsOf(tx, pr.taskId));
    const stepIds = group ? openSteps(group).map((s) => s.task.id) : [pr.taskId];
    if (!stepIds.includes(pr.taskId)) stepIds.push(pr.taskId);
    const isolation = store.read((tx) => tx.isolation.get(pr.taskId));
    let removed = false;
    if (isolation?.worktreePath && isolation.branch && isolation.missingAt === null) {
      const { problems } = await removeTaskWorktree({
        repoPath: isolation.repoPath,
        worktreePath: isolation.worktreePath,
        branch: isolation.branch,
      });
      removed = problems.length === 0;
      if (!removed) this.options.log?.(`pull request #${pr.number} merged; could not remove ${problems.join(' and ')}`);
    }
    await store.mutate((tx) => {
      recordMergedOnForge(tx, stepIds, look);
      if (removed) for (const id of stepIds) tx.isolation.recordRemovedAfterBringHome(id);
    });
    this.merged.fire({ taskId: pr.taskId, number: pr.number });
  }

  /** Resolves when no look is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
  }
}
