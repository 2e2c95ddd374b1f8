import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CONTINUATION_PROMPT, type SegmentSpec } from '../../src/agent/runtime/agent-adapter';
import { ClaudeCodeAdapter } from '../../src/agent/runtime/claude-code-adapter';
import { ReferenceAgentAdapter } from '../../src/agent/runtime/reference-agent-adapter';
import { countFilesChanged, recordBaseCommit, recordFilesBaseline } from '../../src/agent/workplace/files-changed';
import { inhibitorFor, KeepAwake } from '../../src/agent/runtime/keep-awake';

const spec = (over: Partial<SegmentSpec> = {}): SegmentSpec => ({
  taskId: 't',
  sessionId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427',
  resume: false,
  prompt: 'do it',
  permissionMode: 'bypassPermissions',
  model: 'claude-sonnet-4-5',
  thoughtLevel: 'high',
  workspacePath: '/ws',
  proxyBaseUrl: 'http://127.0.0.1:5/secret',
  segmentDir: fs.mkdtempSync(path.join(os.tmpdir(), 'seg-')),
  ...over,
});

function alive(pid: number | undefined): boolean {
  try {
    process.kill(pid!, 0);
    return true;
  } catch {
    return false;
  }
}

describe('agent adapters', () => {
  it("item 8: Claude Code loads only the user's own settings and only the relay's MCP server unless the user opts in to project settings", () => {
    const flagValue = (args: string[], flag: string) => args[args.indexOf(flag) + 1];
    for (const mode of ['plan', 'default', 'acceptEdits', 'bypassPermissions'] as const) {
      const args = new ClaudeCodeAdapter({ command: '/bin/claude' }).launch(spec({ permissionMode: mode })).args;
      assert.equal(flagValue(args, '--setting-sources'), 'user', mode);
      assert.ok(args.includes('--strict-mcp-config'), mode);
    }
    const optedIn = new ClaudeCodeAdapter({ command: '/bin/claude', settingSources: 'user,project,local' }).launch(spec()).args;
    assert.equal(flagValue(optedIn, '--setting-sources'), 'user,project,local');
    assert.ok(!optedIn.includes('--strict-mcp-config'));
  });

  it('Claude Code: --session-id first, --resume later, settings carry the proxy env, IS_SANDBOX as root', () => {
    const adapter = new ClaudeCodeAdapter({ command: '/bin/claude', configDir: '/cfg', isRoot: true });
    const s = spec();
    const first = adapter.launch(s);
    assert.deepEqual(first.args.slice(0, 3), ['-p', '--session-id', s.sessionId]);
    assert.ok(first.args.includes('stream-json') && first.args.includes('--verbose'));
    const settings = JSON.parse(fs.readFileSync(first.args[first.args.indexOf('--settings') + 1], 'utf8')) as {
      env: Record<string, string>;
    };
    assert.equal(settings.env.ANTHROPIC_BASE_URL, 'http://127.0.0.1:5/secret');
    assert.equal(settings.env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, '1');
    assert.equal(settings.env.MAX_THINKING_TOKENS, '31999');
    assert.equal(first.env.IS_SANDBOX, '1');
    assert.equal(first.env.CLAUDE_CONFIG_DIR, '/cfg');
    assert.ok(!JSON.stringify(first).includes('user-key'), 'the user key is never given to the agent');
    const resumed = adapter.launch(spec({ resume: true, prompt: CONTINUATION_PROMPT, permissionMode: 'default' }));
    assert.deepEqual(resumed.args.slice(1, 3), ['--resume', spec().sessionId]);
    assert.equal(resumed.env.IS_SANDBOX, undefined);
  });

  it('item 3: Claude Code gets its prompt on stdin from a 0600 file and its settings from a 0600 file; argv holds neither them nor the proxy secret', () => {
    const s = spec({ prompt: '修复'.repeat(25_000) });
    const launch = new ClaudeCodeAdapter({ command: '/bin/claude' }).launch(s);
    const argv = launch.args.join(' ');
    assert.ok(!argv.includes('secret') && !argv.includes('修复'), argv);
    assert.ok(typeof launch.stdin === 'object');
    assert.equal(fs.readFileSync(launch.stdin.file, 'utf8'), s.prompt);
    const settingsFile = launch.args[launch.args.indexOf('--settings') + 1];
    for (const file of [launch.stdin.file, settingsFile]) {
      assert.equal(path.dirname(file), s.segmentDir);
      if (process.platform !== 'win32') assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    }
  });

  it('Claude Code: stream-json becomes a readable transcript and a result', () => {
    const reader = new ClaudeCodeAdapter({ command: 'claude' }).createReader();
    const lines = [
      { type: 'system', subtype: 'init', session_id: 'S', model: 'm' },
      {
        type: 'assistant',
        message: {
          content: [
            { type: 'text', text: 'Looking.' },
            { type: 'tool_use', name: 'Bash', input: { command: 'ls' } },
          ],
        },
      },
      { type: 'user', message: { content: [{ type: 'tool_result', content: 'a\nb' }] } },
      { type: 'result', subtype: 'success', is_error: false, result: 'All done', num_turns: 2 },
    ].map((l) => JSON.stringify(l) + '\n');
    const joined = lines.join('');
    const shown = reader.stdout(joined.slice(0, 50)) + reader.stdout(joined.slice(50)) + reader.end();
    assert.match(shown, /Looking\.\n⏺ Bash: ls\n {2}⎿ a/);
    assert.deepEqual(reader.result(), { ok: true, summary: 'All done' });
    const failing = new ClaudeCodeAdapter({ command: 'claude' }).createReader();
    failing.stdout(JSON.stringify({ type: 'result', subtype: 'error_during_execution', is_error: true, api_error_status: 400 }) + '\n');
    assert.equal(failing.result()?.ok, false);
  });

  it('item 6 (issue 20): Claude Code\'s API error for the proxy\'s segment end reads "Segment ended (time limit); the task resumes with a new ticket", not "✗ API Error"', () => {
    const reader = new ClaudeCodeAdapter({ command: 'claude' }).createReader();
    const refusal =
      'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"off-peak segment ended (ticket expired, code 3102); the task resumes with a new ticket"}}';
    const shown = reader.stdout(
      [
        { type: 'assistant', message: { content: [{ type: 'text', text: refusal }] } },
        { type: 'result', subtype: 'success', is_error: true, result: refusal, num_turns: 3 },
      ]
        .map((l) => JSON.stringify(l) + '\n')
        .join(''),
    );
    assert.equal((shown.match(/■ Segment ended \(time limit\); the task resumes with a new ticket/g) ?? []).length, 2);
    assert.doesNotMatch(shown, /API Error|✗/);
    assert.equal(reader.result()?.ok, false, 'the run itself still ended without finishing');
  });

  it('reference agent: prompt through a file, events on fd 3, no API key inherited', () => {
    const adapter = new ReferenceAgentAdapter({ command: 'node', argsPrefix: ['agent.js'], sessionsDir: '/s', askTimeoutMs: 1000 });
    const s = spec({ thoughtLevel: 'medium' });
    const launch = adapter.launch(s);
    assert.equal(fs.readFileSync(path.join(s.segmentDir, 'prompt.txt'), 'utf8'), 'do it');
    assert.equal(launch.stdin, 'terminal', 'the agent asks its questions in the terminal');
    assert.deepEqual(launch.args.slice(0, 3), ['agent.js', '--session-id', s.sessionId]);
    assert.ok(launch.eventsOnFd3);
    assert.deepEqual(launch.unsetEnv, ['ANTHROPIC_API_KEY']);
    assert.equal(launch.args[launch.args.indexOf('--thought-level') + 1], 'medium');
  });
});

