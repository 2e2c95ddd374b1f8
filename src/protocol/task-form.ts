// The task form's fields as the webview sends them: one definition for a single task
// (`CreateTaskFormSchema`) and a schedule's saved task (src/protocol/schedules.ts).
import { z } from 'zod';
import { PERMISSION_MODES } from '../core/types';
import { CHECK_COMMAND_MAX_CHARS } from './check-view';

export { CHECK_COMMAND_HINT } from './check-hint';

export const PermissionModeSchema = z.enum(PERMISSION_MODES);

export const TitleSchema = z.string().max(200);
/** The longest prompt a task takes (the form counts down to it). */
export const PROMPT_MAX_CHARS = 100_000;
export const PromptSchema = z.string().min(1, 'The prompt is empty').max(PROMPT_MAX_CHARS);

/** What a task and a schedule's saved task both carry: the form without "not before" and "after". */
export const TASK_DRAFT_SHAPE = {
  title: TitleSchema,
  prompt: PromptSchema,
  workspacePath: z.string().min(1, 'Choose a workspace folder').max(4096),
  permissionMode: PermissionModeSchema,
  model: z.string().max(200).nullable(),
  thoughtLevel: z.string().max(50).nullable(),
  /** "Run on its own branch" (docs/flows.md#isolation); absent: the `offPeak.isolation` setting for a git folder. */
  ownBranch: z.boolean().optional(),
  /** The check command (docs/flows.md#checks): what the user typed, run after each agent turn; absent or blank: none. */
  checkCommand: z.string().max(CHECK_COMMAND_MAX_CHARS).optional(),
};

/** The create form as the webview sends it (the service's `CreateTaskInput` adds the workspace identity). */
export const CreateTaskFormSchema = z
  .object({
    ...TASK_DRAFT_SHAPE,
    /** Take the ticket at this time (epoch ms), no earlier (docs/flows.md#schedules-and-chains); absent: now. */
    notBefore: z.number().int().nonnegative().optional(),
    /** Taken only once this task completed, skipped if it fails; `continueInBranch`: in its worktree and branch (docs/flows.md#schedules-and-chains). */
    afterTaskId: z.string().min(1).max(200).optional(),
    continueInBranch: z.boolean().optional(),
  })
  .strict();
export type CreateTaskForm = z.infer<typeof CreateTaskFormSchema>;
