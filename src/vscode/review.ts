// "Review changes" (docs/flows.md#review): a task's changes in VS Code's multi-file diff editor
// (`vscode.changes`), one file's in the diff editor. The originals are served read-only by a
// content provider that reads the blob the file had at the task's first start from the
// repository's objects with the hardened git (`git cat-file --batch`: no filter, no textconv).
// A worktree task's changed files are shown read-only too (`offpeak-task-copy:`): an editor on a file
// in the worktree makes VS Code's git extension keep the worktree as a second repository in Source
// Control (with a pending change) until a reload. An in-place task's files open as themselves.
import * as vscode from 'vscode';
import type { HostEngine } from '../engine/host-engine';
import { reviewPlan } from '../panel/workplace-panel';
import { Emitter } from '../core/event';

export const ORIGINAL_SCHEME = 'offpeak-original';
export const TASK_COPY_SCHEME = 'offpeak-task-copy';
const BLOB = /^[0-9a-f]{40,64}$/;

/** `offpeak-original:/<task id>/<path>?<blob>`; no blob: the file did not exist (or was not kept). */
function originalUri(taskId: string, file: string, blob: string | null): vscode.Uri {
  return vscode.Uri.from({ scheme: ORIGINAL_SCHEME, path: `/${encodeURIComponent(taskId)}/${file}`, query: blob ?? '' });
}

/** `offpeak-task-copy:/<task id>/<path>`: the file as the task's worktree has it now. */
function taskCopyUri(taskId: string, file: string): vscode.Uri {
  return vscode.Uri.from({ scheme: TASK_COPY_SCHEME, path: `/${encodeURIComponent(taskId)}/${file}` });
}

export class TaskCopies implements vscode.TextDocumentContentProvider {
  constructor(private readonly engine: () => HostEngine | undefined) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const [, id = '', ...rest] = uri.path.split('/');
    const taskId = decodeURIComponent(id);
    const isolation = this.engine()?.store.read((tx) => tx.isolation.get(taskId));
    if (isolation?.mode !== 'worktree' || !isolation.worktreePath || !isolation.changes) return '';
    // Loaded when a review first opens a file (dist/engine.js), not at activation.
    const { readWorktreeFile } = await import('../agent/workplace/task-changes');
    return readWorktreeFile(isolation.worktreePath, isolation.changes, rest.join('/'));
  }
}

export class TaskOriginals implements vscode.TextDocumentContentProvider {
  constructor(private readonly engine: () => HostEngine | undefined) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const taskId = decodeURIComponent(uri.path.split('/')[1] ?? '');
    const blob = uri.query;
    if (!BLOB.test(blob)) return '';
    const isolation = this.engine()?.store.read((tx) => tx.isolation.get(taskId));
    // Only a blob the task recorded as one of its originals is read.
    if (!isolation?.changes?.some((c) => c.oldBlob === blob)) return '';
    const { readBlobs } = await import('../agent/workplace/task-changes');
    const found = await readBlobs(isolation.repoPath, [blob]);
    return found.get(blob)?.toString('utf8') ?? '';
  }
}

const reviewOpened = new Emitter<string>();
/** A task's changes were opened for review in this window (the walkthrough's morning step). */
export const onDidOpenReview = reviewOpened.event;

export async function reviewTaskChanges(engine: HostEngine, taskId: string, file?: string): Promise<void> {
  const task = engine.service.getTask(taskId);
  if (!task) throw new Error('This task no longer exists.');
  const plan = reviewPlan(
    task,
    engine.store.read((tx) => tx.isolation.get(taskId)),
    file,
  );
  if ('problem' in plan) {
    void vscode.window.showInformationMessage(plan.problem);
    return;
  }
  const side = (e: (typeof plan.entries)[number]) => ({
    original: originalUri(taskId, e.path, e.originalBlob),
    // A deleted file is compared with nothing.
    modified: e.modifiedFile
      ? vscode.Uri.file(e.modifiedFile)
      : e.modifiedPath
        ? taskCopyUri(taskId, e.path)
        : originalUri(taskId, e.path, null),
  });
  if (plan.entries.length === 1) {
    const { original, modified } = side(plan.entries[0]);
    await vscode.commands.executeCommand('vscode.diff', original, modified, `${plan.entries[0].path} (${plan.title})`);
    reviewOpened.fire(taskId);
    return;
  }
  await vscode.commands.executeCommand(
    'vscode.changes',
    plan.title,
    plan.entries.map((e) => {
      const { original, modified } = side(e);
      return [modified, original, modified];
    }),
  );
  reviewOpened.fire(taskId);
}

export function registerReview(
  context: vscode.ExtensionContext,
  whenStarted: () => Promise<HostEngine | undefined>,
  engine: () => HostEngine | undefined,
): void {
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(ORIGINAL_SCHEME, new TaskOriginals(engine)),
    vscode.workspace.registerTextDocumentContentProvider(TASK_COPY_SCHEME, new TaskCopies(engine)),
    vscode.commands.registerCommand('offPeak.reviewChanges', async (taskId?: unknown, file?: unknown) => {
      try {
        const started = await whenStarted();
        if (!started) throw new Error('the extension has not started (see the "Off-Peak Tasks" output)');
        let id = typeof taskId === 'string' ? taskId : undefined;
        if (!id) {
          const rows = started.store.read((tx) => tx.isolation.all());
          const tasks = started.service.listTasks().filter((t) => (rows.get(t.id)?.changes?.length ?? 0) > 0);
          if (tasks.length === 0) {
            void vscode.window.showInformationMessage('No off-peak task has changes to review.');
            return;
          }
          const pick = await vscode.window.showQuickPick(
            tasks.map((t) => ({
              label: (t.title || t.prompt.split('\n')[0]).slice(0, 80),
              description: `${rows.get(t.id)!.changes!.length} changed file${rows.get(t.id)!.changes!.length === 1 ? '' : 's'}`,
              id: t.id,
            })),
            { placeHolder: 'Review the changes of which task?' },
          );
          id = pick?.id;
        }
        if (id) await reviewTaskChanges(started, id, typeof file === 'string' ? file : undefined);
      } catch (e) {
        void vscode.window.showErrorMessage(`Off-Peak Tasks: ${e instanceof Error ? e.message : String(e)}`);
      }
    }),
  );
}
