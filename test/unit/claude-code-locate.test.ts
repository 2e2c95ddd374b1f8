// `offPeak.agent` = `auto` (docs/flows.md#which-agent): where Claude Code is found and which agent
// a new task then runs. The Linux cases use real files in a temp folder; the Windows and macOS
// ones an injected platform over an in-memory file list (their paths cannot exist here).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClaudeCodeAdapter } from '../../src/agent/runtime/claude-code-adapter';
import {
  chooseAgent,
  claudeLoginSeen,
  locateClaudeCode,
  systemLocateHost,
  type LocateHost,
} from '../../src/agent/runtime/claude-code-locate';
import { agentAdapters } from '../../src/engine/agent-starts';
import type { HostEngineOptions } from '../../src/engine/engine-options';

function executable(file: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  return file;
}

/** A host whose only files are `files` (path → text), each file and folder this user's (uid 501) and 0755 unless `stats` says otherwise. */
function fakeHost(
  platform: NodeJS.Platform,
  env: Record<string, string>,
  homedir: string,
  files: Record<string, string>,
  stats: Record<string, { uid: number; mode: number }> = {},
): LocateHost {
  return {
    platform,
    env,
    homedir,
    uid: platform === 'win32' ? undefined : 501,
    isFile: (f) => f in files,
    readText: (f) => files[f],
    statOf: (f) => {
      if (platform === 'win32') throw new Error('Windows has no POSIX owner or mode to check');
      return stats[f] ?? { uid: 501, mode: f in files ? 0o100755 : 0o40755 };
    },
  };
}

