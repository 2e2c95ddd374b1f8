// DEMO MODEL — a scripted stand-in for a model API, used only by `--demo` when no real upstream
// URL and key are configured. Every reply says plainly that it comes from a demo model, so nobody
// mistakes it for real model output. It speaks the Anthropic Messages format (JSON and SSE).
//
// Script `work` (the default) drives the reference agent's real tools so a newcomer sees the
// product's point: it lists and reads the workspace, runs `node --version`, and keeps reviewing
// until the gateway's short demo segment ends (3102); after the agent resumes the same session
// it writes a file and finishes. Each reply waits `stepMs` so a person can follow. Script `echo`
// answers at once with the user's words. An agent without the reference tools gets the echo.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const DEMO_MODEL_NOTICE = "[Off-Peak demo model] This reply is scripted by the gateway's demo mode; no real model was called.";
const SHORT_NOTICE = '[Off-Peak demo model]';

export interface DemoModelOptions {
  script?: 'work' | 'echo';
  /** Pause before each reply of the `work` script. */
  stepMs?: number;
  /** The gateway's segment length: the first segment keeps reviewing at least this long, so it ends mid-task. */
  activeWindowMs?: number;
}

type Block = { type?: string; text?: string; content?: unknown; name?: string; input?: unknown };
type Message = { role?: string; content?: string | Block[] };
interface MessagesBody {
  model?: string;
  stream?: boolean;
  messages?: Message[];
  tools?: { name?: string }[];
}

/** One scripted reply: some text, and maybe one tool call. */
export interface DemoTurn {
  text: string;
  tool?: { name: string; input: Record<string, unknown> };
}

/** The longest the first segment reviews before the script finishes anyway (a long active window). */
const MAX_REVIEW_TURNS = 30;
const DEFAULT_FILE = 'off-peak-demo.md';

function blocksOf(message: Message | undefined): Block[] {
  if (!message) return [];
  return typeof message.content === 'string'
    ? [{ type: 'text', text: message.content }]
    : Array.isArray(message.content)
      ? message.content
      : [];
}

function textOf(block: Block): string {
  if (typeof block.text === 'string') return block.text;
  if (typeof block.content === 'string') return block.content;
  if (Array.isArray(block.content)) return (block.content as Block[]).map(textOf).join('\n');
  return '';
}

function lastUserText(body: MessagesBody): string {
  return blocksOf(body.messages?.[body.messages.length - 1])
    .map((b) => (b.type === 'text' ? b.text : b.type === 'tool_result' ? '(tool result)' : ''))
    .join(' ');
}

function echoReply(body: MessagesBody): string {
  const said = lastUserText(body).replace(/\s+/g, ' ').trim().slice(0, 200);
  return `${DEMO_MODEL_NOTICE} You said: "${said}". Configure --upstream-url and OFFPEAK_UPSTREAM_API_KEY to reach a real model.`;
}

