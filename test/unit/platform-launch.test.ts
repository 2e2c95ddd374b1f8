// Launching an agent as the OS would (docs/platforms.md): a Windows batch file (npm's `.cmd`
// shims, one's own wrappers) only through cmd.exe, quoted as cross-spawn quotes it; a `.ps1`
// through PowerShell; never from the working directory. Real files and processes on this
// platform (under the Windows lane: a real .cmd and cmd.exe), the other platforms injected.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commandInvocation, programToRun, type ExecutableHost } from '../../src/core/executable-path';
import { locateClaudeCode, type LocateHost } from '../../src/agent/runtime/claude-code-locate';

const windows = (env: Record<string, string>, files: Record<string, string> = {}): LocateHost => ({
  platform: 'win32',
  env,
  homedir: 'C:\\Users\\ana',
  isFile: (f) => f in files,
  readText: (f) => files[f],
  uid: undefined,
  statOf: () => {
    throw new Error('Windows has no POSIX owner or mode to check');
  },
});

describe('platform: launching an agent program as the OS would', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'launch-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("platform: a .cmd shim gets every argument intact: spaces, quotes, & | ^ < >, an empty one (this platform's own launcher: the .cmd through cmd.exe on Windows, a shell script elsewhere)", () => {
    const script = path.join(dir, 'argv.js');
    const out = path.join(dir, 'argv.json');
    fs.writeFileSync(script, `require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.argv.slice(2)));`);
    let wrapper: string;
    if (process.platform === 'win32') {
      wrapper = path.join(dir, 'claude.cmd');
      fs.writeFileSync(wrapper, `@"${process.execPath}" "${script}" %*\r\n`);
    } else {
      wrapper = path.join(dir, 'claude');
      fs.writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${script}" "$@"\n`, { mode: 0o755 });
    }
    // No `%`: a batch file's %* expands it again (docs/platforms.md, known limits).
    const args = ['-p', 'two words', 'a "quoted" word', 'amp & pipe | caret ^ <less>', ''];
    const program = commandInvocation(wrapper, args);
    const ran = spawnSync(program.file, program.args, {
      windowsVerbatimArguments: program.windowsVerbatimArguments,
      windowsHide: true,
      stdio: 'ignore',
      timeout: 120_000,
    });
    assert.equal(ran.error, undefined, String(ran.error));
    assert.deepEqual(JSON.parse(fs.readFileSync(out, 'utf8')), args);
  });

  it('platform: Windows: a .cmd runs as cmd.exe /d /s /c "<line>" with each argument quoted and its meta characters escaped as cross-spawn does; an npm .bin shim escaped twice (injected platform)', () => {
    const host = { platform: 'win32' as const, env: { ComSpec: 'C:\\Windows\\system32\\cmd.exe' } };
    assert.deepEqual(commandInvocation('C:\\tools\\claude.cmd', ['-p', 'a "b" & c', '100%'], host), {
      file: 'C:\\Windows\\system32\\cmd.exe',
      args: ['/d', '/s', '/c', '"C:\\tools\\claude.cmd ^"-p^" ^"a^ \\^"b\\^"^ ^&^ c^" ^"100^%^""'],
      windowsVerbatimArguments: true,
    });
    const bin = commandInvocation('C:\\repo\\node_modules\\.bin\\claude.cmd', ['a&b'], host);
    assert.equal(bin.args[3], '"C:\\repo\\node_modules\\.bin\\claude.cmd ^^^"a^^^&b^^^""');
    assert.deepEqual(commandInvocation('C:\\tools\\claude.exe', ['a b'], host), {
      file: 'C:\\tools\\claude.exe',
      args: ['a b'],
      windowsVerbatimArguments: false,
    });
    assert.deepEqual(
      commandInvocation('/usr/local/bin/claude.cmd', ['x'], { platform: 'linux', env: {} }).file,
      '/usr/local/bin/claude.cmd',
      'only Windows has batch files',
    );
  });

  it('platform: Windows: a .ps1 runs through PowerShell from the system folder with -File, its arguments as argv (injected platform)', () => {
    assert.deepEqual(commandInvocation('C:\\tools\\claude.ps1', ['-p', 'a b'], { platform: 'win32', env: { SystemRoot: 'D:\\Win' } }), {
      file: 'D:\\Win\\System32\\WindowsPowerShell\\v1.0\\powershell.exe',
      args: ['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-File', 'C:\\tools\\claude.ps1', '-p', 'a b'],
      windowsVerbatimArguments: false,
    });
  });

  it("platform: Windows: offPeak.claudeCodePath naming a .cmd of one's own (not npm's shim) is Claude Code, started through cmd.exe; npm's .ps1 shim runs the program it names (injected platform)", () => {
    const wrapper = 'C:\\tools\\claude-work.cmd';
    const own = locateClaudeCode(
      wrapper,
      windows({ PATH: 'C:\\Windows' }, { [wrapper]: '@call C:\\tools\\real\\claude.exe --settings C:\\work.json %*\r\n' }),
    );
    assert.deepEqual(own, { found: wrapper, command: wrapper, argsPrefix: [] });
    assert.equal(commandInvocation(own!.command, ['-p'], { platform: 'win32', env: {} }).file, 'C:\\Windows\\System32\\cmd.exe');
    const npm = 'C:\\Users\\ana\\AppData\\Roaming\\npm';
    const ps1 = `${npm}\\claude.ps1`;
    const exe = `${npm}\\node_modules\\@anthropic-ai\\claude-code\\bin\\claude.exe`;
    const ps1Text =
      '#!/usr/bin/env pwsh\n$basedir=Split-Path $MyInvocation.MyCommand.Definition -Parent\n& "$basedir/node_modules/@anthropic-ai/claude-code/bin/claude.exe"   $args\nexit $LASTEXITCODE\n';
    assert.deepEqual(locateClaudeCode(ps1, windows({ PATH: 'C:\\Windows' }, { [ps1]: ps1Text, [exe]: '' })), {
      found: ps1,
      command: exe,
      argsPrefix: [],
    });
  });

  it("platform: a program not found says where it looked (PATH's absolute folders, with PATHEXT on Windows), never the working directory (injected platforms)", () => {
    const win: ExecutableHost = {
      platform: 'win32',
      env: { Path: 'C:\\Windows\\system32;.;C:\\tools', PATHEXT: '.EXE;.CMD' },
      isFile: () => false,
    };
    assert.throws(
      () => programToRun('claude', win),
      /claude was not found on PATH: looked for it with \.exe, \.cmd in C:\\Windows\\system32; C:\\tools, never in the working directory/,
    );
    const mac: ExecutableHost = { platform: 'darwin', env: { PATH: '/usr/bin:bin' }, isFile: () => false };
    assert.throws(() => programToRun('claude', mac), /claude was not found on PATH: looked for it in \/usr\/bin, never/);
  });
});
