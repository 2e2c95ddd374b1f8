import type { Readable, Writable } from 'node:stream';
import { TypedLine, isYes } from '../core/typed-line';
import { terminalSafeText } from '../core/untrusted-text';
import { askInputDigest, indentedQuestionInput, questionHeadline } from '../core/ask-input';

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
  /**
   * JSON lines `{"ask_id":"…","decision":"allow"|"deny","input_sha256":"…"}` from the host that runs
   * the agent; `input_sha256` names the input the host showed (another input's answer is refused).
   */
  answers?: Readable;
}

interface Current {
  askId: string;
  /** sha256 of the input this question shows. */
  inputDigest: string;
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
  /** Interactive use (`readLine`): who waits for the next typed line. */
  private lineWaiter: ((line: string | null) => void) | null = null;
  private inputEnded = false;
  private readonly typed: TypedLine;

  constructor(private readonly options: PermissionAskerOptions) {
    this.typed = new TypedLine({
      active: () => this.current !== null || this.lineWaiter !== null,
      echo: (text) => {
        if (options.echo) options.output.write(text);
      },
      line: (text) => {
        if (this.current) return this.current.finish({ allowed: isYes(text), by: 'terminal' });
        const waiter = this.lineWaiter;
        this.lineWaiter = null;
        waiter?.(text);
      },
    });
    options.input.setEncoding?.('utf8');
    options.input.on('data', (chunk: string | Buffer) => this.typed.feed(chunk.toString()));
    options.input.on('end', () => {
      this.inputEnded = true;
      this.lineWaiter?.(null);
      this.lineWaiter = null;
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

  /**
   * Asks whether `tool` may run with `input` (its whole input as `renderToolInput` shows it): the
   * question's line drawn in the style no model or tool text can carry (`questionHeadline`), the
   * input under it with control sequences removed; a host answer counts only with the sha256 of
   * that input. With `parkMs` nobody answering parks the task (the host stops this agent).
   */
  async ask(askId: string, tool: string, input: string, timeoutMs: number, signal: AbortSignal, parkMs?: number): Promise<AskAnswer> {
    const { output } = this.options;
    const inputDigest = askInputDigest(input);
    const unanswered =
      parkMs !== undefined
        ? `the task waits for your answer without holding capacity after ${Math.round(parkMs / 1000)} s`
        : `denied automatically in ${Math.round(timeoutMs / 1000)} s`;
    output.write(
      `  ${questionHeadline(tool)}\n${indentedQuestionInput(terminalSafeText(input), '      ')}\n    [y/N] (${unanswered}; type y or n, then Enter) `,
    );
    const answer = await new Promise<AskAnswer>((resolve) => {
      const finish = (result: AskAnswer): void => {
        if (this.current !== current) return;
        this.current = null;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve(result);
      };
      const current: Current = { askId, inputDigest, finish };
      this.typed.reset();
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

  /**
   * Interactive use: the next line typed while no question is open (echoed as an answer is),
   * or null once the input ended. Keys typed before the call are dropped, as for a question.
   */
  readLine(): Promise<string | null> {
    if (this.inputEnded) return Promise.resolve(null);
    this.typed.reset();
    return new Promise((resolve) => (this.lineWaiter = resolve));
  }

  /** Stops reading (the agent is done): neither stream may keep the process alive. */
  close(): void {
    this.options.input.destroy?.();
    this.options.answers?.destroy?.();
  }

  private onHostAnswer(line: string): void {
    let message: { ask_id?: unknown; decision?: unknown; input_sha256?: unknown };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      return; // not ours; the terminal and the timeout still answer
    }
    if (!this.current || message.ask_id !== this.current.askId) return; // late: already answered
    if (message.decision !== 'allow' && message.decision !== 'deny') return;
    if (message.input_sha256 !== this.current.inputDigest) {
      // The host showed another input than this question's: its answer does not approve this one.
      this.options.output.write('\n    (an answer given for a different input was refused; the question is still open) ');
      return;
    }
    this.current.finish({ allowed: message.decision === 'allow', by: 'host' });
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
