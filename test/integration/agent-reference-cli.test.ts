// The bundled reference agent as a real child process against the scripted fake upstream.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeAnthropicUpstream, lastMessageHasToolResult } from '../fixtures/fake-anthropic-upstream';
import { waitUntil } from './runtime-helpers';
import { SEGMENT_END_MARK } from '../../src/core/segment-end';
import { referenceAgentArgv } from '../support/source-bundle';

interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
  events: Record<string, unknown>[];
}

interface StartedAgent {
  done: Promise<AgentRun>;
  child: ReturnType<typeof spawn>;
  events: Record<string, unknown>[];
  stdout: () => string;
}

function startAgent(args: string[], env: Record<string, string>, cwd: string): StartedAgent {
  const child = spawn(process.execPath, [...referenceAgentArgv(), ...args, '--events-fd', '3'], {
    cwd,
    env: { ...process.env, OFFPEAK_AGENT_RETRY_BASE_MS: '20', ...env },
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let eventText = '';
  const events: Record<string, unknown>[] = [];
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (c: Buffer) => {
    eventText += c.toString();
    let nl: number;
    while ((nl = eventText.indexOf('\n')) >= 0) {
      events.push(JSON.parse(eventText.slice(0, nl)) as Record<string, unknown>);
      eventText = eventText.slice(nl + 1);
    }
  });
  const done = new Promise<AgentRun>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr, events })));
  return { done, child, events, stdout: () => stdout };
}

