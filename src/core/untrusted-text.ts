/**
 * Text that a model, a tool or a repository controls (a permission-ask summary, a failure reason,
 * a task title from another extension) shown in a VS Code notification. Notifications render
 * `[label](command:…)` and `[label](https://…)` as links, and a command link runs a command with
 * arguments of the text's choosing; so untrusted text is flattened to one plain line in which
 * nothing can form a link.
 */
import stripAnsi from 'strip-ansi';
import { FIELD_BOUNDARY, visibleControls } from './ask-input';

const DEFAULT_MAX_CHARS = 400;

export function plainNotificationText(text: string, maxChars = DEFAULT_MAX_CHARS): string {
  const oneLine = text
    // Control characters and line breaks: one line, nothing that redraws or hides text.
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    // Bidirectional overrides and zero-width characters could make text read as something else.
    .replace(/[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, '')
    .replace(/\s{2,}/g, ' ')
    .trim();
  // A link needs `](` with nothing between; a space there leaves the text readable and inert.
  const inert = oneLine.replace(/\]\s*\(/g, '] (');
  return inert.length <= maxChars ? inert : inert.slice(0, maxChars - 1) + '…';
}

/**
 * Text a model or a tool controls, written to a task's terminal: escape sequences (colours, cursor
 * moves, line erases, titles) are removed, and every other control character but newline and tab
 * is made visible, so nothing can redraw or hide what the terminal shows (a question included).
 * A CR that ends a line (`\r\n`) is dropped; a lone CR is shown, not obeyed.
 */
export function terminalSafeText(text: string): string {
  return visibleControls(stripAnsi(text.replace(/\r\n/g, '\n')));
}

/** What starts a line of a question in a terminal: its `?`, and the `│` of its input's fields. */
const QUESTION_LINE_START = new Set(['?', '\uff1f', FIELD_BOUNDARY]);

/**
 * One stream of model or tool text on its way to a terminal (a transcript, a stderr, a check's
 * output): `terminalSafeText`, and a line whose first visible character is one a question's line
 * starts with (`?`, `│`) gets a `\` before it, so no line of theirs reads as the question
 * (docs/flows.md#terminal-text). It remembers across chunks whether a line has started, so a
 * streamed `?` in the middle of a sentence is left alone.
 */
export class TerminalLines {
  private atLineStart: boolean;

  /** `atLineStart`: whether the first text written starts a line (false: it continues one). */
  constructor(atLineStart = true) {
    this.atLineStart = atLineStart;
  }

  text(chunk: string): string {
    let out = '';
    for (const c of terminalSafeText(chunk)) {
      if (c === '\n') this.atLineStart = true;
      else if (this.atLineStart && c !== ' ' && c !== '\t') {
        this.atLineStart = false;
        if (QUESTION_LINE_START.has(c)) out += '\\';
      }
      out += c;
    }
    return out;
  }
}

/** One piece of model or tool text made inert (`TerminalLines`); `atLineStart` false when it continues a line. */
export function terminalSafeLines(text: string, atLineStart = true): string {
  return new TerminalLines(atLineStart).text(text);
}
