import fs from 'node:fs';
import path from 'node:path';

/** Content blocks the agent stores; the Messages API shapes it sends and receives. */
export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };

export interface Message {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

type TranscriptLine =
  | { type: 'meta'; session_id: string; cwd: string; created_at: number }
  | { type: 'message'; at: number; message: Message }
  | { type: 'replace_last'; at: number; message: Message };

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export class SessionError extends Error {}

/**
 * A session is an append-only JSONL transcript `<dir>/<id>.jsonl`: one meta line, then one line
 * per message. Appends are synchronous so a SIGINT or a crash never leaves a half-recorded turn
 * except possibly a torn last line, which loading ignores.
 */
export class SessionTranscript {
  readonly messages: Message[] = [];

  private constructor(
    readonly id: string,
    readonly file: string,
  ) {}

  static create(dir: string, id: string, cwd: string, now = Date.now()): SessionTranscript {
    checkId(id);
    // Transcripts hold the task and everything the model read: the user's alone (0700 folder, 0600 file).
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.chmodSync(dir, 0o700);
    const file = path.join(dir, `${id}.jsonl`);
    const meta: TranscriptLine = { type: 'meta', session_id: id, cwd, created_at: now };
    try {
      fs.writeFileSync(file, JSON.stringify(meta) + '\n', { flag: 'wx', mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new SessionError(`session ${id} already exists; use --resume ${id}`);
      throw err;
    }
    return new SessionTranscript(id, file);
  }

  static load(dir: string, id: string): SessionTranscript {
    checkId(id);
    const file = path.join(dir, `${id}.jsonl`);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new SessionError(`no session found with id ${id} in ${dir}`);
      throw err;
    }
    // A crash mid-append leaves a torn last line: end it, so the next append starts a fresh line.
    if (text.length > 0 && !text.endsWith('\n')) fs.appendFileSync(file, '\n');
    const session = new SessionTranscript(id, file);
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      let parsed: TranscriptLine;
      try {
        parsed = JSON.parse(line) as TranscriptLine;
      } catch {
        continue; // a torn last line from a crash mid-append
      }
      if (parsed.type === 'message') session.messages.push(parsed.message);
      if (parsed.type === 'replace_last') session.messages.splice(-1, 1, parsed.message);
    }
    return session;
  }

  static exists(dir: string, id: string): boolean {
    return SESSION_ID.test(id) && fs.existsSync(path.join(dir, `${id}.jsonl`));
  }

  append(message: Message, now = Date.now()): void {
    const line: TranscriptLine = { type: 'message', at: now, message };
    fs.appendFileSync(this.file, JSON.stringify(line) + '\n');
    this.messages.push(message);
  }

  /**
   * Makes the conversation valid to send again after an interruption: every tool_use needs a
   * tool_result in the next user message, so tools that never ran get an "interrupted" result.
   */
  repairDanglingToolUses(): number {
    const last = this.messages[this.messages.length - 1];
    if (!last || last.role !== 'assistant') return 0;
    const pending = last.content.filter((b): b is Extract<ContentBlock, { type: 'tool_use' }> => b.type === 'tool_use');
    if (pending.length === 0) return 0;
    this.append({
      role: 'user',
      content: pending.map((b) => ({
        type: 'tool_result' as const,
        tool_use_id: b.id,
        content: 'The tool did not run: the session was interrupted before it could. Run it again if it is still needed.',
        is_error: true,
      })),
    });
    return pending.length;
  }

  /** Adds user text, merged into a trailing user message so roles keep alternating. */
  appendUserText(text: string): void {
    const last = this.messages[this.messages.length - 1];
    if (last && last.role === 'user') {
      const merged: Message = { role: 'user', content: [...last.content, { type: 'text', text }] };
      // Append-only: a replace_last line supersedes the previous message when loading.
      this.messages.pop();
      this.messages.push(merged);
      const line: TranscriptLine = { type: 'replace_last', at: Date.now(), message: merged };
      fs.appendFileSync(this.file, JSON.stringify(line) + '\n');
      return;
    }
    this.append({ role: 'user', content: [{ type: 'text', text }] });
  }
}

function checkId(id: string): void {
  if (!SESSION_ID.test(id)) throw new SessionError(`invalid session id ${JSON.stringify(id)}: use letters, digits, '.', '_' or '-'`);
}
