import type { Readable, Writable } from 'node:stream';

/** How an ask ended: typed in the terminal, answered by the host on the answer channel, timed out, or interrupted. */
export type AskAnswer = { allowed: boolean; by: 'terminal' | 'host' | 'timeout' | 'interrupt' };

export interface PermissionAskerOptions {
  /** Keystrokes: a real TTY (cooked lines) or a pseudoterminal forwarding raw keys (Enter is '\r'). */
  input: Readable;
  output: Writable;
  /**
   * Echo typed answers: a pseudoterminal that forwards raw keys shows nothing by itself (a real
   * TTY in cooked mode echoes on its own).
   */
  echo: boolean;
  /** JSON lines `{"ask_id":"…","decision":"allow"|"deny"}` from the host that runs the agent. */
  answers?: Readable;
}

interface Current {
  askId: string;
  finish(answer: AskAnswer): void;
}

/**
 * Asks yes/no permission questions. Input is read all the time and dropped while nothing is
 * asked, so keys typed before a question never answer it; while a question is open, typed keys
 * are echoed and Backspace works. The host may answer the same question on its answer channel;
 * the first answer to arrive wins and a later one is ignored. An unanswered question is denied
 * after its timeout, so an unattended night run goes on.
 */
export class PermissionAsker {
  private current: Current | null = null;
  private line = '';
  private afterCr = false;
  private inputEnded = false;

  constructor(private readonly options: PermissionAskerOptions) {
    options.input.setEncoding?.('utf8');
    options.input.on('data', (chunk: string | Buffer) => this.onKeys(chunk.toString()));
    options.input.on('end', () => {
      this.inputEnded = true;
      // Nobody can type an answer any more; without a host channel nobody can answer at all.
      if (!options.answers) this.current?.finish({ allowed: false, by: 'terminal' });
    });
    options.input.on('error', () => undefined);
    if (options.answers) {
      let pending = '';
      options.answers.setEncoding?.('utf8');
      options.answers.on('data', (chunk: string | Buffer) => {
        pending += chunk.toString();
        let nl: number;
        while ((nl = pending.indexOf('\n')) >= 0) {
          this.onHostAnswer(pending.slice(0, nl));
          pending = pending.slice(nl + 1);
        }
      });
      options.answers.on('error', () => undefined);
    }
  }

  async ask(askId: string, question: string, timeoutMs: number, signal: AbortSignal): Promise<AskAnswer> {
    const { output } = this.options;
    output.write(`${question} [y/N] (denied automatically in ${Math.round(timeoutMs / 1000)} s) `);
    const answer = await new Promise<AskAnswer>((resolve) => {
      const finish = (result: AskAnswer): void => {
        if (this.current !== current) return;
        this.current = null;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve(result);
      };
      const current: Current = { askId, finish };
      this.line = '';
      this.current = current;
      const timer = setTimeout(() => finish({ allowed: false, by: 'timeout' }), timeoutMs);
      const onAbort = (): void => finish({ allowed: false, by: 'interrupt' });
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      if (this.inputEnded && !this.options.answers) finish({ allowed: false, by: 'terminal' });
    });
    // A TTY echoed the Enter itself; a pseudoterminal showed only what we echoed.
    output.write((answer.by === 'terminal' && !this.options.echo ? '' : '\n') + answerText(answer));
    return answer;
  }

  /** Stops reading (the agent is done): neither stream may keep the process alive. */
  close(): void {
    this.options.input.destroy?.();
    this.options.answers?.destroy?.();
  }

  private onKeys(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const ch = text[i];
      const wasCr = this.afterCr;
      this.afterCr = ch === '\r';
      if (!this.current) continue; // nothing asked: keys typed now answer nothing
      if (ch === '\n' && wasCr) continue; // the second half of \r\n
      if (ch === '\r' || ch === '\n') {
        const typed = this.line;
        this.line = '';
        this.current.finish({ allowed: /^\s*y(es)?\s*$/i.test(typed), by: 'terminal' });
      } else if (ch === '\x7f' || ch === '\b') {
        if (this.line) {
          this.line = this.line.slice(0, -1);
          this.echo('\b \b');
        }
      } else if (ch === '\x1b') {
        // An escape sequence (arrow keys, focus reports): skip it whole, it is not an answer.
        // eslint-disable-next-line no-control-regex -- matching control characters is the point
        const match = /^\x1b(\[[0-9;?]*[ -/]*[@-~]|O.|.)?/.exec(text.slice(i));
        i += (match?.[0].length ?? 1) - 1;
      } else if (ch >= ' ') {
        this.line += ch;
        this.echo(ch);
      }
    }
  }

  private onHostAnswer(line: string): void {
    let message: { ask_id?: unknown; decision?: unknown };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      return; // not ours; the terminal and the timeout still answer
    }
    if (!this.current || message.ask_id !== this.current.askId) return; // late: already answered
    if (message.decision !== 'allow' && message.decision !== 'deny') return;
    this.current.finish({ allowed: message.decision === 'allow', by: 'host' });
  }

  private echo(text: string): void {
    if (this.options.echo) this.options.output.write(text);
  }
}

function answerText(answer: AskAnswer): string {
  const verdict = answer.allowed ? 'allowed' : 'denied';
  switch (answer.by) {
    case 'terminal':
      return `    → ${verdict}\n`;
    case 'host':
      return `    → ${verdict} (answered outside this terminal)\n`;
    case 'timeout':
      return '    → no answer in time: denied\n';
    case 'interrupt':
      return '';
  }
}
