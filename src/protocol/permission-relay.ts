// Claude Code's permission questions, relayed to the host that runs it: Claude Code (headless,
// `-p`) calls the `--permission-prompt-tool` of the small MCP server the extension ships
// (dist/permission-mcp.js), which posts the question to the segment's local ticket proxy and
// waits for the host's answer. One definition shared by the MCP server and the runtime.
import * as z from './zod';

/** Under the proxy's secret base URL; the Anthropic API paths start with /v1, so they never meet. */
export const PERMISSION_RELAY_PATH = '/offpeak/permission';

/** The relay's MCP server name and tool: Claude Code calls it as `mcp__<server>__<tool>`. */
export const PERMISSION_MCP_SERVER = 'offpeak';
export const PERMISSION_MCP_TOOL = 'permission_prompt';
export const PERMISSION_PROMPT_TOOL = `mcp__${PERMISSION_MCP_SERVER}__${PERMISSION_MCP_TOOL}`;

/** The MCP server reads where to ask from this variable (set in the 0600 MCP config, never argv). */
export const PERMISSION_URL_ENV = 'OFFPEAK_PERMISSION_URL';

/** What Claude Code passes to the permission-prompt tool (and the relay posts as is). */
export const PermissionRelayRequestSchema = z.object({
  tool_name: z.string().check(z.minLength(1)).check(z.maxLength(200)),
  input: z.record(z.string(), z.unknown()),
  tool_use_id: z.optional(z.string().check(z.maxLength(200))),
});
export type PermissionRelayRequest = z.infer<typeof PermissionRelayRequestSchema>;

/** The host's answer; `message` tells the model why it was denied. */
export const PermissionRelayAnswerSchema = z.object({
  decision: z.enum(['allow', 'deny']),
  message: z.optional(z.string().check(z.maxLength(2_000))),
});
export type PermissionRelayAnswer = z.infer<typeof PermissionRelayAnswerSchema>;

/**
 * Claude Code's expected result of a permission-prompt tool: one text block holding JSON; allow
 * runs the tool with `updatedInput`, deny makes its result an error carrying `message`.
 */
export function claudePermissionResult(request: PermissionRelayRequest, answer: PermissionRelayAnswer): string {
  return JSON.stringify(
    answer.decision === 'allow'
      ? { behavior: 'allow', updatedInput: request.input }
      : { behavior: 'deny', message: answer.message ?? 'The user denied this action.' },
  );
}
