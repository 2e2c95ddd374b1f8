/**
 * An edit keeps the file's line endings (docs/user-guide.md#agent-runtime): models write `\n`, and a
 * Windows checkout's files end lines with `\r\n`, so a multi-line old_string never matched a CRLF
 * file and new text came in with LF lines among CRLF ones. A file whose lines mostly end with CRLF
 * gets the edit's text with CRLF; an LF file is left exactly as it was.
 */

export type LineEnding = '\n' | '\r\n';

/** The file's line ending: CRLF when most of its line ends are CRLF, else LF. */
export function lineEndingOf(text: string): LineEnding {
  const crlf = text.split('\r\n').length - 1;
  const lf = text.split('\n').length - 1 - crlf;
  return crlf > lf ? '\r\n' : '\n';
}

/** `text` with every line end (LF or CRLF) written as `ending`. */
export function withLineEnding(text: string, ending: LineEnding): string {
  return ending === '\n' ? text : text.replace(/\r?\n/g, ending);
}

export interface Replacement {
  /** How many times old_string occurs (as given, or with the file's line endings). */
  count: number;
  /** The file's text after replacing each occurrence. */
  result: string;
}

/**
 * Replaces `oldString` by `newString` in `text`, matching and writing in the file's line ending:
 * taken as given first (a model that sent CRLF, or an LF file), else with the file's endings.
 */
export function replaceKeepingLineEndings(text: string, oldString: string, newString: string): Replacement {
  const ending = lineEndingOf(text);
  const replacement = withLineEnding(newString, ending);
  for (const needle of [oldString, withLineEnding(oldString, ending)]) {
    const parts = text.split(needle);
    if (parts.length > 1) return { count: parts.length - 1, result: parts.join(replacement) };
  }
  return { count: 0, result: text };
}
