// What the panel shows and asks about where tasks work (docs/flows.md#isolation) and what they
// changed (docs/flows.md#review): each card's workplace, the form's "Run on its own branch"
// default, and the question before deleting a task whose branch holds work merged nowhere.
import fs from 'node:fs';
import path from 'node:path';
import { systemClock, type Clock } from '../core/clock';
import type { WorktreeFit } from '../service';
import { branchGroups, bringHomeRefusal, openSteps, stepName, type BranchStep, type BranchSteps } from '../service/branch-steps';
import { isTerminalStatus, type OffPeakTask } from '../core/types';
import type { WorkplaceView } from '../protocol/webview';
import type { IsolationMode, StoreReadTx, TaskCheck, TaskIsolation } from '../store';
import type { Confirmation } from './confirmations';

/** Whether the folder is inside a git working tree (a `.git` in it or a folder above): the form's default. */
export function looksLikeGitFolder(folder: string): boolean {
  for (let dir = path.resolve(folder); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, '.git'))) return true;
    if (path.dirname(dir) === dir) return false;
  }
}

/** The isolation a new task asks for: the form's choice, else the machine setting for a git folder. */
export function isolationFor(
  ownBranch: boolean | undefined,
  folder: string,
  setting: IsolationMode,
  isGit: (folder: string) => boolean = looksLikeGitFolder,
): IsolationMode {
  if (ownBranch !== undefined) return ownBranch ? 'worktree' : 'inPlace';
  return setting === 'worktree' && isGit(folder) ? 'worktree' : 'inPlace';
}

/** How long the form trusts what git said about a folder (a panel snapshot must not run git each time). */
const FOLDER_FIT_TTL_MS = 5_000;

/**
 * What the form offers for each open folder (docs/flows.md#isolation): "Run on its own branch"
 * checked by the machine setting, or off with why the folder cannot have a branch of its own
 * (not committed in its repository, ignored, no repository). Remembered for a few seconds.
 */
export class FolderFits {
  private readonly known = new Map<string, { at: number; fit: Promise<WorktreeFit> }>();

  constructor(
    private readonly fit: (folder: string) => Promise<WorktreeFit>,
    private readonly clock: Clock = systemClock,
  ) {}

  of(folder: string): Promise<WorktreeFit> {
    const now = this.clock.now();
    const known = this.known.get(folder);
    if (known && now - known.at < FOLDER_FIT_TTL_MS) return known.fit;
    const fit = this.fit(folder);
    this.known.set(folder, { at: now, fit });
    return fit;
  }

  async views(
    folders: readonly { name: string; path: string }[],
    setting: IsolationMode,
  ): Promise<{ name: string; path: string; ownBranch: boolean; noOwnBranch?: string }[]> {
    return Promise.all(
      folders.map(async ({ name, path: folder }) => {
        const fit = await this.of(folder);
        return fit.kind === 'fits'
          ? { name, path: folder, ownBranch: setting === 'worktree' }
          : { name, path: folder, ownBranch: false, noOwnBranch: fit.reason };
      }),
    );
  }

  /** The isolation of a task queued from the form; refused (with the way out) when it asks for a branch the folder cannot have. */
  async isolationOf(ownBranch: boolean | undefined, folder: string, setting: IsolationMode): Promise<IsolationMode> {
    const fit = await this.fit(folder);
    if (ownBranch && fit.kind === 'in-place')
      throw new Error(
        `This folder cannot run on its own branch: ${fit.reason}. Uncheck "Run on its own branch" to run the task in the folder itself.`,
      );
    return isolationFor(ownBranch, folder, setting, () => fit.kind === 'fits');
  }
}

/** Whether "Review changes" has something to open for this row. */
export function reviewable(task: Pick<OffPeakTask, 'status'>, isolation: TaskIsolation | undefined): boolean {
  if (!isolation || (isolation.changes?.length ?? 0) === 0 || task.status === 'queued') return false;
  return !(isolation.mode === 'worktree' && (isolation.missingAt !== null || isolation.broughtHome?.kind === 'discarded'));
}

/**
 * What the card offers for a task's branch: only where its worktree is there and holds changes
 * (a task that failed before it started, or changed nothing, has nothing to bring home). Merge
 * and Apply a finished task's branch not brought home yet; Discard it, or the worktree a merge
 * or apply left; Open the worktree while it is there. Steps that share one branch (`group`: a
 * chain continuing in its branch, follow-ups) are brought home as one, from the last step, once
 * every step has finished (docs/flows.md#bring-it-home).
 */
