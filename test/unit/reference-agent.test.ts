import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readEventStream } from '../../src/reference-agent/messages-client';
import { SessionTranscript } from '../../src/reference-agent/session';
import { permissionFor, resolveInWorkspace } from '../../src/reference-agent/tools';

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

  it('treats a stream that ends before message_stop as a retryable error', async () => {
    await assert.rejects(readEventStream(streamOf(ev('message_start', {})), {}), (e: Error & { retryable?: boolean }) => e.retryable === true);
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
    assert.throws(() => resolveInWorkspace(ws, 'link/secret.txt'), /outside the workspace/);
    fs.rmSync(ws, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });
});