describe('offPeak.agent auto: finding Claude Code', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-locate-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  // Real files, but only those under the temp folder: a claude installed on this machine is not seen.
  const linuxHost = (pathDirs: string[], home: string): LocateHost => {
    const real = systemLocateHost();
    return {
      ...real,
      platform: 'linux',
      env: { PATH: pathDirs.join(':') },
      homedir: home,
      isFile: (f) => f.startsWith(root + path.sep) && real.isFile(f),
    };
  };

  it('found on PATH: auto runs Claude Code, from the file found', () => {
    const bin = path.join(root, 'bin');
    const claude = executable(path.join(bin, 'claude'));
    const found = locateClaudeCode('claude', linuxHost([path.join(root, 'empty'), bin], path.join(root, 'home')));
    assert.deepEqual(found, { found: claude, command: claude, argsPrefix: [] });
    assert.equal(chooseAgent('auto', found), 'claude-code');
  });

  it('not on PATH nor in any installer place: auto runs the reference agent', () => {
    fs.mkdirSync(path.join(root, 'bin'));
    executable(path.join(root, 'bin', 'claude-other'));
    const found = locateClaudeCode('claude', linuxHost([path.join(root, 'bin')], path.join(root, 'home')));
    assert.equal(found, undefined);
    assert.equal(chooseAgent('auto', found), 'reference');
    assert.equal(chooseAgent('claude-code', found), 'claude-code', 'a fixed setting is kept');
  });

  it("the native installer's ~/.local/bin/claude is found when PATH lacks it", () => {
    const home = path.join(root, 'home');
    const claude = executable(path.join(home, '.local', 'bin', 'claude'));
    assert.equal(locateClaudeCode('claude', linuxHost([], home))?.command, claude);
  });

  it('offPeak.claudeCodePath with a folder is taken as is, and only that file', () => {
    const home = path.join(root, 'home');
    executable(path.join(home, '.local', 'bin', 'claude'));
    const mine = executable(path.join(root, 'opt', 'my-claude'));
    assert.equal(locateClaudeCode(mine, linuxHost([], home))?.command, mine);
    assert.equal(locateClaudeCode(path.join(root, 'opt', 'missing'), linuxHost([], home)), undefined);
    assert.equal(chooseAgent('reference', { found: mine, command: mine, argsPrefix: [] }), 'reference', 'a fixed setting is kept');
  });

  it("Windows: npm's claude.cmd shim on Path (PATHEXT) runs the claude.exe it names, never the .cmd", () => {
    const npm = 'C:\\Users\\ana\\AppData\\Roaming\\npm';
    const shim = `${npm}\\claude.cmd`;
    const exe = `${npm}\\node_modules\\@anthropic-ai\\claude-code\\bin\\claude.exe`;
    const shimText =
      '@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%~dp0\r\nEXIT /b\r\n:start\r\nSETLOCAL\r\nCALL :find_dp0\r\n"%dp0%\\node_modules\\@anthropic-ai\\claude-code\\bin\\claude.exe"   %*\r\n';
    const host = fakeHost('win32', { Path: `C:\\Windows\\system32;${npm}`, PATHEXT: '.COM;.EXE;.BAT;.CMD' }, 'C:\\Users\\ana', {
      [shim]: shimText,
      [exe]: '',
    });
    const found = locateClaudeCode('claude', host);
    assert.deepEqual(found, { found: shim, command: exe, argsPrefix: [] });
    assert.equal(chooseAgent('auto', found), 'claude-code');
  });

  it('Windows: a shim that runs a script starts it with Node (the extension host as Node), argv only', () => {
    const npm = 'C:\\Users\\ana\\AppData\\Roaming\\npm';
    const shim = `${npm}\\claude.cmd`;
    const script = `${npm}\\node_modules\\@anthropic-ai\\claude-code\\cli.js`;
    const shimText =
      '@SETLOCAL\r\n@IF EXIST "%~dp0\\node.exe" (\r\n  "%~dp0\\node.exe"  "%~dp0\\node_modules\\@anthropic-ai\\claude-code\\cli.js" %*\r\n) ELSE (\r\n  node  "%~dp0\\node_modules\\@anthropic-ai\\claude-code\\cli.js" %*\r\n)\r\n';
    // Not on Path: found in npm's global folder (APPDATA), one of the installers' places.
    const host = fakeHost('win32', { PATH: 'C:\\Windows', APPDATA: 'C:\\Users\\ana\\AppData\\Roaming' }, 'C:\\Users\\ana', {
      [shim]: shimText,
      [script]: '',
    });
    const found = locateClaudeCode('claude', host, 'C:\\VSCode\\Code.exe');
    assert.deepEqual(found, { found: shim, command: 'C:\\VSCode\\Code.exe', argsPrefix: [script], env: { ELECTRON_RUN_AS_NODE: '1' } });
    const launch = new ClaudeCodeAdapter({ command: found!.command, argsPrefix: found!.argsPrefix, env: found!.env }).launch({
      taskId: 't',
      sessionId: '0b7c3a52-6a3c-4d1e-9a43-9a1c2c7f3e10',
      resume: false,
      prompt: 'p',
      permissionMode: 'default',
      model: null,
      thoughtLevel: null,
      workspacePath: root,
      proxyBaseUrl: 'http://127.0.0.1:1/s',
      segmentDir: path.join(root, 'seg'),
    });
    assert.equal(launch.command, 'C:\\VSCode\\Code.exe');
    assert.deepEqual(launch.args.slice(0, 2), [script, '-p']);
    assert.equal(launch.env.ELECTRON_RUN_AS_NODE, '1');
  });

  it('Windows: a .cmd whose target is missing is not Claude Code (auto falls back to the reference agent)', () => {
    const shim = 'C:\\tools\\claude.cmd';
    const host = fakeHost('win32', { PATH: 'C:\\tools' }, 'C:\\Users\\ana', { [shim]: '"%dp0%\\node_modules\\x\\claude.exe" %*' });
    assert.equal(chooseAgent('auto', locateClaudeCode('claude', host)), 'reference');
  });

  it("macOS: Homebrew's /opt/homebrew/bin/claude is found when PATH (a GUI app's) lacks it", () => {
    const host = fakeHost('darwin', { PATH: '/usr/bin:/bin' }, '/Users/ana', { '/opt/homebrew/bin/claude': '' });
    assert.equal(locateClaudeCode('claude', host)?.command, '/opt/homebrew/bin/claude');
    assert.equal(locateClaudeCode('claude', { ...host, platform: 'linux' }), undefined, 'a Homebrew place only on macOS');
  });
});

describe('offPeak.agent auto: an installer place counts only when it is safe', () => {
  const brew = '/opt/homebrew/bin/claude';
  const mac = (stats: Record<string, { uid: number; mode: number }>) =>
    fakeHost('darwin', { PATH: '/usr/bin:/bin' }, '/Users/ana', { [brew]: '' }, stats);

  it("item 5: macOS and Linux: claude in an installer place counts only when the file and its folder are the user's or root's and not group- or other-writable", () => {
    assert.equal(locateClaudeCode('claude', mac({}))?.command, brew, "the user's own Homebrew");
    assert.equal(
      locateClaudeCode('claude', mac({ [brew]: { uid: 0, mode: 0o100755 }, '/opt/homebrew/bin': { uid: 0, mode: 0o40755 } }))?.command,
      brew,
      "root's",
    );
    assert.equal(locateClaudeCode('claude', mac({ '/opt/homebrew/bin': { uid: 502, mode: 0o40755 } })), undefined, "another user's folder");
    assert.equal(locateClaudeCode('claude', mac({ [brew]: { uid: 502, mode: 0o100755 } })), undefined, "another user's file");
    assert.equal(locateClaudeCode('claude', mac({ [brew]: { uid: 501, mode: 0o100775 } })), undefined, 'a group-writable file');
    assert.equal(
      locateClaudeCode('claude', mac({ '/opt/homebrew/bin': { uid: 0, mode: 0o40777 } })),
      undefined,
      'an other-writable folder',
    );
    const linux = fakeHost(
      'linux',
      { PATH: '/usr/bin' },
      '/home/ana',
      { '/usr/local/bin/claude': '' },
      { '/usr/local/bin': { uid: 1001, mode: 0o40755 } },
    );
    assert.equal(locateClaudeCode('claude', linux), undefined, "Linux: /usr/local/bin of another user's");
    assert.equal(chooseAgent('auto', locateClaudeCode('claude', linux)), 'reference', 'auto then runs the reference agent');
    assert.equal(
      locateClaudeCode('claude', { ...linux, env: { PATH: '/usr/local/bin' } })?.command,
      '/usr/local/bin/claude',
      'a folder the user put on PATH is their choice',
    );
  });

  it('item 5: Windows: an installer place is taken without a mode check (its files have ACLs, not POSIX owners and modes)', () => {
    const native = 'C:\\Users\\ana\\.local\\bin\\claude.exe';
    const host = fakeHost('win32', { PATH: 'C:\\Windows', PATHEXT: '.EXE' }, 'C:\\Users\\ana', { [native]: '' });
    assert.equal(locateClaudeCode('claude', host)?.command, native);
  });
});

