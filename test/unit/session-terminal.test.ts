/**
 * "Open session" (docs/flows.md#open-session): the integrated terminal's options for a Claude Code
 * task, computed without VS Code, and run here as VS Code runs them (shellPath + shellArgs as
 * argv, env laid over the host's with null removing a variable) against a stand-in `claude`
 * that reports what it was given.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROXY_DUMMY_TOKEN } from '../../src/agent/runtime/agent-adapter';
import { ClaudeCodeAdapter, CLAUDE_SETTING_SOURCES } from '../../src/agent/runtime/claude-code-adapter';
import {
  claudeSessionTerminal,
  REFERENCE_SESSION_NEEDS_OWN_MODEL,
  sessionViewOf,
  type InteractiveSessionTerminal,
} from '../../src/agent/runtime/session-terminal';

const SESSION = '0f7d2c1e-8b8a-4b8e-9a53-2f1a2b3c4d5e';
const PROXY_PORT = 41234;

/** What VS Code does with TerminalOptions.env: laid over the base environment, null deletes. */
function terminalEnv(base: Record<string, string | undefined>, overlay: InteractiveSessionTerminal['env']): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const [name, value] of Object.entries(overlay)) {
    if (value === null) delete env[name];
    else env[name] = value;
  }
  return env;
}