describe('reference agent CLI (real process, fake upstream)', function () {
  let upstream: FakeAnthropicUpstream;
  let workspace: string;
  let sessionsDir: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    upstream = await FakeAnthropicUpstream.start();
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'ra-ws-'));
    sessionsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ra-sessions-'));
    env = { ANTHROPIC_BASE_URL: upstream.url, ANTHROPIC_AUTH_TOKEN: 'tok-123' };
  });
  afterEach(async () => {
    await upstream.close();
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(sessionsDir, { recursive: true, force: true });
  });

  const common = () => ['--cwd', workspace, '--sessions-dir', sessionsDir, '--model', 'fake-model'];

  it('runs tools in bypassPermissions mode, streams, and records the session', async () => {
    upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'notes/a.txt', content: 'hello\n' } },
      { kind: 'tool_use', name: 'run_command', input: { command: 'cat notes/a.txt; echo "key=${ANTHROPIC_AUTH_TOKEN:-unset}"' } },
      { kind: 'text', text: 'All done here.' },
    );
    const run = await startAgent(
      ['--session-id', 's1', '-p', 'write a note', '--permission-mode', 'bypassPermissions', ...common()],
      env,
      workspace,
    ).done;
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.equal(fs.readFileSync(path.join(workspace, 'notes/a.txt'), 'utf8'), 'hello\n');
    const requests = upstream.messageRequests();
    assert.equal(requests.length, 3);
    assert.equal(requests[0].headers.authorization, 'Bearer tok-123');
    assert.equal((requests[0].body as { stream: boolean }).stream, true);
    const third = requests[2].body as { messages: { content: { type: string; content?: string }[] }[] };
    const commandResult = third.messages[4].content[0];
    assert.equal(commandResult.type, 'tool_result');
    assert.match(commandResult.content ?? '', /hello/);
    assert.match(commandResult.content ?? '', /key=unset/, 'the agent credentials must not leak into commands');
    assert.match(run.stdout, /All done here\./);
    assert.deepEqual(run.events.at(-1)?.type, 'result');
    assert.equal(run.events.at(-1)?.ok, true);
    const transcript = fs.readFileSync(path.join(sessionsDir, 's1.jsonl'), 'utf8').trim().split('\n');
    assert.equal(transcript.length, 1 + 6); // meta + user, (assistant, tool_result) x2, assistant
  });

  it('resumes a session by id and sends the earlier conversation again', async () => {
    upstream.enqueue({ kind: 'text', text: 'first answer' }, { kind: 'text', text: 'second answer' });
    const first = await startAgent(['--session-id', 's2', '-p', 'first prompt', ...common()], env, workspace).done;
    assert.equal(first.code, 0, first.stderr);
    const second = await startAgent(['--resume', 's2', '-p', 'continue please', ...common()], env, workspace).done;
    assert.equal(second.code, 0, second.stderr);
    const body = upstream.messageRequests()[1].body as { messages: { role: string; content: { text?: string }[] }[] };
    assert.deepEqual(
      body.messages.map((m) => [m.role, m.content.map((c) => c.text).join('')]),
      [
        ['user', 'first prompt'],
        ['assistant', 'first answer'],
        ['user', 'continue please'],
      ],
    );
    const printed = await startAgent(['transcript', 's2', '--sessions-dir', sessionsDir], env, workspace).done;
    assert.match(printed.stdout, /> first prompt[\s\S]*first answer[\s\S]*> continue please[\s\S]*second answer/);
  });

  it('plan mode offers only read tools and refuses writes', async () => {
    upstream.enqueue({ kind: 'tool_use', name: 'write_file', input: { path: 'x.txt', content: 'no' } }, { kind: 'text', text: 'planned' });
    const run = await startAgent(['--session-id', 's3', '-p', 'plan it', '--permission-mode', 'plan', ...common()], env, workspace).done;
    assert.equal(run.code, 0, run.stderr);
    const tools = (upstream.messageRequests()[0].body as { tools: { name: string }[] }).tools.map((t) => t.name).sort();
    assert.deepEqual(tools, ['list_files', 'read_file']);
    assert.equal(fs.existsSync(path.join(workspace, 'x.txt')), false);
    const second = upstream.messageRequests()[1].body as { messages: { content: { is_error?: boolean; content?: string }[] }[] };
    assert.equal(second.messages[2].content[0].is_error, true);
  });

  it('default mode asks in the terminal, reports input needed, and applies the answer', async () => {
    upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'yes.txt', content: 'y' } },
      { kind: 'tool_use', name: 'run_command', input: { command: 'touch denied.txt' } },
      { kind: 'text', text: 'ok' },
    );
    const agent = startAgent(['--session-id', 's4', '-p', 'go', '--permission-mode', 'default', ...common()], env, workspace);
    await waitUntil(() => agent.events.filter((e) => e.type === 'input_needed').length === 1, 'first ask');
    agent.child.stdin!.write('y\r'); // a pseudoterminal sends Enter as \r
    await waitUntil(() => agent.events.filter((e) => e.type === 'input_needed').length === 2, 'second ask');
    agent.child.stdin!.write('n\n');
    const run = await agent.done;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(fs.existsSync(path.join(workspace, 'yes.txt')), true);
    assert.equal(fs.existsSync(path.join(workspace, 'denied.txt')), false);
    const answers = run.events.filter((e) => e.type === 'input_answered').map((e) => [e.tool, e.allowed, e.by]);
    assert.deepEqual(answers, [
      ['write_file', true, 'terminal'],
      ['run_command', false, 'terminal'],
    ]);
  });

  it('denies an unanswered ask after the configured time so the run goes on', async () => {
    upstream.enqueue(
      { kind: 'tool_use', name: 'edit_file', input: { path: 'f.txt', old_string: 'a', new_string: 'b' } },
      { kind: 'text', text: 'gave up' },
    );
    fs.writeFileSync(path.join(workspace, 'f.txt'), 'a');
    const run = await startAgent(['--session-id', 's5', '-p', 'go', '--ask-timeout-ms', '300', ...common()], env, workspace).done;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(fs.readFileSync(path.join(workspace, 'f.txt'), 'utf8'), 'a');
    assert.deepEqual(run.events.find((e) => e.type === 'input_answered')?.by, 'timeout');
  });

  it('acceptEdits edits without asking but asks for commands', async () => {
    fs.writeFileSync(path.join(workspace, 'f.txt'), 'alpha beta');
    upstream.enqueue(
      { kind: 'tool_use', name: 'edit_file', input: { path: 'f.txt', old_string: 'beta', new_string: 'gamma' } },
      { kind: 'tool_use', name: 'run_command', input: { command: 'touch ran.txt' } },
      { kind: 'text', text: 'ok' },
    );
    const run = await startAgent(
      ['--session-id', 's6', '-p', 'go', '--permission-mode', 'acceptEdits', '--ask-timeout-ms', '200', ...common()],
      env,
      workspace,
    ).done;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(fs.readFileSync(path.join(workspace, 'f.txt'), 'utf8'), 'alpha gamma');
    assert.equal(fs.existsSync(path.join(workspace, 'ran.txt')), false);
    assert.deepEqual(
      run.events.filter((e) => e.type === 'input_needed').map((e) => e.tool),
      ['run_command'],
    );
  });

  it('SIGINT ends cleanly mid-request and the session resumes with the tool results kept', async () => {
    upstream.enqueue({ kind: 'tool_use', name: 'list_files', input: {} }, { kind: 'hang' });
    const agent = startAgent(['--session-id', 's7', '-p', 'long task', ...common()], env, workspace);
    await upstream.waitForMessageRequest(2);
    agent.child.kill('SIGINT');
    const run = await agent.done;
    assert.equal(run.code, 130);
    assert.equal(run.events.at(-1)?.type, 'interrupted');
    upstream.setDefaultReply((r) => ({ kind: 'text', text: lastMessageHasToolResult(r.body) ? 'bad' : 'resumed fine' }));
    const resumed = await startAgent(['--resume', 's7', '-p', 'please continue', ...common()], env, workspace).done;
    assert.equal(resumed.code, 0, resumed.stderr);
    const body = upstream.messageRequests()[2].body as { messages: { role: string; content: { type: string }[] }[] };
    assert.deepEqual(
      body.messages.map((m) => m.content.map((c) => c.type).join('+')),
      ['text', 'tool_use', 'tool_result+text'],
    );
  });

  it('gives up at once on a 400 marked x-should-retry: false and retries a 529', async () => {
    upstream.enqueue({ kind: 'error', status: 529 }, { kind: 'error', status: 400, code: '3102', headers: { 'x-should-retry': 'false' } });
    const run = await startAgent(['--session-id', 's8', '-p', 'go', ...common()], env, workspace).done;
    assert.equal(run.code, 1);
    assert.equal(upstream.messageRequests().length, 2);
    assert.match(String(run.events.at(-1)?.error), /API error 400/);
  });

  it("item 6: the ticket proxy's segment-end refusal reads as a normal segment end, not a red API error", async () => {
    // The refusal as the ticket proxy words it once the segment's ticket expired (src/agent/proxy/ticket-proxy.ts).
    const message = `${SEGMENT_END_MARK} (ticket expired, code 3102); the task resumes with a new ticket`;
    upstream.enqueue({ kind: 'error', status: 400, errorType: 'invalid_request_error', message, headers: { 'x-should-retry': 'false' } });
    const run = await startAgent(['--session-id', 's9', '-p', 'go', ...common()], env, workspace).done;
    assert.match(run.stdout, /■ Segment ended \(time limit\); the task resumes with a new ticket\n/);
    assert.doesNotMatch(run.stdout, /API error|✗/);
  });

  it('rejects bad arguments with a clear message and refuses paths outside the workspace', async () => {
    const bad = await startAgent(['--session-id', 's9', '-p', 'x', '--permission-mode', 'yolo', ...common()], env, workspace).done;
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--permission-mode must be one of/);
    const missing = await startAgent(['--resume', 'nope', ...common()], env, workspace).done;
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no session found/);
    upstream.enqueue({ kind: 'tool_use', name: 'read_file', input: { path: '../../etc/passwd' } }, { kind: 'text', text: 'ok' });
    const escape = await startAgent(['--session-id', 's10', '-p', 'x', ...common()], env, workspace).done;
    assert.equal(escape.code, 0);
    const result = (upstream.messageRequests()[0 + 1].body as { messages: { content: { content?: string }[] }[] }).messages[2].content[0];
    assert.match(result.content ?? '', /outside the workspace/);
  });
});