describe('files_changed from snapshots (hardened git)', () => {
  const git = (ws: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=x@y.z', '-c', 'user.name=x', ...args], { cwd: ws, stdio: 'ignore' });

  it('counts created, modified, deleted and committed files since the first start, ignored ones included; pre-existing changes are not counted', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fc-'));
    const ws = path.join(root, 'ws');
    const taskDir = path.join(root, 'task');
    fs.mkdirSync(ws);
    git(ws, 'init', '-q');
    fs.writeFileSync(path.join(ws, 'a.txt'), '1');
    fs.writeFileSync(path.join(ws, 'b.txt'), '1');
    fs.writeFileSync(path.join(ws, '.gitignore'), 'build/\n');
    git(ws, 'add', '.');
    git(ws, 'commit', '-q', '-m', 'base');
    fs.writeFileSync(path.join(ws, 'dirty-before.txt'), 'the user was working on this');
    assert.equal(await recordBaseCommit(ws), execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ws, encoding: 'utf8' }).trim());
    assert.equal(await recordFilesBaseline(ws, taskDir), true);
    fs.writeFileSync(path.join(ws, 'a.txt'), '2'); // modified
    fs.writeFileSync(path.join(ws, 'new.txt'), 'n'); // untracked
    fs.rmSync(path.join(ws, 'b.txt')); // deleted
    fs.writeFileSync(path.join(ws, 'c.txt'), 'c');
    git(ws, 'add', 'c.txt');
    git(ws, 'commit', '-q', '-m', 'agent commit'); // committed: still a change
    fs.mkdirSync(path.join(ws, 'build'));
    fs.writeFileSync(path.join(ws, 'build', 'out.js'), 'x'); // ignored: still a change
    assert.equal(await countFilesChanged(ws, taskDir), 5); // a, b, c, new, build/out.js
    fs.rmSync(path.join(ws, 'dirty-before.txt'));
    fs.mkdirSync(path.join(ws, 'dirty-before.txt'));
    fs.writeFileSync(path.join(ws, 'dirty-before.txt', 'inside'), 'a file became a folder');
    assert.equal(await countFilesChanged(ws, taskDir), 7, 'the file that went and the file inside the new folder count too');
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('item 4 (issue 20): a folder that is not a repository, or sits in an ignored directory of one, gets the right count', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fc-ign-'));
    git(root, 'init', '-q');
    fs.writeFileSync(path.join(root, '.gitignore'), '.tools/\n');
    const ws = path.join(root, '.tools', 'start', 'folder');
    fs.mkdirSync(ws, { recursive: true });
    fs.writeFileSync(path.join(ws, 'README.md'), 'hi');
    const taskDir = path.join(root, 'task');
    assert.equal(await recordFilesBaseline(ws, taskDir), true);
    fs.writeFileSync(path.join(ws, 'hello.txt'), 'hello');
    fs.writeFileSync(path.join(ws, 'README.md'), 'changed');
    assert.equal(await countFilesChanged(ws, taskDir), 2);

    const plain = fs.mkdtempSync(path.join(os.tmpdir(), 'fc-plain-'));
    assert.equal(await recordBaseCommit(plain), null, 'no repository: no base commit');
    assert.equal(await recordFilesBaseline(plain, path.join(plain, '..', `${path.basename(plain)}-task`)), true);
    fs.writeFileSync(path.join(plain, 'x.txt'), 'x');
    assert.equal(await countFilesChanged(plain, path.join(plain, '..', `${path.basename(plain)}-task`)), 1);
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(plain, { recursive: true, force: true });
    fs.rmSync(`${plain}-task`, { recursive: true, force: true });
  });

  it('item 4 (issue 20): without a first-start snapshot, or with more files than a snapshot holds, the count is unknown (null), not a guess', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fc-unknown-'));
    const ws = path.join(root, 'ws');
    fs.mkdirSync(ws);
    fs.writeFileSync(path.join(ws, 'a.txt'), '1');
    try {
      assert.equal(await countFilesChanged(ws, path.join(root, 'no-baseline')), null, 'no baseline');
      assert.equal(await recordFilesBaseline(ws, path.join(root, 'task')), true);
      fs.writeFileSync(path.join(ws, 'b.txt'), '2');
      assert.equal(await countFilesChanged(ws, path.join(root, 'task'), { maxEntries: 1 }), null, 'too many files to list');
      assert.equal(await countFilesChanged(ws, path.join(root, 'task')), 1);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("item 6: neither the repository's config (fsmonitor, clean filter, textconv, hooks) nor GIT_* variables of the host make the count run a program", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fc-hostile-'));
    const ws = path.join(root, 'ws');
    fs.mkdirSync(ws);
    const marker = (name: string) => path.join(root, `${name}-ran`);
    git(ws, 'init', '-q');
    fs.writeFileSync(path.join(ws, 'a.txt'), '1');
    fs.writeFileSync(path.join(ws, '.gitattributes'), '* filter=evil diff=evil\n');
    git(ws, 'add', '.');
    git(ws, 'commit', '-q', '-m', 'base');
    git(ws, 'config', 'core.fsmonitor', `touch '${marker('fsmonitor')}'; false`);
    git(ws, 'config', 'filter.evil.clean', `touch '${marker('filter')}'; cat`);
    git(ws, 'config', 'diff.evil.textconv', `touch '${marker('textconv')}'; cat`);
    git(ws, 'config', 'core.hooksPath', root);
    const globalConfig = path.join(root, 'global.gitconfig');
    fs.writeFileSync(globalConfig, `[core]\n\tfsmonitor = touch '${marker('global')}'; false\n`);
    const saved = { ...process.env };
    Object.assign(process.env, {
      GIT_CONFIG_GLOBAL: globalConfig,
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'core.fsmonitor',
      GIT_CONFIG_VALUE_0: `touch '${marker('env')}'; false`,
      GIT_DIR: path.join(ws, '.git'),
    });
    try {
      const taskDir = path.join(root, 'task');
      assert.ok(await recordBaseCommit(ws));
      assert.equal(await recordFilesBaseline(ws, taskDir), true);
      fs.writeFileSync(path.join(ws, 'a.txt'), '2');
      fs.writeFileSync(path.join(ws, 'b.txt'), 'new');
      assert.equal(await countFilesChanged(ws, taskDir), 2);
      assert.deepEqual(
        fs.readdirSync(root).filter((f) => f.endsWith('-ran')),
        [],
        'no configured program ran',
      );
    } finally {
      for (const key of ['GIT_CONFIG_GLOBAL', 'GIT_CONFIG_COUNT', 'GIT_CONFIG_KEY_0', 'GIT_CONFIG_VALUE_0', 'GIT_DIR'])
        delete process.env[key];
      Object.assign(process.env, saved);
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('item 7: a git that hangs gives "unknown" at the time limit instead of hanging the task', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fc-hang-'));
    const ws = path.join(root, 'ws');
    fs.mkdirSync(ws);
    fs.writeFileSync(path.join(ws, 'a.txt'), '1');
    assert.equal(await recordFilesBaseline(ws, path.join(root, 'task')), true);
    const hung = path.join(root, 'git-hangs.sh');
    fs.writeFileSync(hung, '#!/bin/sh\nsleep 15\n', { mode: 0o755 });
    try {
      assert.equal(await countFilesChanged(ws, path.join(root, 'task'), { timeoutMs: 500, gitCommand: hung }), null);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('keep awake', () => {
  // A stand-in inhibitor that runs on every platform (this Node, idle for 30 s).
  const idleInhibitor = { command: process.execPath, args: ['-e', 'setTimeout(() => {}, 30000)'] };

  it('runs one inhibitor while anything holds it and none when idle', async () => {
    const keepAwake = new KeepAwake({ enabled: () => true, command: idleInhibitor });
    const releaseA = keepAwake.acquire();
    const releaseB = keepAwake.acquire();
    const pid = keepAwake.pid;
    assert.ok(alive(pid));
    releaseA();
    releaseA();
    assert.ok(keepAwake.active, 'still held by B');
    releaseB();
    assert.equal(keepAwake.active, false);
    for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(alive(pid), false, 'nothing left running when idle');
  });

  it('does nothing when the setting is off, and knows each platform inhibitor', () => {
    const keepAwake = new KeepAwake({ enabled: () => false, command: idleInhibitor });
    const release = keepAwake.acquire();
    assert.equal(keepAwake.active, false);
    release();
    assert.equal(inhibitorFor('linux', 42)?.command, 'systemd-inhibit');
    assert.ok(inhibitorFor('linux', 42)?.args.includes('--pid=42'));
    assert.deepEqual(inhibitorFor('darwin', 42), { command: 'caffeinate', args: ['-i', '-w', '42'] });
    assert.match(inhibitorFor('win32', 42)!.args.join(' '), /SetThreadExecutionState/);
    assert.equal(inhibitorFor('aix', 42), null);
  });
});
