// A repository and a model working against the user (issue 17 item 6, issue 20 item 4), end to end
// in Node: the REAL reference gateway on loopback in front of the scripted fake model upstream
// (a fixture standing in for the model API), the real engine, and real reference-agent processes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import type { HostEngine } from '../../src/engine/host-engine';
import type { PermissionMode } from '../../src/core/types';
import { startTestEngine, waitFor } from './test-engine';

describe('hostile repositories (real gateway, fake upstream, reference agent processes)', function () {
  let world: GatewayWorld;
  let host: HostEngine | undefined;

  afterEach(async () => {
    await host?.dispose();
    host = undefined;
    await world?.close();
  });

  async function boot(events: RuntimeEvent[] = [], askTimeoutMs?: number, prepare?: (storageDir: string) => void): Promise<HostEngine> {
    world = await startWorld();
    prepare?.(path.join(world.root, 'globalStorage'));
    host = await startTestEngine({
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      askTimeoutMs,
      // A test that waits for the deadline means the deny mode (the default parks the task instead).
      ...(askTimeoutMs !== undefined ? { unansweredQuestion: 'deny' as const } : {}),
      onEvent: (e) => events.push(e),
    });
    await waitFor(() => host!.service.isLeader, 'the lease');
    return host;
  }

  async function runToEnd(h: HostEngine, ws: string, permissionMode: PermissionMode) {
    const created = await h.service.create({ title: 't', prompt: 'do it', permissionMode, workspacePath: ws });
    await waitFor(() => ['completed', 'failed'].includes(h.service.getTask(created.id)!.status), 'the task to end');
    return h.service.getTask(created.id)!;
  }

  it("item 6: a core.fsmonitor command in the repository's .git/config is not run by the files-changed count", async () => {
    const h = await boot();
    const ws = makeGitWorkspace(world.root);
    const marker = path.join(world.root, 'fsmonitor-ran');
    // What a model could have written into .git/config during an earlier task or segment.
    execFileSync('git', ['config', 'core.fsmonitor', `touch '${marker}'; false`], { cwd: ws });
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'hello.txt', content: 'hi\n' } },
      { kind: 'text', text: 'Wrote it.' },
    );
    const done = await runToEnd(h, ws, 'bypassPermissions');
    assert.equal(done.status, 'completed', done.failureReason ?? '');
    assert.equal(done.filesChanged, 1);
    assert.equal(fs.existsSync(marker), false, "git ran the repository's fsmonitor command in the extension host");
  });

  it('item 6: in Accept edits a write to .git/config asks like a command (denied here at its deadline) and the file stays as it was', async () => {
    const events: RuntimeEvent[] = [];
    const h = await boot(events, 1_000);
    const ws = makeGitWorkspace(world.root);
    const config = path.join(ws, '.git', 'config');
    const before = fs.readFileSync(config, 'utf8');
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: '.git/config', content: '[core]\n\tfsmonitor = touch /tmp/pwned\n' } },
      { kind: 'tool_use', name: 'write_file', input: { path: 'src/ok.txt', content: 'fine\n' } },
      { kind: 'text', text: 'Done.' },
    );
    const done = await runToEnd(h, ws, 'acceptEdits');
    assert.equal(done.status, 'completed', done.failureReason ?? '');
    const asked = events.flatMap((e) => (e.type === 'input-needed' ? [e.ask.summary] : []));
    assert.deepEqual(asked.length, 1, `one question, for the .git write only: ${JSON.stringify(asked)}`);
    assert.match(asked[0], /\.git\/config/);
    assert.equal(fs.readFileSync(config, 'utf8'), before, '.git/config unchanged');
    assert.equal(fs.readFileSync(path.join(ws, 'src', 'ok.txt'), 'utf8'), 'fine\n', 'an ordinary edit still needs no question');
  });

  it("item 4 (issue 20): a folder inside a git-ignored directory (npm start's .tools/) counts the files the agent wrote", async () => {
    const h = await boot();
    const clone = makeGitWorkspace(world.root, 'clone');
    fs.writeFileSync(path.join(clone, '.gitignore'), '.tools/\n');
    const ws = path.join(clone, '.tools', 'start', 'folder');
    fs.mkdirSync(ws, { recursive: true });
    fs.writeFileSync(path.join(ws, 'README.md'), '# demo\n');
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'hello.txt', content: 'hi\n' } },
      { kind: 'tool_use', name: 'edit_file', input: { path: 'README.md', old_string: 'demo', new_string: 'demo, edited' } },
      { kind: 'text', text: 'Done.' },
    );
    const done = await runToEnd(h, ws, 'bypassPermissions');
    assert.equal(done.status, 'completed', done.failureReason ?? '');
    assert.equal(done.filesChanged, 2);
  });

  it('item 10: an existing globalStorage readable by others (0755, old 0644 logs and transcripts) is narrowed to 0700/0600, and new logs and transcripts are private', async () => {
    const oldFiles = ['runtime/tasks/old-task/segment-1-1/agent.log', 'reference-agent-sessions/old-session.jsonl'];
    const h = await boot([], undefined, (storage) => {
      for (const file of oldFiles) {
        fs.mkdirSync(path.join(storage, path.dirname(file)), { recursive: true, mode: 0o755 });
        fs.writeFileSync(path.join(storage, file), 'the prompt and what the model read\n', { mode: 0o644 });
      }
      for (const dir of [storage, ...oldFiles.map((f) => path.join(storage, path.dirname(f)))]) fs.chmodSync(dir, 0o755);
    });
    const ws = makeGitWorkspace(world.root);
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'hello.txt', content: 'hi\n' } },
      { kind: 'text', text: 'Wrote it.' },
    );
    const done = await runToEnd(h, ws, 'bypassPermissions');
    assert.equal(done.status, 'completed', done.failureReason ?? '');
    const storage = path.join(world.root, 'globalStorage');
    const readableByOthers: string[] = [];
    const walk = (p: string): void => {
      const stat = fs.lstatSync(p);
      if ((stat.mode & 0o077) !== 0) readableByOthers.push(`${path.relative(storage, p) || '.'} ${(stat.mode & 0o777).toString(8)}`);
      if (stat.isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
    };
    walk(storage);
    assert.deepEqual(readableByOthers, []);
    const logs = fs.readdirSync(path.join(storage, 'runtime', 'tasks', done.id));
    assert.ok(
      logs.some((d) => fs.existsSync(path.join(storage, 'runtime', 'tasks', done.id, d, 'agent.log'))),
      'the new segment wrote its log',
    );
    assert.ok(fs.existsSync(path.join(storage, 'reference-agent-sessions', `${done.sessionId}.jsonl`)), 'the new transcript exists');
  });
});
