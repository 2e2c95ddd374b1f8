// The fix a failure names, as a notification button (docs/flows.md#notifications-and-unseen-marks): each failure
// whose reason names its fix (a command by its exact title, or a setting) offers that fix too, not
// only "Show Terminal". Read from the reason the product wrote (the model route's, the runtime's,
// Claude Code's reader's sentences); nothing in it is run: the button runs a fixed command.

export interface FailureFix {
  /** The button: the command's title as the palette shows it (without "Off-Peak: "), or the setting. */
  label: string;
  command: string;
  args?: unknown[];
}

/** The commands a failure can name, by their exact titles (package.json `contributes.commands`). */
export const FIX_COMMANDS = {
  'offPeak.setModelApiKey': 'Set Model API Key…',
  'offPeak.setApiKey': 'Set Gateway API Key…',
} as const;

/** Claude Code's login in a terminal: not contributed, the fix button of a missing login runs it. */
export const CLAUDE_LOGIN_COMMAND = 'offPeak.logInToClaudeCode';

export function failureFix(reason: string): FailureFix | undefined {
  // Claude Code without its login: run it once in a terminal (the other way, the model key, is named in the text).
  if (/^Claude Code is not logged in\b/.test(reason)) return { label: 'Log In to Claude Code', command: CLAUDE_LOGIN_COMMAND };
  for (const [command, title] of Object.entries(FIX_COMMANDS)) {
    if (reason.includes(`"Off-Peak: ${title}"`)) return { label: title, command };
  }
  if (/^no gateway API key is set\b/i.test(reason)) return { label: FIX_COMMANDS['offPeak.setApiKey'], command: 'offPeak.setApiKey' };
  const setting = /\bcheck (offPeak\.[\w.]+)/.exec(reason)?.[1];
  if (setting) return { label: `Open Setting ${setting}`, command: 'offPeak.openSetting', args: [setting] };
  return undefined;
}
