/**
 * The input of a permission question, shown whole wherever Allow can be pressed, and the digest
 * that binds an answer to it (docs/flows.md#what-a-question-shows). An agent approves a tool
 * call with its whole input (Claude Code runs `updatedInput`, the reference agent runs the tool
 * it asked about), so the user must see all of it: a shortened command once let a harmful tail
 * past the cut. Every answer carries the sha256 of the exact text that was shown, and an answer
 * whose digest differs from the question's is refused.
 */
import crypto from 'node:crypto';

/** The fields a tool's input names first (what the call acts on); the rest follow in their order. */
const PRIMARY_KEYS = ['command', 'file_path', 'path', 'pattern', 'url'];

/**
 * Makes every character that could hide or redraw text visible, keeping the text otherwise as is:
 * control characters (except newline and tab), DEL and C1 controls, bidirectional overrides,
 * zero-width characters and line/paragraph separators become `\u{…}`. Nothing is removed, so no
 * part of the input can be hidden.
 */
export function visibleControls(text: string): string {
  return text.replace(INVISIBLE_CONTROLS, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`);
}

/** Controls, zero-width and direction marks: what `visibleControls` shows as `\u{…}`. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const INVISIBLE_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ufeff]/g;

/** What stands for a newline and a tab inside a field, and what starts a field in a terminal. */
export const NEWLINE_MARK = '⏎';
export const TAB_MARK = '⇥';
export const FIELD_BOUNDARY = '│';

/**
 * A key or value as one line of a question, or a tool call's echo in a terminal: a newline is `⏎`,
 * a tab `⇥`, every other control character `\u{…}` (a carriage return included). A mark the text
 * holds itself is shown as `\u{…}` first, so a `⏎` always means a newline and no value can start a
 * line or a field.
 */
export function oneLineText(text: string): string {
  const marks = new RegExp(`[${NEWLINE_MARK}${TAB_MARK}${FIELD_BOUNDARY}]`, 'g');
  return visibleControls(
    text
      .replace(marks, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`)
      .replace(/\n/g, NEWLINE_MARK)
      .replace(/\t/g, TAB_MARK),
  );
}

/**
 * A tool call's whole input as the text a question shows: one `key: value` line per field (the
 * field it acts on first), string values verbatim but for their marks (`oneLineText`: a newline in a
 * value is `⏎`, never a line that could read as another field or as the question), other values
 * as JSON. Nothing is shortened; the only line breaks are the boundaries between fields.
 */
export function renderToolInput(input: unknown): string {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return visibleControls(JSON.stringify(input ?? null));
  const record = input as Record<string, unknown>;
  const keys = Object.keys(record);
  const ordered = [...PRIMARY_KEYS.filter((k) => keys.includes(k)), ...keys.filter((k) => !PRIMARY_KEYS.includes(k))];
  return ordered
    .map((key) => {
      const value = record[key];
      return `${oneLineText(key)}: ${oneLineText(typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)))}`;
    })
    .join('\n');
}

/**
 * The style of a question's first line in a terminal: inverse video. Model, tool and check text
 * reaches a terminal through `terminalSafeText`, which removes every escape sequence, so no line of
 * theirs can carry it; a forged question reads as plain text (docs/flows.md#terminal-text).
 */
export const QUESTION_STYLE_ON = '\x1b[7m';
export const QUESTION_STYLE_OFF = '\x1b[27m';

/** `? Allow <tool> with this input?` drawn as only the real question is; the tool's name on one line. */
export function questionHeadline(tool: string): string {
  return `${QUESTION_STYLE_ON}? Allow ${oneLineText(tool)} with this input?${QUESTION_STYLE_OFF}`;
}

/**
 * The input of a question in a terminal: each field on its own line, indented under the question
 * and opened by `│` (no value holds one), so the model's text never starts where ours does and a
 * line the terminal wraps never reads as a field of its own.
 */
export function indentedQuestionInput(input: string, indent: string): string {
  return input
    .split('\n')
    .map((line) => `${indent}${FIELD_BOUNDARY} ${line}`)
    .join('\n');
}

/** The digest an answer carries: sha256 (hex) of the exact input text that was shown. */
export function askInputDigest(shownInput: string): string {
  return crypto.createHash('sha256').update(shownInput, 'utf8').digest('hex');
}

/** Whether an answer's digest names this input (constant time; a malformed digest never matches). */
export function digestMatches(shownInput: string, digest: string | undefined | null): boolean {
  if (typeof digest !== 'string' || !/^[0-9a-f]{64}$/.test(digest)) return false;
  return crypto.timingSafeEqual(Buffer.from(askInputDigest(shownInput), 'hex'), Buffer.from(digest, 'hex'));
}

/** The longest input a notification shows in its text (and so may offer Allow for). */
export const NOTIFICATION_INPUT_MAX_CHARS = 300;