describe('Open session: the Claude Code terminal (vscode-free)', () => {
  let dir: string;
  let fakeClaude: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-open-session-'));
    // A stand-in for `claude`, labelled as such: it prints its argv, cwd and environment.
    fakeClaude = path.join(dir, 'claude');
    fs.writeFileSync(
      fakeClaude,
      `#!${process.execPath}\nprocess.stdout.write(JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd(), env: process.env }));\n`,
      { mode: 0o755 },
    );
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("runs `claude --resume <session id>` as argv in the task folder, with the user's settings and none of the off-peak proxy", () => {
    const ws = fs.mkdirSync(path.join(dir, 'my project; rm -rf ~'), { recursive: true })!;
    const hostEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      // As if the host had been started from inside a segment: the proxy's URL and dummy token.
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${PROXY_PORT}/s3cr3t-path`,
      ANTHROPIC_AUTH_TOKEN: PROXY_DUMMY_TOKEN,
      // The user's own settings stay.
      ANTHROPIC_MODEL: 'claude-sonnet-4-5',
      HTTPS_PROXY: 'http://corp-proxy.example:3128',
    };
    const options = claudeSessionTerminal({
      command: fakeClaude,
      sessionId: SESSION,
      cwd: ws,
      title: 'Fix the $(whoami) bug\n\u001b[31m',
      hostEnv,
      proxyPort: PROXY_PORT,
    });
    assert.equal(options.shellPath, fakeClaude);
    assert.deepEqual(options.shellArgs, ['--resume', SESSION, '--setting-sources', 'user', '--strict-mcp-config']);
    assert.equal(options.cwd, ws);
    assert.deepEqual(options.env, { ANTHROPIC_BASE_URL: null, ANTHROPIC_AUTH_TOKEN: null });
    assert.equal(options.name, 'Claude Code: Fix the $(whoami) bug [31m', 'one plain line: no control characters');

    const run = spawnSync(options.shellPath, options.shellArgs, {
      cwd: options.cwd,
      env: terminalEnv(hostEnv, options.env),
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    const seen = JSON.parse(run.stdout) as { argv: string[]; cwd: string; env: Record<string, string> };
    assert.deepEqual(seen.argv, ['--resume', SESSION, '--setting-sources', 'user', '--strict-mcp-config']);
    assert.equal(fs.realpathSync(seen.cwd), fs.realpathSync(ws));
    assert.equal(seen.env.ANTHROPIC_BASE_URL, undefined);
    assert.equal(seen.env.ANTHROPIC_AUTH_TOKEN, undefined);
    assert.equal(seen.env.ANTHROPIC_MODEL, 'claude-sonnet-4-5');
    assert.equal(seen.env.HTTPS_PROXY, 'http://corp-proxy.example:3128');
    for (const [name, value] of Object.entries(seen.env)) {
      assert.ok(!value.includes(String(PROXY_PORT)) && value !== PROXY_DUMMY_TOKEN, `${name} points at the off-peak proxy`);
    }
  });

  it("keeps the user's own ANTHROPIC_BASE_URL, and passes the config dir the segments used", () => {
    const options = claudeSessionTerminal({
      command: 'claude',
      sessionId: SESSION,
      cwd: dir,
      title: 't',
      configDir: path.join(dir, 'claude-config'),
      hostEnv: { ANTHROPIC_BASE_URL: 'https://llm-gateway.example.com', ANTHROPIC_AUTH_TOKEN: 'users-own-token' },
      proxyPort: PROXY_PORT,
    });
    assert.deepEqual(options.env, { CLAUDE_CONFIG_DIR: path.join(dir, 'claude-config') });
  });

  it('item 5: starts `claude --resume` with the setting sources the task ran with, so a .claude/settings.json the model wrote in the folder runs no hook in your session', () => {
    // The part of a segment's argv that decides which setting files and MCP servers load.
    const settingArgs = (args: string[]) =>
      args.slice(args.indexOf('--setting-sources')).filter((a, i) => i < 2 || a === '--strict-mcp-config');
    for (const settingSources of CLAUDE_SETTING_SOURCES) {
      const segment = new ClaudeCodeAdapter({ command: fakeClaude, settingSources }).launch({
        taskId: 't',
        sessionId: SESSION,
        resume: true,
        prompt: 'p',
        permissionMode: 'default',
        model: null,
        thoughtLevel: null,
        workspacePath: dir,
        proxyBaseUrl: 'http://127.0.0.1:5/secret',
        segmentDir: fs.mkdtempSync(path.join(dir, 'seg-')),
      });
      const options = claudeSessionTerminal({
        command: fakeClaude,
        sessionId: SESSION,
        cwd: dir,
        title: 't',
        hostEnv: { PATH: process.env.PATH },
        proxyPort: PROXY_PORT,
        settingSources,
      });
      assert.deepEqual(options.shellArgs, ['--resume', SESSION, ...settingArgs(segment.args)], settingSources);
      const run = spawnSync(options.shellPath, options.shellArgs, {
        cwd: options.cwd,
        env: terminalEnv({ PATH: process.env.PATH }, options.env),
        encoding: 'utf8',
      });
      assert.deepEqual((JSON.parse(run.stdout) as { argv: string[] }).argv, options.shellArgs, 'the terminal runs exactly this argv');
    }
    const byDefault = claudeSessionTerminal({
      command: fakeClaude,
      sessionId: SESSION,
      cwd: dir,
      title: 't',
      hostEnv: {},
      proxyPort: 0,
      settingSources: 'user',
    });
    assert.deepEqual(
      byDefault.shellArgs,
      ['--resume', SESSION, '--setting-sources', 'user', '--strict-mcp-config'],
      'the default: your own settings only, no project MCP server',
    );
  });

  it('refuses a session id that is not a UUID, a missing folder and an empty command, with a clear error', () => {
    const base = { command: 'claude', cwd: dir, title: 't', hostEnv: {}, proxyPort: 0 };
    for (const bad of ['--dangerously-skip-permissions', `${SESSION} --print`, '../x', '']) {
      assert.throws(() => claudeSessionTerminal({ ...base, sessionId: bad }), /no Claude Code session to open/);
    }
    assert.throws(() => claudeSessionTerminal({ ...base, sessionId: SESSION, cwd: path.join(dir, 'gone') }), /no longer exists/);
    assert.throws(() => claudeSessionTerminal({ ...base, sessionId: SESSION, command: ' ' }), /claudeCodePath/);
  });

  it('a finished Claude Code task opens interactively; a reference-agent task opens interactively with a model route, else shows the transcript saying why; a running task or a busy session shows the transcript', () => {
    const claude = { command: 'claude', hostEnv: {}, proxyPort: 0 };
    const task = { title: 'x', prompt: 'p', status: 'completed' as const, sessionId: SESSION, workspacePath: dir };
    const view = sessionViewOf(task, 'claude-code', claude, false);
    assert.equal(view.kind, 'interactive');
    assert.deepEqual(view.kind === 'interactive' && view.terminal.shellArgs, [
      '--resume',
      SESSION,
      '--setting-sources',
      'user',
      '--strict-mcp-config',
    ]);
    assert.deepEqual(sessionViewOf(task, 'reference', claude, false), { kind: 'transcript', why: REFERENCE_SESSION_NEEDS_OWN_MODEL });
    const route = { command: process.execPath, argsPrefix: ['agent.js'], sessionsDir: '/sessions', baseUrl: 'http://127.0.0.1:1/secret' };
    const reference = sessionViewOf(task, 'reference', claude, false, route);
    assert.deepEqual(reference.kind === 'interactive' && reference.terminal.shellArgs, [
      'agent.js',
      '--resume',
      SESSION,
      '--interactive',
      '--cwd',
      dir,
      '--permission-mode',
      'default',
      '--sessions-dir',
      '/sessions',
    ]);
    assert.deepEqual(reference.kind === 'interactive' && reference.terminal.env, {
      ANTHROPIC_BASE_URL: route.baseUrl,
      ANTHROPIC_AUTH_TOKEN: PROXY_DUMMY_TOKEN,
      ANTHROPIC_API_KEY: null,
      ELECTRON_RUN_AS_NODE: '1',
    });
    assert.deepEqual(sessionViewOf({ ...task, status: 'running' }, 'reference', claude, false, route), { kind: 'transcript' });
    assert.deepEqual(sessionViewOf({ ...task, status: 'running' }, 'claude-code', claude, false), { kind: 'transcript' });
    assert.deepEqual(sessionViewOf(task, 'claude-code', claude, true), { kind: 'transcript' }, 'a follow-up works on the session');
    assert.throws(() => sessionViewOf({ ...task, sessionId: null }, 'claude-code', claude, false), /has not started/);
  });
});