/** A file name the task's prompt mentions (e.g. "create hello.txt"), kept to a plain name in the workspace root. */
export function demoTargetFile(prompt: string): string {
  const match = /(?:^|[\s"'`(])([A-Za-z0-9_][A-Za-z0-9_.-]{0,60}\.(?:txt|md|json|js|mjs|ts|py|html|css|csv|ya?ml|sh))\b/.exec(prompt);
  return match?.[1] ?? DEFAULT_FILE;
}

const REPEAT_TEXT = `${SHORT_NOTICE} Making the call you allowed again:`;

/**
 * The call the user allowed while the task was parked, made again first after the resume (as a
 * model told "ALLOWED: … make exactly this tool call again" does): the tool calls of the segment
 * that parked which the continuation prompt at `promptAt` names ALLOWED, one a turn, in order.
 */
function allowedRepeat(messages: Message[], promptAt: number): DemoTurn | null {
  if (promptAt < 0) return null;
  const prompt = blocksOf(messages[promptAt])
    .filter((b) => b.type === 'text')
    .map(textOf)
    .join('\n');
  const allowed = [...prompt.matchAll(/^- ALLOWED: ([^:\s]+):/gm)].map((m) => m[1]);
  if (allowed.length === 0) return null;
  const asked = messages
    .slice(0, promptAt)
    .filter((m) => m.role === 'assistant')
    .pop();
  const calls = blocksOf(asked).filter((b) => b.type === 'tool_use' && b.name !== undefined && allowed.includes(b.name));
  const repeated = messages.slice(promptAt).filter((m) => m.role === 'assistant').length;
  const call = calls[repeated];
  if (!call?.name) return null;
  return { text: `${REPEAT_TEXT} ${call.name}.`, tool: { name: call.name, input: (call.input ?? {}) as Record<string, unknown> } };
}

/**
 * The next reply of the `work` script, from the conversation so far (the demo model keeps no
 * state: a resumed session sends the whole conversation again). Null: not an agent with the
 * reference tools.
 */
export function demoTurn(body: MessagesBody, options: { stepMs: number; activeWindowMs: number }): DemoTurn | null {
  const tools = new Set((body.tools ?? []).map((t) => t.name));
  if (!tools.has('list_files') || !tools.has('read_file')) return null;
  const messages = body.messages ?? [];
  const prompt = blocksOf(messages[0])
    .filter((b) => b.type === 'text')
    .map(textOf)
    .join('\n');
  // A later user message with text (not only tool results) is the agent's continuation prompt.
  const isPrompt = (m: Message, i: number) => i > 0 && m.role === 'user' && blocksOf(m).some((b) => b.type === 'text' && textOf(b).trim());
  const resumedAt = messages.findIndex(isPrompt);
  const promptsAt = messages.flatMap((m, i) => (isPrompt(m, i) ? [i] : []));
  const repeat = allowedRepeat(messages, promptsAt[promptsAt.length - 1] ?? -1);
  if (repeat) return repeat;
  // The script's own turns: a repeat of an allowed call is not a step of it.
  const assistantTurns = (from: number) =>
    messages
      .slice(from)
      .filter((m) => m.role === 'assistant' && !blocksOf(m).some((b) => b.type === 'text' && textOf(b).startsWith(REPEAT_TEXT))).length;
  const reviewTurns = Math.min(MAX_REVIEW_TURNS, Math.ceil(options.activeWindowMs / Math.max(1, options.stepMs)) + 2);
  const done = assistantTurns(0);
  const results = messages.flatMap((m) =>
    m.role === 'user'
      ? blocksOf(m)
          .filter((b) => b.type === 'tool_result')
          .map(textOf)
      : [],
  );
  const target = demoTargetFile(prompt);

  if (resumedAt < 0 && done < reviewTurns) {
    if (done === 0)
      return {
        text: `${DEMO_MODEL_NOTICE} Scripted demo task: looking at the workspace first.`,
        tool: { name: 'list_files', input: { path: '.' } },
      };
    if (done === 1) {
      const listing = results[0] ?? '';
      const readme = /^(README(?:\.md)?)$/im.exec(listing)?.[1] ?? /\b(README\.md)\b/.exec(listing)?.[1];
      if (readme) return { text: `${SHORT_NOTICE} Reading ${readme}.`, tool: { name: 'read_file', input: { path: readme } } };
      return {
        text: `${SHORT_NOTICE} No README here; looking one level deeper.`,
        tool: { name: 'list_files', input: { path: '.', recursive: true } },
      };
    }
    if (done === 2 && tools.has('run_command'))
      return { text: `${SHORT_NOTICE} Running a harmless command.`, tool: { name: 'run_command', input: { command: 'node --version' } } };
    return {
      text: `${SHORT_NOTICE} Still reviewing. (This demo's segments are short on purpose: this one ends soon, and the task resumes the same session with a new ticket.)`,
      tool: { name: 'list_files', input: { path: '.' } },
    };
  }

  // Finishing: after the resume (or after a long review when no segment ended).
  const step = assistantTurns(resumedAt >= 0 ? resumedAt : 0) - (resumedAt >= 0 ? 0 : reviewTurns);
  const resumedNote = resumedAt >= 0 ? 'Resumed the same session after the segment ended. ' : '';
  if (!tools.has('write_file')) {
    return {
      text: `${SHORT_NOTICE} ${resumedNote}This task may not write files (plan mode), so the demo ends here: it would have written ${target}.`,
    };
  }
  const nodeVersion = results.map((r) => /\bv\d+\.\d+\.\d+\b/.exec(r)?.[0]).find(Boolean);
  if (step === 0) {
    const content = [
      'Hello from Off-Peak Tasks!',
      '',
      "This file was written by the reference agent, driven by the gateway's DEMO MODEL (a script; no real model was called).",
      `Task: ${prompt.split('\n')[0].slice(0, 200)}`,
      ...(nodeVersion ? [`node --version said: ${nodeVersion}`] : []),
      '',
    ].join('\n');
    return { text: `${SHORT_NOTICE} ${resumedNote}Writing ${target}.`, tool: { name: 'write_file', input: { path: target, content } } };
  }
  if (step === 1) return { text: `${SHORT_NOTICE} Checking the result.`, tool: { name: 'read_file', input: { path: target } } };
  return {
    text: `${SHORT_NOTICE} Done: wrote ${target}. This was a scripted demo; with a real model configured (--upstream-url and OFFPEAK_UPSTREAM_API_KEY), the agent does the task you describe.`,
  };
}

let sequence = 0;
const id = (prefix: string) => `${prefix}_demo${Date.now().toString(36)}${(sequence++).toString(36)}`;

function sse(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

/**
 * Answers with `turn` after `delayMs`. A streamed answer starts at once (headers and
 * message_start, as a real model's does) and its content follows after the delay.
 */
function reply(res: http.ServerResponse, body: MessagesBody, rawLength: number, turn: DemoTurn, delayMs = 0): void {
  const model = body.model ?? 'offpeak-demo-model';
  const content: Record<string, unknown>[] = [{ type: 'text', text: turn.text }];
  if (turn.tool) content.push({ type: 'tool_use', id: id('toolu'), name: turn.tool.name, input: turn.tool.input });
  const stopReason = turn.tool ? 'tool_use' : 'end_turn';
  const usage = { input_tokens: Math.ceil(rawLength / 4), output_tokens: Math.ceil(JSON.stringify(content).length / 4) };
  const message = {
    id: id('msg'),
    type: 'message',
    role: 'assistant',
    model,
    content: [] as unknown[],
    stop_reason: null as string | null,
    stop_sequence: null,
    usage,
  };
  const later = (send: () => void) => {
    const timer = setTimeout(() => {
      if (!res.destroyed) send(); // else the agent stopped waiting (e.g. its segment ended)
    }, delayMs);
    res.on('close', () => clearTimeout(timer));
  };
  if (!body.stream) {
    later(() => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-offpeak-demo-model': '1' });
      res.end(JSON.stringify({ ...message, content, stop_reason: stopReason }));
    });
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-offpeak-demo-model': '1' });
  res.write(sse('message_start', { message: { ...message, usage: { ...usage, output_tokens: 1 } } }));
  later(() => {
    content.forEach((block, index) => {
      if (block.type === 'text') {
        res.write(sse('content_block_start', { index, content_block: { type: 'text', text: '' } }));
        for (const piece of (block.text as string).match(/.{1,60}/gs) ?? [])
          res.write(sse('content_block_delta', { index, delta: { type: 'text_delta', text: piece } }));
      } else {
        res.write(sse('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }));
        res.write(sse('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }));
      }
      res.write(sse('content_block_stop', { index }));
    });
    res.write(
      sse('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }),
    );
    res.end(sse('message_stop', {}));
  });
}

function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string, options: Required<DemoModelOptions>): void {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'HEAD' || req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(req.method === 'GET' ? 'Off-Peak demo model\n' : undefined);
    return;
  }
  let body: MessagesBody = {};
  try {
    body = raw ? (JSON.parse(raw) as MessagesBody) : {};
  } catch {
    sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'demo model: body is not JSON' } });
    return;
  }
  if (req.method === 'POST' && path.endsWith('/v1/messages/count_tokens')) {
    sendJson(res, 200, { input_tokens: Math.max(1, Math.ceil(raw.length / 4)) });
    return;
  }
  if (!(req.method === 'POST' && path.endsWith('/v1/messages'))) {
    sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `demo model: no route ${req.method} ${path}` } });
    return;
  }
  const turn = options.script === 'work' ? demoTurn(body, options) : null;
  if (turn) reply(res, body, raw.length, turn, options.stepMs);
  else reply(res, body, raw.length, { text: echoReply(body) });
}

/** Starts the demo model on a loopback port; the gateway forwards to it like to any upstream. */
export async function startDemoModel(options: DemoModelOptions = {}): Promise<{ url: string; close(): Promise<void> }> {
  const resolved: Required<DemoModelOptions> = {
    script: options.script ?? 'work',
    stepMs: options.stepMs ?? 5_000,
    activeWindowMs: options.activeWindowMs ?? 25_000,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8'), resolved));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
