/**
 * One answer typed in a terminal whose keys arrive raw (a pseudoterminal forwards each key; Enter
 * is '\r', a real TTY sends whole lines): collects printable keys, handles Backspace, skips escape
 * sequences (arrow keys, focus reports), and hands over the line at Enter. Keys that arrive while
 * nothing is asked are dropped, so they never answer a later question.
 */
export class TypedLine {
  private line = '';
  private afterCr = false;

  constructor(
    private readonly handlers: {
      /** Whether a question is open now (keys count only then). */
      active(): boolean;
      echo(text: string): void;
      line(text: string): void;
    },
  ) {}

  /** A new question starts with an empty line. */
  reset(): void {
    this.line = '';
  }

  feed(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const ch = text[i];
      const wasCr = this.afterCr;
      this.afterCr = ch === '\r';
      if (!this.handlers.active()) continue;
      if (ch === '\n' && wasCr) continue; // the second half of \r\n
      if (ch === '\r' || ch === '\n') {
        const typed = this.line;
        this.line = '';
        this.handlers.line(typed);
      } else if (ch === '\x7f' || ch === '\b') {
        if (this.line) {
          this.line = this.line.slice(0, -1);
          this.handlers.echo('\b \b');
        }
      } else if (ch === '\x1b') {
        // eslint-disable-next-line no-control-regex -- matching control characters is the point
        const match = /^\x1b(\[[0-9;?]*[ -/]*[@-~]|O.|.)?/.exec(text.slice(i));
        i += (match?.[0].length ?? 1) - 1;
      } else if (ch >= ' ') {
        this.line += ch;
        this.handlers.echo(ch);
      }
    }
  }
}

/** "y" or "yes" (any case) allows; anything else, an empty line included, denies. */
export function isYes(line: string): boolean {
  return /^\s*y(es)?\s*$/i.test(line);
}
