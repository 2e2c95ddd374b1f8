// What queueing a task on its own branch says when the folder has uncommitted changes
// (docs/flows.md#isolation): the task starts from the last commit and does not see them. Asked
// before the task is queued, in the panel's form and the palette alike; pure, so the text is
// tested without VS Code.
import type { Confirmation } from './confirmations';

/** How many files the dialog names; the rest are counted. */
const NAMED_FILES = 8;

/** The question, or undefined when nothing is uncommitted (or git could not tell). */
export function uncommittedConfirmation(files: readonly string[] | null): (Confirmation & { alternative: string }) | undefined {
  if (!files || files.length === 0) return undefined;
  const n = files.length;
  const listed = files.slice(0, NAMED_FILES).map((f) => `  ${f}`);
  if (n > NAMED_FILES) listed.push(`  … and ${n - NAMED_FILES} more`);
  return {
    message: `The task starts from the last commit: it will not see ${n} uncommitted file${n === 1 ? '' : 's'}.`,
    detail: [
      `Its own branch starts from the folder's last commit, so ${n === 1 ? 'this change is' : 'these changes are'} not in its worktree:`,
      ...listed,
      'Commit first (Cancel, commit, then queue) for the task to see them, or run it in the folder itself.',
    ].join('\n'),
    action: 'Queue from Last Commit',
    alternative: 'Run in the Folder Instead',
  };
}
