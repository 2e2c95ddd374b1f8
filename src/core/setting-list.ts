// A setting that lists items separated by commas (or semicolons), such as the daily ranges of
// `offPeak.personal.hours` and `offPeak.notify.quietHours`: one way to split and check them.

/**
 * The trimmed, non-empty items of `text`, each passed to `check` (a parser that throws on a bad
 * item); its error's message is given to `fail`, which words the error the setting throws.
 */
export function checkedListItems(text: string, check: (item: string) => unknown, fail: (message: string) => Error): string[] {
  const items = text
    .split(/[,;]/)
    .map((s) => s.trim())
    .filter(Boolean);
  for (const item of items) {
    try {
      check(item);
    } catch (error) {
      throw fail((error as Error).message);
    }
  }
  return items;
}
