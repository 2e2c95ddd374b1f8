// The Codex adapter's launch and its JSON-RPC driver, against a scripted `codex app-server` peer in
// memory (the messages in the shapes `codex app-server generate-ts` gives for the pinned version).
// The real binary's run is test/integration/codex-segments.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { PROXY_DUMMY_TOKEN, type SegmentSpec } from '../../src/agent/runtime/agent-adapter';
import { CODEX_PROXY_KEY_ENV, CodexAdapter, codexPermissions } from '../../src/agent/runtime/codex-adapter';

const SECRET_BASE = 'http://127.0.0.1:4321/secret-prefix-abc';

function spec(over: Partial<SegmentSpec> = {}): SegmentSpec {
  return {
    taskId: 't1',
    sessionId: '11111111-2222-3333-4444-555555555555',
    resume: false,
    prompt: 'Do the thing',
    permissionMode: 'default',
    model: null,
    thoughtLevel: null,
    workspacePath: '/work/ws',
    proxyBaseUrl: SECRET_BASE,
    segmentDir: '/tmp/seg',
    ...over,
  };
}

/** The adapter's reader driving a peer that answers as codex app-server does; `sent` holds what the reader wrote. */
function drive(adapter: CodexAdapter, s: SegmentSpec) {
  const reader = adapter.createReader(s);
  const stdin = new PassThrough();
  const sent: Record<string, any>[] = []; // eslint-disable-line @typescript-eslint/no-explicit-any
  stdin.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) sent.push(JSON.parse(line));
  });
  reader.drive!(stdin);
  const reply = (message: unknown) => reader.stdout(JSON.stringify(message) + '\n');
  return { reader, stdin, sent, reply };
}

