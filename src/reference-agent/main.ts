// The bundled reference agent: a small, real coding agent CLI speaking the Anthropic Messages API
// (streaming) against any compatible endpoint, with workspace file tools, a shell tool,
// permission modes and resumable JSONL sessions. Bundled to dist/reference-agent.js.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { printTranscript, runAgent } from './agent';
import { EXIT, PERMISSION_MODES, THOUGHT_LEVELS, type PermissionMode, type ReferenceAgentEvent, type ThoughtLevel } from './events';
import { PermissionAsker } from './permission-prompt';
import { SessionError, SessionTranscript } from './session';
import { terminalSafeLines } from '../core/untrusted-text';
import { isSegmentEndError, segmentEndedText } from '../core/segment-end';

const USAGE = `usage:
  reference-agent (--session-id <id> | --resume <id>) [-p <prompt> | --prompt-file <file>] [options]
  reference-agent --resume <id> --interactive [options]
  reference-agent transcript <id> [--sessions-dir <dir>]

options:
  --cwd <dir>                 workspace (default: current directory)
  --permission-mode <mode>    plan | default | acceptEdits | bypassPermissions (default: default)
  --model <id>                model id sent as given (default: $ANTHROPIC_MODEL or claude-sonnet-4-5)
  --thought-level <level>     none | low | medium | high (default: none)
  --sessions-dir <dir>        where sessions live (default: $OFFPEAK_AGENT_SESSIONS_DIR or ~/.offpeak/reference-agent/sessions)
  --ask-timeout-ms <ms>       deny an unanswered permission prompt after this long (default: 300000)
  --ask-park-ms <ms>          the host parks the task on an unanswered prompt after this long (its
                              prompt says so; --ask-timeout-ms stays the agent's own safety deadline)
  --command-timeout-ms <ms>   default run_command timeout (default: 120000)
  --max-turns <n>             stop after n model turns (default: 200)
  --max-retries <n>           retries of a failed model request (default: 4)
  --events-fd <fd>            write machine-readable JSON events to this file descriptor
  --interactive               continue the session with the user: read an instruction line, run it to
                              the end of the model's turn, repeat; Ctrl+C stops a turn, Ctrl+D or
                              "exit" ends (questions are answered in this terminal)
  --answers-fd <fd>           read the host's answers to permission questions from this file descriptor
                              (JSON lines {"ask_id":"<id of input_needed>","decision":"allow"|"deny"});
                              the first answer, typed or from the host, wins

environment:
  OFFPEAK_AGENT_PARENT_PID    stop (resumably) when this process is no longer our parent
  ANTHROPIC_BASE_URL          the Messages API base (POST <base>/v1/messages); required
  ANTHROPIC_AUTH_TOKEN        sent as Authorization: Bearer
  ANTHROPIC_API_KEY           sent as x-api-key

exit codes: 0 finished, 1 failed, 2 usage error, 130 interrupted (resume with --resume <id>)`;

class UsageError extends Error {}

let asker: PermissionAsker | undefined;

