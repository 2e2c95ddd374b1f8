import type { Readable, Writable } from 'node:stream';

export type AskAnswer = { allowed: boolean; by: 'user' | 'timeout' | 'interrupt' };

/**
 * Asks yes/no questions on the terminal. Input may come from a real TTY or from a
 * pseudoterminal that forwards raw keystrokes (Enter arrives as '\r'), so lines end at \r or \n.
 * An unanswered question is denied after `timeoutMs`, so an unattended night run goes on.
 */
export class TerminalAsker {
  private buffered = '';
  private waiter: ((line: string) => void) | null = null;
  private attached = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
  ) {}

  private attach(): void {
    if (this.attached) return;
    this.attached = true;
    this.input.setEncoding?.('utf8');
    this.input.on('data', (chunk: string | Buffer) => {
      this.buffered += chunk.toString();
      const match = /\r\n|\r|\n/.exec(this.buffered);
      if (!match) return;
      const line = this.buffered.slice(0, match.index);
      this.buffered = this.buffered.slice(match.index + match[0].length);
      const waiter = this.waiter;
      this.waiter = null;
      waiter?.(line);
    });
    this.input.on('end', () => {
      const waiter = this.waiter;
      this.waiter = null;
      waiter?.('');
    });
  }

  async ask(question: string, timeoutMs: number, signal: AbortSignal): Promise<AskAnswer> {
    this.attach();
    this.buffered = ''; // keystrokes typed before the question are not an answer to it
    this.output.write(`${question} [y/N] (denied automatically in ${Math.round(timeoutMs / 1000)} s) `);
    const answer = await new Promise<AskAnswer>((resolve) => {
      const finish = (result: AskAnswer): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.waiter = null;
        resolve(result);
      };
      const timer = setTimeout(() => finish({ allowed: false, by: 'timeout' }), timeoutMs);
      const onAbort = (): void => finish({ allowed: false, by: 'interrupt' });
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiter = (line) => finish({ allowed: /^\s*y(es)?\s*$/i.test(line), by: 'user' });
      this.input.resume();
    });
    this.input.pause();
    this.output.write(answer.by === 'timeout' ? '\n(no answer: denied)\n' : answer.by === 'interrupt' ? '\n' : answer.allowed ? '(allowed)\n' : '(denied)\n');
    return answer;
  }
}
