import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runTool, type ToolContext } from '../../src/reference-agent/tools';
import { shellDescription, shellInvocation } from '../../src/reference-agent/shell';
import { lineEndingOf, replaceKeepingLineEndings } from '../../src/reference-agent/line-endings';

describe('platform: the reference agent on Windows (its shell and its edits)', () => {
  let ws: string;
  let ctx: ToolContext;
  beforeEach(() => {
    ws = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-platform-'));
    ctx = { workspace: ws, signal: new AbortController().signal, commandTimeoutMs: 60_000 };
  });
  afterEach(() => fs.rmSync(ws, { recursive: true, force: true }));

  it('platform: a multi-line edit written with LF matches a CRLF file, and the file stays CRLF throughout', async () => {
    const file = path.join(ws, 'Program.cs');
    fs.writeFileSync(file, 'class A\r\n{\r\n    int x = 1;\r\n    int y = 2;\r\n}\r\n');
    const edit = await runTool(
      'edit_file',
      {
        path: 'Program.cs',
        old_string: '    int x = 1;\n    int y = 2;\n',
        new_string: '    int x = 10;\n    int z = 3;\n    int y = 20;\n',
      },
      ctx,
    );
    assert.equal(edit.isError, false, edit.content);
    assert.equal(fs.readFileSync(file, 'utf8'), 'class A\r\n{\r\n    int x = 10;\r\n    int z = 3;\r\n    int y = 20;\r\n}\r\n');
  });

  it('platform: an LF file is edited exactly as given (no CR added)', async () => {
    const file = path.join(ws, 'a.ts');
    fs.writeFileSync(file, 'one\ntwo\nthree\n');
    const edit = await runTool('edit_file', { path: 'a.ts', old_string: 'one\ntwo\n', new_string: 'uno\ndos\n' }, ctx);
    assert.equal(edit.isError, false, edit.content);
    assert.equal(fs.readFileSync(file, 'utf8'), 'uno\ndos\nthree\n');
  });

  it("platform: a file's line ending is the one most of its lines end with; an old_string sent with CRLF still matches as given", () => {
    assert.equal(lineEndingOf('a\r\nb\r\nc\n'), '\r\n');
    assert.equal(lineEndingOf('a\nb\nc\r\n'), '\n');
    assert.equal(lineEndingOf('no line end'), '\n');
    assert.deepEqual(replaceKeepingLineEndings('a\r\nb\r\n', 'a\r\nb', 'c\nd'), { count: 1, result: 'c\r\nd\r\n' });
    assert.deepEqual(replaceKeepingLineEndings('a\r\nb\r\n', 'x\ny', 'z'), { count: 0, result: 'a\r\nb\r\n' });
  });

  it('platform: Windows runs a command line with cmd.exe /d /s /c and the line verbatim in quotes, cmd.exe from ComSpec or the system folder (injected platform)', () => {
    const line = 'node -e "console.log(1)" "a b" & echo \'c\'';
    assert.deepEqual(shellInvocation(line, { platform: 'win32', env: { ComSpec: 'C:\\Windows\\system32\\cmd.exe' } }), {
      file: 'C:\\Windows\\system32\\cmd.exe',
      args: ['/d', '/s', '/c', `"${line}"`],
      windowsVerbatimArguments: true,
    });
    // A relative ComSpec would mean the working directory (the task's repository): the system folder instead.
    assert.equal(
      shellInvocation('dir', { platform: 'win32', env: { COMSPEC: 'cmd.exe', SystemRoot: 'D:\\Win' } }).file,
      'D:\\Win\\System32\\cmd.exe',
    );
    assert.deepEqual(shellInvocation('ls "a b"', { platform: 'linux', env: { SHELL: '/bin/bash' } }), {
      file: '/bin/bash',
      args: ['-c', 'ls "a b"'],
      windowsVerbatimArguments: false,
    });
  });

  it('platform: the system prompt names the operating system and the shell (Windows: cmd.exe; macOS and Linux: the POSIX shell; injected platform)', () => {
    assert.match(shellDescription({ platform: 'win32', env: {} }), /Windows.*cmd\.exe/);
    assert.match(shellDescription({ platform: 'darwin', env: { SHELL: '/bin/zsh' } }), /macOS.*\/bin\/zsh -c/);
    assert.match(shellDescription({ platform: 'linux', env: {} }), /Linux.*\/bin\/sh -c/);
  });

  it("platform: run_command hands quoted arguments to the program intact (this platform's own shell: cmd.exe on Windows)", async () => {
    const node = process.execPath;
    const line = `"${node}" -e "console.log(process.argv.slice(1).join('|'))" "a b" c`;
    const result = await runTool('run_command', { command: line }, ctx);
    assert.equal(result.isError, false, result.content);
    assert.equal(result.content.replace(/\r/g, ''), 'exit code 0\na b|c\n');
  });
});