function positiveInt(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return n;
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], name: string, fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value))
    throw new UsageError(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  return value as T;
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      prompt: { type: 'string', short: 'p' },
      'prompt-file': { type: 'string' },
      'session-id': { type: 'string' },
      resume: { type: 'string' },
      cwd: { type: 'string' },
      'permission-mode': { type: 'string' },
      model: { type: 'string' },
      'thought-level': { type: 'string' },
      'sessions-dir': { type: 'string' },
      'ask-timeout-ms': { type: 'string' },
      'ask-park-ms': { type: 'string' },
      'command-timeout-ms': { type: 'string' },
      'max-turns': { type: 'string' },
      'max-retries': { type: 'string' },
      'events-fd': { type: 'string' },
      'answers-fd': { type: 'string' },
      interactive: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return EXIT.ok;
  }
  const sessionsDir = path.resolve(
    values['sessions-dir'] ?? process.env.OFFPEAK_AGENT_SESSIONS_DIR ?? path.join(os.homedir(), '.offpeak', 'reference-agent', 'sessions'),
  );
  if (positionals[0] === 'transcript') {
    if (!positionals[1]) throw new UsageError('transcript needs a session id');
    printTranscript(SessionTranscript.load(sessionsDir, positionals[1]), process.stdout);
    return EXIT.ok;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  if (!values['session-id'] === !values.resume)
    throw new UsageError('give exactly one of --session-id <id> (new session) or --resume <id>');
  const resume = values.resume !== undefined;
  if (values.interactive && (!resume || values.prompt !== undefined || values['prompt-file'] !== undefined))
    throw new UsageError('--interactive continues a session: give --resume <id> and no prompt');
  const prompt = values['prompt-file'] !== undefined ? fs.readFileSync(values['prompt-file'], 'utf8') : (values.prompt ?? '');
  if (!resume && !prompt.trim()) throw new UsageError('a new session needs a prompt (-p or --prompt-file)');
  const baseUrl = process.env.ANTHROPIC_BASE_URL;
  if (!baseUrl) throw new UsageError('ANTHROPIC_BASE_URL is not set');
  const workspace = path.resolve(values.cwd ?? process.cwd());
  if (!fs.statSync(workspace, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`workspace ${workspace} is not a directory`);

  const eventsFd = values['events-fd'] !== undefined ? positiveInt(values['events-fd'], '--events-fd', 0) : null;
  const emit = (event: ReferenceAgentEvent): void => {
    if (eventsFd === null) return;
    try {
      fs.writeSync(eventsFd, JSON.stringify({ ...event, at: Date.now() }) + '\n');
    } catch {
      // the host stopped listening; the transcript on stdout still tells the story
    }
  };

  const answersFd = values['answers-fd'] !== undefined ? positiveInt(values['answers-fd'], '--answers-fd', 0) : null;
  let answers: net.Socket | undefined;
  if (answersFd !== null) {
    try {
      answers = new net.Socket({ fd: answersFd, readable: true, writable: false });
      answers.unref(); // an open channel must not keep a finished agent alive
    } catch (err) {
      // The terminal and the deadline still answer; only the host's answers are lost.
      process.stderr.write(
        `reference-agent: --answers-fd ${answersFd} cannot be read (${(err as Error).message}); questions are answered in the terminal only\n`,
      );
    }
  }
  const terminal = new PermissionAsker({ input: process.stdin, output: process.stdout, echo: !process.stdin.isTTY, answers });
  asker = terminal;

  let controller = new AbortController();
  let interrupts = 0;
  let waitingForLine = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    // Interactive, at the prompt: Ctrl+C ends the conversation (the session is saved).
    if (waitingForLine) process.exit(EXIT.ok);
    interrupts++;
    if (interrupts > 1) process.exit(EXIT.interrupted); // a second Ctrl+C means now
    process.stdout.write(`\n[${signal}: stopping; the session stays resumable]\n`);
    controller.abort(new Error(signal));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A host that died (killed, crashed) cannot stop us: notice it and end resumably on our own.
  const parentPid = Number(process.env.OFFPEAK_AGENT_PARENT_PID);
  if (Number.isInteger(parentPid) && parentPid > 0) {
    const watchdog = setInterval(() => {
      if (process.ppid !== parentPid && !controller.signal.aborted) {
        process.stdout.write('\n[host process gone: stopping; the session stays resumable]\n');
        controller.abort(new Error('host gone'));
      }
    }, 500);
    watchdog.unref();
  }

  const sessionId = (values['session-id'] ?? values.resume) as string;
  const run = (turnPrompt: string) =>
    runAgent({
      endpoint: { baseUrl, authToken: process.env.ANTHROPIC_AUTH_TOKEN || undefined, apiKey: process.env.ANTHROPIC_API_KEY || undefined },
      workspace,
      sessionsDir,
      sessionId,
      resume,
      prompt: turnPrompt,
      permissionMode: oneOf<PermissionMode>(values['permission-mode'], PERMISSION_MODES, '--permission-mode', 'default'),
      model: values.model ?? process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-4-5',
      thoughtLevel: oneOf<ThoughtLevel>(values['thought-level'], THOUGHT_LEVELS, '--thought-level', 'none'),
      maxTurns: positiveInt(values['max-turns'], '--max-turns', 200),
      askTimeoutMs: positiveInt(values['ask-timeout-ms'], '--ask-timeout-ms', 300_000),
      askParkMs: values['ask-park-ms'] !== undefined ? positiveInt(values['ask-park-ms'], '--ask-park-ms', 0) : undefined,
      commandTimeoutMs: positiveInt(values['command-timeout-ms'], '--command-timeout-ms', 120_000),
      retry: {
        maxRetries: positiveInt(values['max-retries'], '--max-retries', 4),
        baseDelayMs: positiveInt(process.env.OFFPEAK_AGENT_RETRY_BASE_MS, 'OFFPEAK_AGENT_RETRY_BASE_MS', 1000),
        maxDelayMs: 30_000,
      },
      out: process.stdout,
      asker: terminal,
      emit,
      signal: controller.signal,
    });

  if (values.interactive) {
    // The user's own conversation (docs/flows.md#open-session): one instruction a line, each run to the end of the model's turn.
    for (;;) {
      process.stdout.write('\n(type an instruction and Enter; "exit" or Ctrl+D ends, the session is kept)\n› ');
      waitingForLine = true;
      const line = await terminal.readLine();
      waitingForLine = false;
      if (line === null || line.trim() === 'exit') return EXIT.ok;
      if (!line.trim()) continue;
      const turn = await run(line);
      if (turn.kind === 'failed') process.stdout.write(`\n✗ ${terminalSafeLines(turn.error, false)}\n`);
      [controller, interrupts] = [new AbortController(), 0];
    }
  }
  const result = await run(prompt);

  switch (result.kind) {
    case 'completed':
      emit({ type: 'result', ok: true, text: result.text, turns: result.turns });
      process.stdout.write(`\n✓ finished after ${result.turns} turn(s)\n`);
      return EXIT.ok;
    case 'failed':
      emit({ type: 'result', ok: false, error: result.error, turns: result.turns });
      // The off-peak segment ending is the normal course of a long task, not an API error; any other
      // error may quote the model API's answer: no control sequence reaches the terminal.
      process.stdout.write(
        isSegmentEndError(result.error) ? `\n■ ${segmentEndedText()}\n` : `\n✗ ${terminalSafeLines(result.error, false)}\n`,
      );
      return EXIT.failed;
    case 'interrupted':
      emit({ type: 'interrupted', session_id: sessionId });
      process.stdout.write(`\n■ interrupted; resume with --resume ${sessionId}\n`);
      return EXIT.interrupted;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // The asker reads stdin all the time; nothing else is pending now.
    asker?.close();
    process.stdin.destroy();
  },
  (err: unknown) => {
    if (err instanceof UsageError || err instanceof SessionError || (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      process.stderr.write(`reference-agent: ${(err as Error).message}\n${err instanceof SessionError ? '' : '\n' + USAGE + '\n'}`);
      process.exitCode = EXIT.usage;
    } else {
      process.stderr.write(`reference-agent: ${(err as Error).stack ?? String(err)}\n`);
      process.exitCode = EXIT.failed;
    }
    asker?.close();
    process.stdin.destroy();
  },
);