export function workplaceOffers(
  task: Pick<OffPeakTask, 'status' | 'id'>,
  row: TaskIsolation,
  group?: BranchSteps,
): { canMerge: boolean; canOpen: boolean; canDiscard: boolean } {
  const changed = (steps: readonly BranchStep[]) => steps.some((s) => (s.isolation.changes?.length ?? 0) > 0);
  const there =
    row.mode === 'worktree' &&
    row.worktreePath !== null &&
    row.branch !== null &&
    row.missingAt === null &&
    row.broughtHome?.kind !== 'discarded';
  const withChanges = there && (group ? changed(group.steps) : (row.changes?.length ?? 0) > 0);
  const ready = group ? bringHomeRefusal(group, task.id) === undefined : isTerminalStatus(task.status);
  const toMerge = group ? changed(openSteps(group)) : true;
  return {
    canMerge: withChanges && ready && toMerge && row.broughtHome === null,
    canOpen: withChanges,
    canDiscard: withChanges && ready,
  };
}

/** What Discard says it did: what was there and went. */
export function discardReport(removed: readonly string[]): string {
  if (removed.length === 0) return 'Nothing to remove: its worktree and branch were already gone.';
  const worktreeGone = !removed.some((r) => r.startsWith('the worktree '));
  return `Removed ${removed.join(' and ')}${worktreeGone ? ' (its worktree was already gone)' : ''}.`;
}

/** A failed check is said first in Merge's and Apply's confirmation (docs/flows.md#checks); nothing otherwise. */
function checkWarning(check: TaskCheck | undefined): string {
  if (check?.state === 'skipped')
    return `Its check "${check.command}" did not run: the agent changed what it runs, and it was not allowed to. `;
  if (check?.state !== 'failed') return '';
  return `Its check did not pass: "${check.command}" still failed after ${check.round} round${check.round === 1 ? '' : 's'}${check.exitCode === null ? '' : ` (exit code ${check.exitCode})`}. `;
}

const short = (title: string) => (title.length > 60 ? `${title.slice(0, 59)}…` : title);

/** What a question names: the task, or a chain's steps in order. */
function whatOf(task: OffPeakTask, steps: readonly BranchStep[]): string {
  if (steps.length <= 1) return `"${short(task.title || task.prompt.split('\n')[0])}"`;
  return `the chain ${steps.map((s) => `"${short(stepName(s.task))}"`).join(' → ')}`;
}

/** Each step of a chain with the files it changed, for the question's detail (nothing for one task). */
function stepsDetail(steps: readonly BranchStep[]): string {
  if (steps.length <= 1) return '';
  const files = (s: BranchStep) => s.isolation.changes?.map((c) => c.path) ?? [];
  const listed = steps.map((s) => {
    const f = files(s);
    const shown = f.length > 8 ? `${f.slice(0, 8).join(', ')} and ${f.length - 8} more` : f.join(', ');
    return `"${short(stepName(s.task))}": ${f.length > 0 ? shown : 'no files changed'}`;
  });
  return `Its ${steps.length} steps: ${listed.join('; ')}. `;
}

/** Merge asks: it makes a commit in the user's folder. `steps`: a chain's steps brought home with it. */
export function mergeConfirmation(
  task: OffPeakTask,
  isolation: TaskIsolation,
  check?: TaskCheck,
  steps: readonly BranchStep[] = [],
): Confirmation {
  const work =
    steps.length > 1
      ? `The work of every step is committed on ${isolation.branch} as one commit naming them`
      : `The task's work is committed on ${isolation.branch}`;
  return {
    message: `Merge the changes of ${whatOf(task, steps)} into the branch checked out in ${task.workspacePath}?`,
    detail: `${checkWarning(check)}${stepsDetail(steps)}${work} and merged with a merge commit. Files you have changed and not committed are never overwritten: the merge is refused if the task changed them too. A conflict opens the merge editor.`,
    action: 'Merge',
  };
}

