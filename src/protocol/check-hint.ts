// The check field's hint (no zod here: the webview and the palette's command import it).
/**
 * What the check field says, in the form and the palette (docs/flows.md#checks): it runs outside the
 * permission mode, so it runs what the agent may have changed.
 */
export const CHECK_COMMAND_HINT =
  "Optional: runs in the task's folder after the agent's turn, outside the permission mode, so it runs code the agent may have changed (a test, a script, package.json); if it fails, the agent gets its output and tries again.";