describe('Codex adapter (codex app-server over stdio)', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-codex-unit-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("item 4: launches `codex app-server` with nothing of the proxy's secret URL or any key in argv, the dummy token in its key variable, the user's OpenAI key variables unset", () => {
    const adapter = new CodexAdapter({ command: '/opt/codex', threadsDir: dir, codexHome: '/home/u/.codex-test' });
    const launch = adapter.launch(spec());
    assert.deepEqual([launch.command, launch.args, launch.stdin], ['/opt/codex', ['app-server'], 'driver']);
    assert.ok(!JSON.stringify(launch.args).includes('secret-prefix'));
    assert.equal(launch.env[CODEX_PROXY_KEY_ENV], PROXY_DUMMY_TOKEN);
    assert.equal(launch.env.CODEX_HOME, '/home/u/.codex-test');
    assert.equal(launch.env.NO_COLOR, '1');
    assert.ok(!JSON.stringify(launch.env).includes('secret-prefix'), 'the proxy URL goes over stdin, not the environment');
    assert.deepEqual(launch.unsetEnv, ['OPENAI_API_KEY', 'CODEX_API_KEY']);
    const own = adapter.launch(spec({ ownLogin: true }));
    assert.equal(own.env[CODEX_PROXY_KEY_ENV], undefined);
    assert.deepEqual(own.unsetEnv, []);
  });

  it('item 2: the first segment starts a thread in the folder on the proxy, keeps its id, and runs the prompt as one turn; a later one resumes that thread', () => {
    const adapter = new CodexAdapter({ command: 'codex', threadsDir: dir });
    const first = drive(adapter, spec());
    assert.equal(first.sent[0].method, 'initialize');
    first.reply({ id: first.sent[0].id, result: { userAgent: 'codex' } });
    assert.deepEqual(
      first.sent.slice(1).map((m) => m.method),
      ['initialized', 'thread/start'],
    );
    const start = first.sent[2].params;
    assert.equal(start.cwd, '/work/ws');
    assert.equal(start.modelProvider, 'offpeak');
    assert.equal(start.config.model_providers.offpeak.base_url, `${SECRET_BASE}/v1`);
    assert.equal(start.config.model_providers.offpeak.env_key, CODEX_PROXY_KEY_ENV);
    assert.equal(start.config.model_providers.offpeak.wire_api, 'responses');
    assert.deepEqual([start.sandbox, start.approvalPolicy], ['workspace-write', 'on-request']);
    assert.equal(adapter.sessionExists(spec().sessionId), false);
    const shown = first.reply({ id: first.sent[2].id, result: { thread: { id: 'thread-abc' }, model: 'gpt-x' } });
    assert.match(shown, /Codex thread thread-abc · gpt-x/);
    assert.equal(adapter.threadOf(spec().sessionId), 'thread-abc');
    // POSIX: only the user reads it (Windows guards it with the profile's ACLs, which the mode does not show).
    if (process.platform !== 'win32')
      assert.equal((fs.statSync(path.join(dir, `${spec().sessionId}.json`)).mode & 0o777).toString(8), '600');
    const turn = first.sent[3];
    assert.equal(turn.method, 'turn/start');
    assert.deepEqual(turn.params.input, [{ type: 'text', text: 'Do the thing', text_elements: [] }]);
    assert.equal(turn.params.threadId, 'thread-abc');

    const later = drive(adapter, spec({ resume: true, prompt: 'Continue' }));
    later.reply({ id: later.sent[0].id, result: {} });
    assert.equal(later.sent[2].method, 'thread/resume');
    assert.equal(later.sent[2].params.threadId, 'thread-abc');
  });

  it('item 2: streams the turn as plain text (control sequences stripped), declines an approval with no one to ask, and ends stdin with the result when the turn completes', () => {
    const adapter = new CodexAdapter({ command: 'codex', threadsDir: dir });
    const { reader, stdin, sent, reply } = drive(adapter, spec());
    reply({ id: sent[0].id, result: {} });
    reply({ id: sent[2].id, result: { thread: { id: 'th' } } });
    let out = reply({ method: 'item/agentMessage/delta', params: { delta: 'Hello \x1b[31mred\x1b[0m ' } });
    out += reply({ method: 'item/agentMessage/delta', params: { delta: 'world' } });
    out += reply({ method: 'item/completed', params: { item: { type: 'agentMessage', text: 'Hello red world' } } });
    out += reply({ method: 'item/started', params: { item: { type: 'commandExecution', command: 'ls\x1b]0;title\x07' } } });
    out += reply({
      method: 'item/completed',
      params: { item: { type: 'commandExecution', exitCode: 0, aggregatedOutput: 'a.txt\nb.txt\n' } },
    });
    assert.ok(!out.includes('\x1b') && !out.includes('\x07'), JSON.stringify(out));
    assert.match(out, /Hello .*red.* world\n/);
    assert.match(out, /⏺ \$ ls/);
    assert.match(out, /⎿ exit 0\n {4}a\.txt\n {4}b\.txt/);

    const asked = reply({ id: 99, method: 'item/commandExecution/requestApproval', params: { command: 'rm -rf x', threadId: 'th' } });
    assert.deepEqual(sent.at(-1), { id: 99, result: { decision: 'decline' } });
    assert.match(asked, /declined/);
    assert.equal(reader.result(), undefined);
    reply({ method: 'turn/completed', params: { threadId: 'th', turn: { id: 'tu', status: 'completed', error: null } } });
    assert.deepEqual(reader.result(), { ok: true, summary: 'Hello red world' });
    assert.equal(stdin.writableEnded, true, 'Codex exits once its stdin closes');
  });

  it("item 3: Codex's command and file-change approvals are relayed as questions with their whole input, and the answer is Codex's decision", async () => {
    const { reader, sent, reply } = drive(new CodexAdapter({ command: 'codex', threadsDir: dir }), spec());
    const asked: { tool_name: string; input: Record<string, unknown> }[] = [];
    const answers = ['allow', 'deny'] as const;
    reader.relayAsk = (request) => {
      asked.push(request);
      return Promise.resolve({ decision: answers[asked.length - 1] });
    };
    reply({ id: sent[0].id, result: {} });
    reply({ id: sent[2].id, result: { thread: { id: 'th' } } });
    reply({
      id: 7,
      method: 'item/commandExecution/requestApproval',
      params: { command: 'git push', cwd: '/work/ws', itemId: 'c1', reason: 'needs network' },
    });
    const changes = [{ path: 'a.txt', kind: { type: 'add' }, diff: '+hello\n' }];
    reply({ method: 'item/started', params: { item: { type: 'fileChange', id: 'f1', changes, status: 'inProgress' } } });
    reply({ id: 8, method: 'item/fileChange/requestApproval', params: { itemId: 'f1', threadId: 'th' } });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(asked, [
      { tool_name: 'Codex command', input: { command: 'git push', cwd: '/work/ws', reason: 'needs network' } },
      { tool_name: 'Codex file change', input: { changes } },
    ]);
    assert.deepEqual(
      sent.filter((m) => m.id === 7 || m.id === 8),
      [
        { id: 7, result: { decision: 'accept' } },
        { id: 8, result: { decision: 'decline' } },
      ],
    );
  });

  it('a failed turn is the segment failure, with its message', () => {
    const { reader, sent, reply } = drive(new CodexAdapter({ command: 'codex', threadsDir: dir }), spec());
    reply({ id: sent[0].id, result: {} });
    reply({ id: sent[2].id, result: { thread: { id: 'th' } } });
    reply({ method: 'turn/completed', params: { turn: { status: 'failed', error: { message: 'stream disconnected' } } } });
    assert.deepEqual(reader.result(), { ok: false, error: 'stream disconnected' });
  });

  it('maps the permission modes to a sandbox and an approval policy', () => {
    assert.deepEqual(codexPermissions('plan'), { sandbox: 'read-only', approvalPolicy: 'never' });
    assert.deepEqual(codexPermissions('bypassPermissions'), { sandbox: 'danger-full-access', approvalPolicy: 'never' });
    assert.deepEqual(codexPermissions('acceptEdits'), { sandbox: 'workspace-write', approvalPolicy: 'on-request' });
  });
});