/** Apply asks: it writes into the user's files. */
export function applyConfirmation(
  task: OffPeakTask,
  isolation: TaskIsolation,
  check?: TaskCheck,
  steps: readonly BranchStep[] = [],
): Confirmation {
  return {
    message: `Apply the changes of ${whatOf(task, steps)} to ${task.workspacePath} as uncommitted changes?`,
    detail: `${checkWarning(check)}${stepsDetail(steps)}The changes of ${isolation.branch} are written into your files; nothing is committed. Refused, changing nothing, if you have uncommitted changes to a file the task changed or the changes do not apply cleanly.`,
    action: 'Apply Changes',
  };
}

/**
 * Discard always asks: the branch and the worktree go, with whatever they hold. Once every step's
 * work was merged or applied (`broughtHome`), nothing is lost and it says so: only the worktree and
 * the branch go, the record stays (docs/flows.md#bring-it-home).
 */
export function discardConfirmation(
  task: OffPeakTask,
  isolation: TaskIsolation,
  plan: { steps?: readonly BranchStep[]; broughtHome?: 'merged' | 'applied' | null } = {},
): Confirmation {
  const steps = plan.steps ?? [];
  if (plan.broughtHome) {
    const merged = plan.broughtHome === 'merged';
    const kept = steps.length > 1 ? 'Every step keeps its' : 'The task keeps its';
    return {
      message: `Remove worktree and branch of ${whatOf(task, steps)} — already ${plan.broughtHome}?`,
      detail: `${
        merged
          ? "Its work is already merged into the folder's branch, so nothing of it is lost."
          : 'Its changes are already in your folder as uncommitted changes, which stay.'
      } Only the worktree ${isolation.worktreePath} and the branch ${isolation.branch} are removed. ${kept} ${merged ? 'Merged' : 'Applied'} record on the card and in History.`,
      action: 'Remove Worktree and Branch',
    };
  }
  const files = (steps.length > 1 ? steps.map((s) => s.isolation) : [isolation]).reduce((n, i) => n + (i.changes?.length ?? 0), 0);
  return {
    message: `Discard the changes of ${whatOf(task, steps)}?`,
    detail: `${stepsDetail(steps)}Its worktree and the branch ${isolation.branch} are removed${files > 0 ? `, with the ${files} changed file${files === 1 ? '' : 's'}` : ''}. Your own working copy is not touched. The task${steps.length > 1 ? 's stay' : ' stays'} in the list and in History. This cannot be undone.`,
    action: 'Discard Changes',
  };
}

/** Every task's workplace view (tasks created before isolation existed have none). */
export function workplaceViews(
  tx: Pick<StoreReadTx, 'isolation' | 'pullRequests'>,
  tasks: readonly OffPeakTask[],
): Map<string, WorkplaceView> {
  const rows = tx.isolation.all();
  const pulls = tx.pullRequests.all();
  const groups = branchGroups(tasks, rows);
  const views = new Map<string, WorkplaceView>();
  for (const task of tasks) {
    const row = rows.get(task.id);
    if (!row) continue;
    const group = row.mode === 'worktree' && row.worktreePath ? groups.get(row.worktreePath) : undefined;
    const last = group && group.steps.length > 1 ? group.steps[group.steps.length - 1]!.task : undefined;
    // Merged or applied, then Discard removed its worktree and branch: the record stays, the removal is said.
    const removedAfter = row.broughtHome !== null && row.broughtHome.kind !== 'discarded' && row.missingAt !== null;
    const offers = workplaceOffers(task, row, group);
    const pr = pulls.get(task.id);
    const holder = task.status === 'queued' && !task.claimRunning ? tx.isolation.inPlaceHolder(task.id, task.workspaceKey) : undefined;
    views.set(task.id, {
      mode: row.mode,
      branch: row.branch,
      worktreePath: row.worktreePath,
      note: row.note,
      missing: row.missingAt !== null && !removedAfter,
      removedAt: removedAfter ? row.missingAt : null,
      bringHomeWith: last && last.id !== task.id && row.broughtHome === null ? stepName(last) : null,
      waitingFor: holder ? holder.title || holder.id : null,
      changes: row.changes?.map(({ path: p, status, added, removed }) => ({ path: p, status, added, removed })) ?? null,
      reviewable: reviewable(task, row),
      discardedAt: row.broughtHome?.kind === 'discarded' ? row.broughtHome.at : null,
      mergedAt: row.broughtHome?.kind === 'merged' ? row.broughtHome.at : null,
      mergedIn: row.broughtHome?.kind === 'merged' && pr?.state === 'merged' ? pr.number : null,
      appliedAt: row.broughtHome?.kind === 'applied' ? row.broughtHome.at : null,
      ...offers,
      // One pull request at a time: another only once the last was closed unmerged (docs/flows.md#pull-requests).
      canOpenPullRequest: offers.canMerge && (!pr || pr.state === 'closed'),
      canFollowUpFromReview:
        isTerminalStatus(task.status) &&
        (pr?.state === 'open' || pr?.state === 'draft') &&
        (pr.checks === 'failing' || pr.review === 'changes_requested' || pr.review === 'commented'),
      pullRequest: pr
        ? { number: pr.number, url: pr.url, state: pr.state, checks: pr.checks, review: pr.review, waitUntil: pr.waitUntil }
        : null,
    });
  }
  return views;
}

