/**
 * The checks of the "Queue Off-Peak Task" command, whose arguments may come from anyone who can
 * run a command (a keybinding, another extension, a command link): the arguments' shape and sizes,
 * the prompt typed in the palette, and the workspace folder, before anything takes a ticket.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as z from '../protocol/zod';
import { CreateTaskFormSchema, PROMPT_MAX_CHARS } from '../protocol/webview';
import type { PermissionMode } from '../core/types';
import { visibleControls } from '../core/ask-input';
import { plainNotificationText } from '../core/untrusted-text';
import type { Confirmation } from './confirmations';

/** Every field optional (the command asks for what is missing); nothing else accepted. */
export const CreateTaskCommandArgsSchema = z.partial(CreateTaskFormSchema);
export type CreateTaskCommandArgs = z.infer<typeof CreateTaskCommandArgsSchema>;

/** The longest prompt a task may have (the same limit as the panel's form). */
export const MAX_PROMPT_CHARS = PROMPT_MAX_CHARS;

export class CreateTaskArgsError extends Error {}

/** Parses the command's argument; undefined means "ask for everything". Throws a readable error. */
export function parseCreateTaskArgs(raw: unknown): CreateTaskCommandArgs {
  if (raw === undefined || raw === null) return {};
  const parsed = CreateTaskCommandArgsSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue.path.length ? `"${issue.path.join('.')}"` : 'the argument';
  throw new CreateTaskArgsError(`invalid task arguments: ${where}: ${issue.message}`);
}

/**
 * The longest prompt a command's argument may give: it is shown whole in a modal dialog before it
 * is queued, and a longer one would not fit (a cut could hide its tail, as a question's once did).
 */
export const GIVEN_PROMPT_MAX_CHARS = 4000;

/** What a given prompt would start: a new task, or a follow-up of the task titled `of`. */
export type GivenPromptContext =
  | { kind: 'create'; workspacePath?: string; permissionMode?: PermissionMode }
  | { kind: 'followUp'; of: string; permissionMode: PermissionMode };

/**
 * A prompt passed in a command's arguments (a keybinding, a command link, another extension) runs
 * unattended once queued, so the user sees it whole first, as a given check command is shown in
 * its box: true only when they chose to queue it. Throws for one too long to show whole.
 */
export async function confirmGivenPrompt(
  prompt: string,
  context: GivenPromptContext,
  confirm: (question: Confirmation) => Promise<boolean>,
): Promise<boolean> {
  if (prompt.length > GIVEN_PROMPT_MAX_CHARS)
    throw new CreateTaskArgsError(
      `the instructions given to the command are too long to be shown for confirmation (${prompt.length.toLocaleString('en-US')} characters; at most ${GIVEN_PROMPT_MAX_CHARS.toLocaleString('en-US')}): type or paste them in the panel's form`,
    );
  const mode = context.permissionMode ? ` (${context.permissionMode})` : '';
  const where =
    context.kind === 'followUp'
      ? `It continues the session of "${plainNotificationText(context.of, 80)}"${mode}.`
      : `It runs${context.workspacePath ? ` in ${context.workspacePath}` : ''}${mode}.`;
  return confirm({
    message:
      context.kind === 'followUp'
        ? 'Queue a follow-up with instructions a command gave?'
        : 'Queue an off-peak task with instructions a command gave?',
    detail: `A keybinding, a link or another extension asked for this; the agent will follow these instructions unattended. ${where}\n\n${visibleControls(prompt)}`,
    action: context.kind === 'followUp' ? 'Queue Follow-up' : 'Queue Task',
  });
}

/** The palette's input box check: a message for a prompt that cannot be queued, else undefined. */
export function promptProblem(prompt: string): string | undefined {
  if (prompt.trim() === '') return 'The instructions are empty';
  if (prompt.length > MAX_PROMPT_CHARS)
    return `The instructions are too long (${prompt.length.toLocaleString('en-US')} characters; at most ${MAX_PROMPT_CHARS.toLocaleString('en-US')})`;
  return undefined;
}

/**
 * A task's workspace must be an existing directory and one of the folders open in this window
 * (the agent gets to edit it unattended, so it has to be a folder the user opened).
 * Returns the matching open folder's path.
 */
export function checkWorkspaceFolder(given: string, openFolders: readonly string[], statDir: (p: string) => boolean = isDirectory): string {
  const resolved = path.resolve(given);
  const open = openFolders.find((folder) => samePath(path.resolve(folder), resolved));
  if (!open) throw new CreateTaskArgsError(`the workspace ${given} is not a folder open in this window`);
  if (!statDir(open)) throw new CreateTaskArgsError(`the workspace ${given} is not an existing directory`);
  return open;
}

function samePath(a: string, b: string): boolean {
  // Windows and macOS file systems are usually case-insensitive.
  return process.platform === 'linux' ? a === b : a.toLowerCase() === b.toLowerCase();
}

function isDirectory(p: string): boolean {
  return fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

/** The palette's permission step: what an unanswered question does under the settings in force. */
export function permissionPickDetail(policy: 'park' | 'deny', minutes: number): string {
  return policy === 'park'
    ? `Unanswered questions park the task after ${minutes} min: it waits for your answer without holding capacity.`
    : `Unanswered questions are denied after ${minutes} min, and the agent goes on without them.`;
}
