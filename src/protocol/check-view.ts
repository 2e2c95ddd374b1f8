// A task's check as the panel shows it (docs/flows.md#checks): the command whole, where its rounds
// stand, and the last run's exit code and output (one click away on the card and in History).
import * as z from './zod';

/** The longest check command the form takes. */
export const CHECK_COMMAND_MAX_CHARS = 2_000;

export const CheckViewSchema = z.object({
  command: z.string(),
  state: z.enum(['pending', 'checking', 'fixing', 'passed', 'failed', 'skipped']),
  round: z.number().check(z.int()).check(z.nonnegative()),
  exitCode: z.nullable(z.number().check(z.int())),
  output: z.nullable(z.string()),
  /** The check's files the agent changed since the task's base commit, flagged before it ran; absent: none. */
  agentChanged: z.optional(z.array(z.string())),
});
export type CheckView = z.infer<typeof CheckViewSchema>;