describe('Claude Code without a login (personal mode, its own login)', () => {
  const said = '{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key · Please run /login"}\n';

  it('the task fails saying to run claude once to log in, or to use the model API key', () => {
    const reader = new ClaudeCodeAdapter({ command: 'claude' }).createReader({ ownLogin: true });
    reader.stdout(said);
    const result = reader.result();
    assert.equal(result?.ok, false);
    assert.match(
      result.ok ? '' : result.error,
      /not logged in.*Run `claude` once in a terminal to log in.*Model Credential.*Set Model API Key/s,
    );
  });

  it('item 5: Claude Code found through offPeak.claudeCodePath (not on PATH): "Run … once" names the path it was found at', () => {
    const adapters = agentAdapters(
      {
        referenceAgent: { command: 'node', argsPrefix: [] },
        claudeCommand: () => ({ found: '/opt/tools/claude-code/bin/claude', command: '/opt/tools/claude-code/bin/claude', argsPrefix: [] }),
      } as unknown as HostEngineOptions,
      '/tmp/sessions',
      { timeoutMs: () => 60_000, parkMs: () => undefined },
    );
    const reader = adapters['claude-code']!.createReader({ ownLogin: true });
    reader.stdout(said);
    const result = reader.result();
    assert.match(result?.ok ? '' : (result?.error ?? ''), /Run `\/opt\/tools\/claude-code\/bin\/claude` once in a terminal to log in/);
  });

  it('a plain-text "Not logged in" line before any result counts the same', () => {
    const reader = new ClaudeCodeAdapter({ command: 'claude' }).createReader({ ownLogin: true });
    reader.stdout('Not logged in · Please run /login\n');
    assert.match(JSON.stringify(reader.result()), /Run `claude` once/);
  });

  it("with the proxy's token (not its own login) the same words are not about its login", () => {
    const reader = new ClaudeCodeAdapter({ command: 'claude' }).createReader({ ownLogin: false });
    reader.stdout(said);
    assert.deepEqual(reader.result(), { ok: false, error: 'Invalid API key · Please run /login' });
  });
});

describe("Claude Code's own login, looked for before a task is queued (personal mode)", () => {
  let home: string;
  beforeEach(() => (home = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-claude-login-'))));
  afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

  it("item 5: no credentials file, no account in .claude.json and no key in the environment is a missing login; any of them is one (CLAUDE_CONFIG_DIR's folder when set)", () => {
    assert.equal(claudeLoginSeen({}, home), false);
    fs.writeFileSync(path.join(home, '.claude.json'), JSON.stringify({ numStartups: 1 }));
    assert.equal(claudeLoginSeen({}, home), false, 'a config without an account');
    fs.writeFileSync(path.join(home, '.claude.json'), JSON.stringify({ oauthAccount: { emailAddress: 'a@b.c' } }));
    assert.equal(claudeLoginSeen({}, home), true, 'logged in with an account (macOS keeps the token in its keychain)');
    fs.rmSync(path.join(home, '.claude.json'));
    fs.mkdirSync(path.join(home, '.claude'));
    fs.writeFileSync(path.join(home, '.claude', '.credentials.json'), '{}');
    assert.equal(claudeLoginSeen({}, home), true, 'a credentials file');
    const configDir = path.join(home, 'elsewhere');
    fs.mkdirSync(configDir);
    assert.equal(claudeLoginSeen({ CLAUDE_CONFIG_DIR: configDir }, home), false, "CLAUDE_CONFIG_DIR's folder is the one read");
    assert.equal(claudeLoginSeen({ CLAUDE_CONFIG_DIR: configDir, ANTHROPIC_API_KEY: 'sk' }, home), true, 'a key in the environment');
  });
});