/**
 * Deleting a finished task removes its worktree and branch: asked first when the branch holds
 * commits or changes merged nowhere (undefined: nothing to lose, no question).
 */
export function deleteWorktreeConfirmation(
  task: OffPeakTask,
  lost: { branch: string; work: string } | undefined,
): Confirmation | undefined {
  if (!lost) return undefined;
  const title = task.title || task.prompt.split('\n')[0];
  return {
    message: `Delete "${title.length > 60 ? `${title.slice(0, 59)}…` : title}" and its branch?`,
    detail: `Its worktree and the branch ${lost.branch} are removed with it, and they hold ${lost.work}. This cannot be undone.`,
    action: 'Delete Task and Branch',
  };
}

/** One file of a review: the file now (null: deleted) and the original to compare it with (`blob` null: none). */
export interface ReviewEntry {
  path: string;
  status: 'added' | 'modified' | 'deleted';
  /** Where the changed file is on disk (null: deleted). */
  modifiedPath: string | null;
  /**
   * The same, when it opens as a file (editable): in place only. A worktree's file is shown read-only
   * through the extension's own scheme: a file:// editor there makes VS Code's git extension keep the
   * worktree as a second repository in Source Control until a reload.
   */
  modifiedFile: string | null;
  originalBlob: string | null;
}

/**
 * What "Review changes" opens (docs/flows.md#review): a title and one entry per changed file
 * (or only `file`), or why there is nothing to open. A worktree task compares its worktree with
 * its base commit; an in-place task compares its folder with its first start.
 */
export function reviewPlan(
  task: OffPeakTask,
  isolation: TaskIsolation | undefined,
  file?: string,
): { title: string; entries: ReviewEntry[] } | { problem: string } {
  if (!isolation?.changes)
    return {
      problem: 'No changed files were recorded for this task (it has not finished a segment, or it was created before reviews existed).',
    };
  if (isolation.mode === 'worktree' && (isolation.missingAt !== null || !isolation.worktreePath)) {
    return {
      problem: `The task's worktree ${isolation.worktreePath ?? ''} is gone, so its changes cannot be shown; its branch ${isolation.branch ?? ''} may still hold them.`,
    };
  }
  const folder = isolation.mode === 'worktree' ? isolation.worktreePath! : task.workspacePath;
  const changes = isolation.changes.filter((c) => file === undefined || c.path === file);
  if (changes.length === 0) return { problem: file ? `${file} is not among the task's changed files.` : 'The task changed no files.' };
  const name = task.title || task.prompt.split('\n')[0].slice(0, 60);
  // In place the folder is compared with its first start: edits anyone made there meanwhile are in it too.
  const against =
    isolation.mode === 'worktree'
      ? `${isolation.branch} vs ${isolation.baseCommit?.slice(0, 8)}`
      : 'in place, vs the folder at its first start: your own edits since are included';
  return {
    title: `${name}: ${changes.length} changed file${changes.length === 1 ? '' : 's'} (${against})`,
    entries: changes.map((c) => {
      const modifiedPath = c.status === 'deleted' ? null : path.join(folder, ...c.path.split('/'));
      return {
        path: c.path,
        status: c.status,
        modifiedPath,
        modifiedFile: isolation.mode === 'worktree' ? null : modifiedPath,
        originalBlob: c.oldBlob ?? null,
      };
    }),
  };
}
