// The task form's fields as the webview sends them: one definition for a single task
// (`CreateTaskFormSchema`) and a schedule's saved task (src/protocol/schedules.ts).
import * as z from './zod';
import { PERMISSION_MODES } from '../core/types';
import { CHECK_COMMAND_MAX_CHARS } from './check-view';

export { CHECK_COMMAND_HINT } from './check-hint';

export const PermissionModeSchema = z.enum(PERMISSION_MODES);

export const TitleSchema = z.string().check(z.maxLength(200));
/** The longest prompt a task takes (the form counts down to it). */
export const PROMPT_MAX_CHARS = 100_000;
export const PromptSchema = z.string().check(z.minLength(1, 'The prompt is empty')).check(z.maxLength(PROMPT_MAX_CHARS));

/** What a task and a schedule's saved task both carry: the form without "not before" and "after". */
export const TASK_DRAFT_SHAPE = {
  title: TitleSchema,
  prompt: PromptSchema,
  workspacePath: z.string().check(z.minLength(1, 'Choose a workspace folder')).check(z.maxLength(4096)),
  permissionMode: PermissionModeSchema,
  model: z.nullable(z.string().check(z.maxLength(200))),
  thoughtLevel: z.nullable(z.string().check(z.maxLength(50))),
  /** "Run on its own branch" (docs/flows.md#isolation); absent: the `offPeak.isolation` setting for a git folder. */
  ownBranch: z.optional(z.boolean()),
  /** The check command (docs/flows.md#checks): what the user typed, run after each agent turn; absent or blank: none. */
  checkCommand: z.optional(z.string().check(z.maxLength(CHECK_COMMAND_MAX_CHARS))),
};

/** The create form as the webview sends it (the service's `CreateTaskInput` adds the workspace identity). */
export const CreateTaskFormSchema = z.strictObject({
  ...TASK_DRAFT_SHAPE,
  /** Take the ticket at this time (epoch ms), no earlier (docs/flows.md#schedules-and-chains); absent: now. */
  notBefore: z.optional(z.number().check(z.int()).check(z.nonnegative())),
  /** Taken only once this task completed, skipped if it fails; `continueInBranch`: in its worktree and branch (docs/flows.md#schedules-and-chains). */
  afterTaskId: z.optional(z.string().check(z.minLength(1)).check(z.maxLength(200))),
  continueInBranch: z.optional(z.boolean()),
});
export type CreateTaskForm = z.infer<typeof CreateTaskFormSchema>;
