/**
 * Machine-readable events the reference agent writes, one JSON object a line, to the file
 * descriptor named by `--events-fd` (the segment runner opens fd 3 for it). Keeping them off
 * stdout leaves the terminal transcript readable and the host free of output scraping.
 */
export type ReferenceAgentEvent =
  | { type: 'session'; session_id: string; resumed: boolean; messages: number }
  /**
   * `ask_id` names the question on the answer channel (`--answers-fd`); `input` is the tool call's
   * whole input as the terminal shows it (an answer must carry its sha256); `call` the tool's input
   * as the model gave it (the host names the call by it, so a stored decision answers the same call).
   */
  | { type: 'input_needed'; ask_id: string; tool: string; summary: string; input: string; deadline_at: number; call: unknown }
  | { type: 'input_answered'; ask_id: string; tool: string; allowed: boolean; by: 'terminal' | 'host' | 'timeout' | 'interrupt' }
  | { type: 'tool'; tool: string; summary: string; ok: boolean }
  | { type: 'result'; ok: true; text: string; turns: number }
  | { type: 'result'; ok: false; error: string; turns: number }
  | { type: 'interrupted'; session_id: string };

export const PERMISSION_MODES = ['plan', 'default', 'acceptEdits', 'bypassPermissions'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

export const THOUGHT_LEVELS = ['none', 'low', 'medium', 'high'] as const;
export type ThoughtLevel = (typeof THOUGHT_LEVELS)[number];

/** Exit codes of the reference agent CLI. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  interrupted: 130,
} as const;
